"""Provably fair dealing, for every game: commit-reveal seeds and a deterministic shuffle.

Anyone can recompute a deal from its server seed (revealed when the shoe or game is over), the client seed and
the nonce, with nothing but SHA-256 and HMAC-SHA256. The exact algorithm:

1. Server seed: 32 random bytes, written as 64 lowercase hex characters. A table draws each seed one shoe or
   game ahead and publishes its `seed_hash` = SHA-256 of the 32 seed *bytes* (not of the hex text), as 64 hex
   characters, before any player's seed for that deal is known.
2. Client seed: a text. From the players' seeds (each a seed the player chose, or one the server drew) it is
   `combine_client_seeds(seeds)`: take the SHA-256 hex digest of each seed's UTF-8 bytes, sort those digests
   (`seed_digests`, published with the deal), join them with ":" and take the SHA-256 hex digest of that
   text's bytes (`client_seed_of`). (Order-independent; duplicates count; no seeds gives SHA-256 of the empty
   string.) The server seed being fixed first, a player who chose their own seed knows the server could not
   choose the order.
3. Unshuffled order: the game's own (a blackjack shoe's, `blackjack.engine.cards.new_deck_order`; a Durak
   deck's, `durak.engine.cards.new_deck_order`).
4. Random stream: blocks HMAC-SHA256(key = the 32 server seed bytes, message = UTF-8 of
   f"{client_seed}:{nonce}:{counter}") for counter = 0, 1, 2, ... (decimal, no padding). Each 32-byte block
   gives eight 32-bit unsigned integers, big-endian, in order; blocks follow each other.
5. Uniform integer in 0..i: with m = i + 1 and limit = 2**32 - (2**32 mod m), take the next stream integer x,
   drawing again while x >= limit (rejection: no modulo bias); the result is x mod m.
6. Fisher-Yates: for i from n - 1 down to 1, draw j uniform in 0..i and swap cards i and j. Card 0 of the
   result is dealt first.
"""

import hashlib
import hmac
import secrets
from collections.abc import Iterator, Sequence

from cards.errors import Refused

_HEX = frozenset("0123456789abcdefABCDEF")
#: A player's own seed: 1 to 64 of these characters (a player without one gets 32 random hex digits).
MAX_PLAYER_SEED = 64
_PLAYER_SEED_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


def new_server_seed() -> str:
    """A fresh server seed: 32 bytes from `secrets`, as 64 hex characters."""
    return secrets.token_hex(32)


def seed_bytes(server_seed: str) -> bytes:
    """The seed's 32 bytes; Refused(bad_message) unless it is exactly 64 hex characters."""
    if not isinstance(server_seed, str) or len(server_seed) != 64 or not _HEX.issuperset(server_seed):
        raise Refused("bad_message", "the server seed must be 64 hexadecimal characters")
    return bytes.fromhex(server_seed)


def seed_hash(server_seed_hex: str) -> str:
    """SHA-256 of the seed bytes, as 64 hex characters: published before the deal."""
    return hashlib.sha256(seed_bytes(server_seed_hex)).hexdigest()


def is_player_seed(value: object) -> bool:
    """Is `value` a seed a player may choose: 1 to 64 letters, digits, '-', '_' or '.'?"""
    if not isinstance(value, str):
        return False
    return 1 <= len(value) <= MAX_PLAYER_SEED and _PLAYER_SEED_CHARS.issuperset(value)


def seed_digests(seeds: list[str]) -> list[str]:
    """The SHA-256 hex digests of the players' seeds, sorted: published with the deal, so that each player can
    find their own seed's and recompute the client seed from them (`client_seed_of`)."""
    return sorted(hashlib.sha256(seed.encode("utf-8")).hexdigest() for seed in seeds)


def client_seed_of(digests: list[str]) -> str:
    """The client seed from the sorted digests of the players' seeds (step 2)."""
    return hashlib.sha256(":".join(digests).encode("ascii")).hexdigest()


def combine_client_seeds(seeds: list[str]) -> str:
    """One client seed from the players' seeds, the same whatever their order."""
    return client_seed_of(seed_digests(seeds))


def stream(key: bytes, label: str) -> Iterator[int]:
    """Yields the 32-bit unsigned integers of the HMAC-SHA256 stream for the messages f"{label}:{counter}"
    (step 4)."""
    counter = 0
    while True:
        block = hmac.digest(key, f"{label}:{counter}".encode(), "sha256")
        for offset in range(0, 32, 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
        counter += 1


def shuffled_cards(cards: Sequence[str], *, server_seed: str, client_seed: str, nonce: int = 0) -> list[str]:
    """`cards` (a game's unshuffled order) shuffled by steps 4 to 6 with the stream for the messages
    f"{client_seed}:{nonce}:{counter}"; a new list."""
    key = seed_bytes(server_seed)
    if not isinstance(client_seed, str):
        raise Refused("bad_message", "the client seed must be text")
    if type(nonce) is not int or nonce < 0:
        raise Refused("bad_message", "the nonce must be a whole number, 0 or more")
    shuffled = list(cards)
    shuffle(shuffled, stream(key, f"{client_seed}:{nonce}"))
    return shuffled


def shuffle(cards: list[str], numbers: Iterator[int]) -> None:
    """Fisher-Yates with rejection sampling (steps 5 and 6), in place, drawing from `numbers` (a `stream`)."""
    span = 1 << 32
    for i in range(len(cards) - 1, 0, -1):
        m = i + 1
        limit = span - span % m
        x = next(numbers)
        while x >= limit:
            x = next(numbers)
        j = x % m
        cards[i], cards[j] = cards[j], cards[i]
