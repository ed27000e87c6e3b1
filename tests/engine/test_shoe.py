import hashlib
import hmac
import re
from collections import Counter

import pytest

from blackjack.engine import cut_card_index, new_deck_order, shuffled_shoe
from blackjack.engine.shoe import dealing_order
from cards.errors import Refused
from cards.fairness import combine_client_seeds, new_server_seed, seed_hash

SEED = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"


def reference_shuffle(server_seed: str, client_seed: str, decks: int, nonce: int) -> list[str]:
    """The algorithm exactly as the shoe module's docstring states it, written out separately."""
    ranks, suits = "A23456789TJQK", "shdc"
    cards = [rank + suit for _ in range(decks) for rank in ranks for suit in suits]
    return reference_fisher_yates(server_seed, f"{client_seed}:{nonce}", cards)


def reference_fisher_yates(server_seed: str, prefix: str, cards: list[str]) -> list[str]:
    """Steps 4 to 6 of the docstring: the stream of messages f"{prefix}:{counter}" shuffles `cards`."""
    key = bytes.fromhex(server_seed)
    numbers = []
    cards = list(cards)

    def next_number() -> int:
        if not numbers:
            counter = next_number.counter
            next_number.counter += 1
            block = hmac.new(key, f"{prefix}:{counter}".encode(), hashlib.sha256).digest()
            numbers.extend(int.from_bytes(block[k : k + 4], "big") for k in range(28, -1, -4))
        return numbers.pop()

    next_number.counter = 0
    for i in range(len(cards) - 1, 0, -1):
        m = i + 1
        limit = 2**32 - (2**32) % m
        x = next_number()
        while x >= limit:
            x = next_number()
        j = x % m
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def test_new_server_seed_is_64_hex_and_fresh():
    seeds = {new_server_seed() for _ in range(50)}
    assert len(seeds) == 50
    assert all(re.fullmatch(r"[0-9a-f]{64}", seed) for seed in seeds)


def test_seed_hash_is_sha256_of_the_seed_bytes():
    assert seed_hash("00" * 32) == "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    assert seed_hash(SEED) == hashlib.sha256(bytes.fromhex(SEED)).hexdigest()
    assert seed_hash(SEED.upper()) == seed_hash(SEED)


@pytest.mark.parametrize("bad", ["", "00" * 31, "00" * 33, "zz" * 32, " " + "00" * 32, None, 12])
def test_bad_seeds_are_refused(bad):
    with pytest.raises(Refused) as caught:
        seed_hash(bad)
    assert caught.value.code == "bad_message"


@pytest.mark.parametrize(("client_seed", "decks", "nonce"), [("alice", 1, 0), ("", 6, 3), ("é 🂡", 8, 12)])
def test_shuffle_matches_the_documented_algorithm(client_seed, decks, nonce):
    shoe = shuffled_shoe(server_seed=SEED, client_seed=client_seed, decks=decks, nonce=nonce)
    assert shoe == reference_shuffle(SEED, client_seed, decks, nonce)
    assert Counter(shoe) == Counter(new_deck_order(decks))


def test_shuffle_is_pinned():
    # Published shoes must stay verifiable: this order may never change.
    shoe = shuffled_shoe(server_seed=SEED, client_seed="pinned", decks=1)
    assert shoe[:10] == ["As", "7d", "4h", "5d", "6h", "2d", "Qh", "3h", "6s", "7s"]


def test_every_input_changes_the_order():
    base = shuffled_shoe(server_seed=SEED, client_seed="a", decks=6)
    assert shuffled_shoe(server_seed=SEED, client_seed="a", decks=6) == base
    assert shuffled_shoe(server_seed=SEED, client_seed="b", decks=6) != base
    assert shuffled_shoe(server_seed=SEED, client_seed="a", decks=6, nonce=1) != base
    assert shuffled_shoe(server_seed="ff" * 32, client_seed="a", decks=6) != base


