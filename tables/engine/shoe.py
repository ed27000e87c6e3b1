"""The provably fair shoe.

Anyone can recompute a shoe from its server seed (revealed when the shoe is retired), the client seed and the
nonce, with nothing but SHA-256 and HMAC-SHA256. The exact algorithm:

1. Server seed: 32 random bytes, written as 64 lowercase hex characters. A table draws each shoe's seed one
   shoe ahead and publishes its `seed_hash` = SHA-256 of the 32 seed *bytes* (not of the hex text), as 64 hex
   characters, before any player's seed for that shoe is known.
2. Client seed: a text. From the seeds of the players seated when the shoe is shuffled (each the seed the
   player sat down with, or one the server drew) it is `combine_client_seeds(seeds)`: take the SHA-256 hex
   digest of each seed's UTF-8 bytes, sort those digests (`seed_digests`, published with the shoe), join them
   with ":" and take the SHA-256 hex digest of that text's bytes (`client_seed_of`). (Order-independent;
   duplicates count; no seeds gives SHA-256 of the empty string.) The server seed being fixed first, a player
   who chose their own seed knows the server could not choose the order.
3. Unshuffled order (`cards.new_deck_order`): for each deck, ranks A 2 3 4 5 6 7 8 9 T J Q K, and within a
   rank the suits s h d c: As Ah Ad Ac 2s 2h ... Kc, repeated `decks` times.
4. Random stream: blocks HMAC-SHA256(key = the 32 server seed bytes, message = UTF-8 of
   f"{client_seed}:{nonce}:{counter}") for counter = 0, 1, 2, ... (decimal, no padding). Each 32-byte block
   gives eight 32-bit unsigned integers, big-endian, in order; blocks follow each other.
5. Uniform integer in 0..i: with m = i + 1 and limit = 2**32 - (2**32 mod m), take the next stream integer x,
   drawing again while x >= limit (rejection: no modulo bias); the result is x mod m.
6. Fisher-Yates: for i from n - 1 down to 1, draw j uniform in 0..i and swap cards i and j. Card 0 of the
   result is dealt first.

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

import hashlib
import hmac
import math
import secrets
from collections.abc import Sequence

from .cards import new_deck_order
from .errors import EngineError
from .rules import MAX_DECKS, MAX_PENETRATION, MIN_DECKS, MIN_PENETRATION

_HEX = frozenset("0123456789abcdefABCDEF")


def new_server_seed() -> str:
    """A fresh server seed: 32 bytes from `secrets`, as 64 hex characters."""
    return secrets.token_hex(32)


def seed_bytes(server_seed: str) -> bytes:
    """The seed's 32 bytes; EngineError(bad_message) unless it is exactly 64 hex characters."""
    if not isinstance(server_seed, str) or len(server_seed) != 64 or not _HEX.issuperset(server_seed):
        raise EngineError("bad_message", "the server seed must be 64 hexadecimal characters")
    return bytes.fromhex(server_seed)


def seed_hash(server_seed_hex: str) -> str:
    """SHA-256 of the seed bytes, as 64 hex characters: published before the shoe is dealt."""
    return hashlib.sha256(seed_bytes(server_seed_hex)).hexdigest()


#: A player's own seed: 1 to 64 of these characters (a seated player without one gets 32 random hex digits).
MAX_PLAYER_SEED = 64
_PLAYER_SEED_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


def is_player_seed(value: object) -> bool:
    """Is `value` a seed a player may choose: 1 to 64 letters, digits, '-', '_' or '.'?"""
    if not isinstance(value, str):
        return False
    return 1 <= len(value) <= MAX_PLAYER_SEED and _PLAYER_SEED_CHARS.issuperset(value)


def seed_digests(seeds: list[str]) -> list[str]:
    """The SHA-256 hex digests of the players' seeds, sorted: published with the shoe, so that each player can
    find their own seed's and recompute the client seed from them (`client_seed_of`)."""
    return sorted(hashlib.sha256(seed.encode("utf-8")).hexdigest() for seed in seeds)


