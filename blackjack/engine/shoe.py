"""The provably fair shoe: the site's commit-reveal seeds and shuffle (`cards.fairness`, steps 1 to 6) on
`decks` 52-card decks, with the cut card and a round that runs out of cards.

3. Unshuffled order (`cards.new_deck_order`): for each deck, ranks A 2 3 4 5 6 7 8 9 T J Q K, and within a
   rank the suits s h d c: As Ah Ad Ac 2s 2h ... Kc, repeated `decks` times.

The cut card: `cut_card_index(decks, penetration)` = floor(52 * decks * penetration) is the index of the first
card not to be dealt in a new round; once a round ends at or past it, the shoe is retired and its seed
revealed. Penetration 0 means a fresh shoe every round.

7. Running out (`dealing_order`): a round that needs a card after the shoe's last goes on, as a dealer's
   would, with the discards. A round whose first card is card `start` (0-based) of the shoe has cards
   0 .. start - 1 as discards (the cards of the shoe's earlier rounds; this round's cards stay on the table).
   They are taken in shoe order and shuffled by steps 5 and 6 with the stream of step 4 for the message
   f"{client_seed}:{nonce}:discards:{start}:{counter}", and dealt in that order after the shoe's last card:
   the round's card at shoe position 52 * decks + k is card k of the shuffled discards. A round that began
   with a fresh shoe (start 0) has no discards; should it ever use up a whole shoe, it is voided and refunded.
"""

import math
from collections.abc import Sequence

from cards.errors import Refused
from cards.fairness import seed_bytes, shuffle, shuffled_cards, stream

from .cards import new_deck_order
from .rules import MAX_DECKS, MAX_PENETRATION, MIN_DECKS, MIN_PENETRATION


def shuffled_shoe(*, server_seed: str, client_seed: str, decks: int, nonce: int = 0) -> list[str]:
    """The shoe's card order for these seeds (`cards.fairness`, steps 3 to 6)."""
    if type(decks) is not int or not MIN_DECKS <= decks <= MAX_DECKS:
        raise Refused("bad_message", f"decks must be {MIN_DECKS} to {MAX_DECKS}")
    return shuffled_cards(
        new_deck_order(decks), server_seed=server_seed, client_seed=client_seed, nonce=nonce
    )


def dealing_order(
    order: Sequence[str], start: int, *, server_seed: str, client_seed: str, nonce: int = 0
) -> tuple[str, ...]:
    """The cards a round beginning at shoe position `start` is dealt from: the whole shoe `order`, then the
    discards (the cards before `start`) shuffled as the module docstring's step 7 says."""
    if type(start) is not int or not 0 <= start <= len(order):
        raise Refused("bad_message", f"a round starts at a card of the shoe (0 to {len(order)})")
    if type(nonce) is not int or nonce < 0:
        raise Refused("bad_message", "the nonce must be a whole number, 0 or more")
    if not isinstance(client_seed, str):
        raise Refused("bad_message", "the client seed must be text")
    discards = list(order[:start])
    shuffle(discards, stream(seed_bytes(server_seed), f"{client_seed}:{nonce}:discards:{start}"))
    return (*order, *discards)


def cut_card_index(decks: int, penetration: float) -> int | None:
    """Index of the first card not dealt in a new round; None for penetration 0 (fresh shoe every round)."""
    if penetration == 0:
        return None
    if not MIN_PENETRATION <= penetration <= MAX_PENETRATION:
        raise Refused("invalid_rules", f"penetration must be 0 or {MIN_PENETRATION} to {MAX_PENETRATION}")
    # The epsilon keeps 52 * 5 * 0.7 at 182 despite binary floating point.
    return math.floor(52 * decks * penetration + 1e-9)