@pytest.mark.parametrize(
    "kwargs",
    [
        {"decks": 0},
        {"decks": 9},
        {"decks": True},
        {"nonce": -1},
        {"nonce": "1"},
        {"client_seed": 5},
        {"server_seed": "xyz"},
    ],
)
def test_bad_shuffle_arguments_are_refused(kwargs):
    arguments = {"server_seed": SEED, "client_seed": "a", "decks": 1} | kwargs
    with pytest.raises(Refused) as caught:
        shuffled_shoe(**arguments)
    assert caught.value.code == "bad_message"


def test_client_seeds_combine_in_any_order():
    combined = combine_client_seeds(["alice", "bob", "carol"])
    assert combined == combine_client_seeds(["carol", "alice", "bob"])
    assert combined != combine_client_seeds(["alice", "bob"])
    assert combine_client_seeds(["alice", "alice"]) != combine_client_seeds(["alice"])
    # Written out from the documented definition.
    digests = sorted(hashlib.sha256(seed.encode()).hexdigest() for seed in ["alice", "bob", "carol"])
    assert combined == hashlib.sha256(":".join(digests).encode()).hexdigest()
    assert combine_client_seeds([]) == hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize(
    ("decks", "penetration", "index"),
    [(6, 0.75, 234), (1, 0.9, 46), (1, 0.5, 26), (8, 0.8, 332), (5, 0.7, 182), (2, 0.65, 67)],
)
def test_cut_card_index(decks, penetration, index):
    assert cut_card_index(decks, penetration) == index


def test_no_cut_card_for_a_fresh_shoe_every_round():
    assert cut_card_index(6, 0) is None
    with pytest.raises(Refused):
        cut_card_index(6, 0.2)


@pytest.mark.parametrize(
    ("client_seed", "decks", "nonce", "start"), [("alice", 1, 0, 40), ("", 6, 3, 250), ("x", 2, 1, 1)]
)
def test_a_round_that_runs_out_goes_on_with_the_discards_reshuffled(client_seed, decks, nonce, start):
    order = shuffled_shoe(server_seed=SEED, client_seed=client_seed, decks=decks, nonce=nonce)
    dealt = dealing_order(order, start, server_seed=SEED, client_seed=client_seed, nonce=nonce)
    assert dealt[: len(order)] == tuple(order)  # the shoe itself is dealt as before
    expected = reference_fisher_yates(SEED, f"{client_seed}:{nonce}:discards:{start}", order[:start])
    assert dealt[len(order) :] == tuple(expected)
    # Only the discards come back: the cards of the round itself stay on the table.
    assert Counter(dealt[len(order) :]) == Counter(order[:start])


def test_the_discards_shuffle_is_pinned_and_depends_on_the_round_start():
    order = shuffled_shoe(server_seed=SEED, client_seed="pinned", decks=1)
    after = dealing_order(order, 40, server_seed=SEED, client_seed="pinned")[52:]
    assert after[:6] == ("Js", "2d", "5d", "9s", "Jd", "Kh")
    other = dealing_order(order, 41, server_seed=SEED, client_seed="pinned")[52:]
    assert other[:40] != after  # another start: another shuffle, not the same one with a card added


def test_a_fresh_shoe_has_no_discards():
    order = shuffled_shoe(server_seed=SEED, client_seed="a", decks=1)
    assert dealing_order(order, 0, server_seed=SEED, client_seed="a") == tuple(order)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"start": -1},
        {"start": 53},
        {"start": True},
        {"nonce": -1},
        {"client_seed": None},
        {"server_seed": "xy"},
    ],
)
def test_bad_discard_arguments_are_refused(kwargs):
    order = shuffled_shoe(server_seed=SEED, client_seed="a", decks=1)
    arguments = {"start": 10, "server_seed": SEED, "client_seed": "a", "nonce": 0} | kwargs
    start = arguments.pop("start")
    with pytest.raises(Refused) as caught:
        dealing_order(order, start, **arguments)
    assert caught.value.code == "bad_message"
