"""The provably fair Durak deck: the site's commit-reveal seeds and shuffle (`cards.fairness`) on 36 cards.

The server seed (committed by its SHA-256 before the game), the client seed (from the players' seeds,
`cards.fairness.combine_client_seeds`) and the nonce give the deck exactly as `cards.fairness` describes
(steps 1, 2, 4, 5 and 6), with the unshuffled order of `cards.new_deck_order` (6s 6h 6d 6c 7s ... Ac). Card 0
is dealt first (`game.new_game` says how).
"""

from cards.fairness import shuffled_cards

from .cards import new_deck_order


def shuffled_deck(*, server_seed: str, client_seed: str, nonce: int = 0) -> list[str]:
    """The 36-card deck for these seeds, in dealing order."""
    return shuffled_cards(new_deck_order(), server_seed=server_seed, client_seed=client_seed, nonce=nonce)
