from collections import Counter

import pytest

from blackjack.engine import RANKS, SUITS, card_value, hand_value, is_blackjack, new_deck_order


@pytest.mark.parametrize(
    ("card", "value"), [("As", 1), ("2h", 2), ("9d", 9), ("Tc", 10), ("Js", 10), ("Qh", 10), ("Kd", 10)]
)
def test_card_value(card, value):
    assert card_value(card) == value


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        (["As", "6d"], (17, True)),
        (["As", "6d", "Tc"], (17, False)),
        (["As", "Ad"], (12, True)),
        (["As", "Ad", "9c"], (21, True)),
        (["As", "Ad", "Tc", "9c"], (21, False)),
        (["Ts", "Kd"], (20, False)),
        (["Ts", "Kd", "2c"], (22, False)),
        (["5s", "6d"], (11, False)),
        (["As", "Th"], (21, True)),
        ([], (0, False)),
    ],
)
def test_hand_value(cards, expected):
    assert hand_value(cards) == expected


def test_is_blackjack_needs_two_cards_totalling_21():
    assert is_blackjack(["As", "Kd"])
    assert is_blackjack(["Tc", "Ah"])
    assert not is_blackjack(["7s", "7d", "7c"])
    assert not is_blackjack(["As", "9d"])


@pytest.mark.parametrize("decks", [1, 6, 8])
def test_new_deck_order_holds_every_card_once_per_deck(decks):
    shoe = new_deck_order(decks)
    assert len(shoe) == 52 * decks
    counts = Counter(shoe)
    assert set(counts) == {rank + suit for rank in RANKS for suit in SUITS}
    assert set(counts.values()) == {decks}
    assert shoe[:5] == ["As", "Ah", "Ad", "Ac", "2s"]
