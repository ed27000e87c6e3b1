"""Splits, resplits and their limits, split aces, 21 after a split, and the double restrictions."""

import pytest

from blackjack.engine import RuleSet, allowed_actions

from .conftest import act, refused, results, start


def test_split_plays_the_hands_left_to_right_each_taking_its_second_card_in_turn():
    state = start([("8s", "8h")], "6c", "Td", draws=("3s", "Ts", "9c", "Kd"))
    assert "split" in allowed_actions(state, 1)
    state = act(state, "split")
    hands = state.seats[1].hands
    assert [hand.cards for hand in hands] == [["8s", "3s"], ["8h"]]
    assert state.seats[1].stake == 20
    assert state.turn == (1, 0)
    state = act(state, "hit")  # 8 3 T = 21 stands by itself
    assert state.turn == (1, 1)
    assert state.seats[1].hands[1].cards == ["8h", "9c"]
    state = act(state, {"action": "stand", "seat": 1, "hand": 1})
    assert state.dealer_cards == ["6c", "Td", "Kd"]
    assert results(state) == [(1, "win", 20), (1, "win", 20)]
    assert state.seats[1].returned == 40


def test_any_two_ten_value_cards_split():
    state = start([("Ks", "Qh")], "6c", "Td")
    assert "split" in allowed_actions(state, 1)
    state = start([("9s", "Th")], "6c", "Td")
    assert "split" not in allowed_actions(state, 1)
    refused(state, {"action": "split", "seat": 1}, "illegal_action")


@pytest.mark.parametrize("limit", [1, 2, 3, 4])
def test_resplits_stop_at_max_split_hands(limit):
    rules = RuleSet(max_split_hands=limit)
    state = start([("8s", "8h")], "6c", "Td", draws=("8d", "8c", "8s", "8h", "8d", "8c"), rules=rules)
    while "split" in allowed_actions(state, 1):
        state = act(state, "split")
    assert len(state.seats[1].hands) == limit
    refused(state, {"action": "split", "seat": 1}, "illegal_action")
    assert state.seats[1].stake == 10 * limit


def test_split_aces_take_one_card_each():
    state = start([("As", "Ah")], "6c", "Td", draws=("Kd", "5c", "4s"))
    state = act(state, "split")
    assert state.phase == "settled"
    assert [hand.cards for hand in state.seats[1].hands] == [["As", "Kd"], ["Ah", "5c"]]
    assert [hand.status for hand in state.seats[1].hands] == ["stood", "stood"]
    # Ace-king after a split is 21, not a blackjack: it wins 1:1.
    assert results(state) == [(1, "win", 20), (1, "lose", 0)]


def test_aces_are_not_resplit_without_the_rule():
    state = act(start([("As", "Ah")], "6c", "Td", draws=("Ad", "5c", "Ts")), "split")
    assert state.phase == "settled"
    assert len(state.seats[1].hands) == 2


def test_resplit_aces():
    rules = RuleSet(resplit_aces=True)
    state = act(start([("As", "Ah")], "6c", "Td", draws=("Ad", "9c", "8s", "7d", "Ts"), rules=rules), "split")
    assert state.turn == (1, 0)
    assert allowed_actions(state, 1) == ["stand", "split"]
    refused(state, {"action": "hit", "seat": 1}, "illegal_action")
    state = act(state, "split")
    assert state.phase == "settled"
    assert [hand.cards for hand in state.seats[1].hands] == [["As", "9c"], ["Ad", "8s"], ["Ah", "7d"]]


def test_hit_split_aces():
    rules = RuleSet(hit_split_aces=True)
    state = act(start([("As", "Ah")], "6c", "Td", draws=("5d", "9c", "Kc", "Ts"), rules=rules), "split")
    assert allowed_actions(state, 1) == ["hit", "stand"]
    state = act(state, "hit", "stand")
    assert [hand.cards for hand in state.seats[1].hands] == [["As", "5d", "9c"], ["Ah", "Kc"]]
    assert state.phase == "settled"


def test_21_after_splitting_tens_is_not_a_blackjack():
    state = act(start([("Ts", "Kh")], "9c", "Td", draws=("Ad", "Ac")), "split")
    assert state.phase == "settled"
    assert results(state) == [(1, "win", 20), (1, "win", 20)]
    assert [hand.status for hand in state.seats[1].hands] == ["stood", "stood"]


@pytest.mark.parametrize(("das", "can_double"), [(True, True), (False, False)])
def test_double_after_split(das, can_double):
    rules = RuleSet(double_after_split=das)
    state = act(start([("9s", "9h")], "6c", "Td", draws=("2d", "Tc", "9c"), rules=rules), "split")
    assert ("double" in allowed_actions(state, 1)) is can_double
    if can_double:
        state = act(state, "double")
        assert state.seats[1].hands[0].bet == 20
        assert state.seats[1].stake == 30
    else:
        refused(state, {"action": "double", "seat": 1}, "illegal_action")


def test_no_surrender_after_a_split():
    state = act(start([("8s", "8h")], "Tc", "7d", draws=("8d", "8c")), "split")
    assert "surrender" not in allowed_actions(state, 1)
    refused(state, {"action": "surrender", "seat": 1}, "illegal_action")


@pytest.mark.parametrize(
    ("double_on", "cards", "allowed"),
    [
        ("any", ("2s", "3h"), True),
        ("any", ("As", "7h"), True),
        ("9-11", ("5s", "4h"), True),
        ("9-11", ("5s", "6h"), True),
        ("9-11", ("5s", "3h"), False),
        ("9-11", ("As", "8h"), False),
        ("10-11", ("5s", "4h"), False),
        ("10-11", ("4s", "6h"), True),
        ("10-11", ("Ts", "2h"), False),
    ],
)
def test_double_restrictions(double_on, cards, allowed):
    state = start([cards], "6c", "Td", rules=RuleSet(double_on=double_on))
    assert ("double" in allowed_actions(state, 1)) is allowed
    if not allowed:
        refused(state, {"action": "double", "seat": 1}, "illegal_action")