def client_seed_of(digests: list[str]) -> str:
    """The client seed from the sorted digests of the players' seeds (step 2)."""
    return hashlib.sha256(":".join(digests).encode("ascii")).hexdigest()


def combine_client_seeds(seeds: list[str]) -> str:
    """One client seed from the players' seeds, the same whatever their order."""
    return client_seed_of(seed_digests(seeds))


def _stream(key: bytes, label: str):
    """Yields the 32-bit unsigned integers of the HMAC-SHA256 stream for the messages f"{label}:{counter}"
    (see the module docstring, step 4)."""
    counter = 0
    while True:
        block = hmac.digest(key, f"{label}:{counter}".encode(), "sha256")
        for offset in range(0, 32, 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
        counter += 1


def shuffled_shoe(*, server_seed: str, client_seed: str, decks: int, nonce: int = 0) -> list[str]:
    """The shoe's card order for these seeds (module docstring, steps 3 to 6)."""
    if type(decks) is not int or not MIN_DECKS <= decks <= MAX_DECKS:
        raise EngineError("bad_message", f"decks must be {MIN_DECKS} to {MAX_DECKS}")
    return shuffled_cards(
        new_deck_order(decks), server_seed=server_seed, client_seed=client_seed, nonce=nonce
    )


def shuffled_cards(cards: Sequence[str], *, server_seed: str, client_seed: str, nonce: int = 0) -> list[str]:
    """`cards` (any unshuffled order, e.g. another game's deck) shuffled by steps 4 to 6 of the module
    docstring with the stream for the messages f"{client_seed}:{nonce}:{counter}"; a new list."""
    key = seed_bytes(server_seed)
    if not isinstance(client_seed, str):
        raise EngineError("bad_message", "the client seed must be text")
    if type(nonce) is not int or nonce < 0:
        raise EngineError("bad_message", "the nonce must be a whole number, 0 or more")
    shuffled = list(cards)
    _shuffle(shuffled, _stream(key, f"{client_seed}:{nonce}"))
    return shuffled


def dealing_order(
    order: Sequence[str], start: int, *, server_seed: str, client_seed: str, nonce: int = 0
) -> tuple[str, ...]:
    """The cards a round beginning at shoe position `start` is dealt from: the whole shoe `order`, then the
    discards (the cards before `start`) shuffled as the module docstring's step 7 says."""
    if type(start) is not int or not 0 <= start <= len(order):
        raise EngineError("bad_message", f"a round starts at a card of the shoe (0 to {len(order)})")
    if type(nonce) is not int or nonce < 0:
        raise EngineError("bad_message", "the nonce must be a whole number, 0 or more")
    if not isinstance(client_seed, str):
        raise EngineError("bad_message", "the client seed must be text")
    discards = list(order[:start])
    _shuffle(discards, _stream(seed_bytes(server_seed), f"{client_seed}:{nonce}:discards:{start}"))
    return (*order, *discards)


def _shuffle(cards: list[str], stream) -> None:
    """Fisher-Yates with rejection sampling (module docstring, steps 5 and 6), in place."""
    span = 1 << 32
    for i in range(len(cards) - 1, 0, -1):
        m = i + 1
        limit = span - span % m
        x = next(stream)
        while x >= limit:
            x = next(stream)
        j = x % m
        cards[i], cards[j] = cards[j], cards[i]


def cut_card_index(decks: int, penetration: float) -> int | None:
    """Index of the first card not dealt in a new round; None for penetration 0 (fresh shoe every round)."""
    if penetration == 0:
        return None
    if not MIN_PENETRATION <= penetration <= MAX_PENETRATION:
        raise EngineError("invalid_rules", f"penetration must be 0 or {MIN_PENETRATION} to {MAX_PENETRATION}")
    # The epsilon keeps 52 * 5 * 0.7 at 182 despite binary floating point.
    return math.floor(52 * decks * penetration + 1e-9)
