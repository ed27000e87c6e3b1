"""Surrender (late and early), the no-hole-card game with and without original bets only, charlie, 6-7-8."""

import pytest

from blackjack.engine import RuleSet, allowed_actions

from .conftest import act, refused, results, start

EARLY = RuleSet(surrender="early")


def european(original_bets_only=False, **fields):
    return RuleSet(dealer_peek=False, surrender="none", original_bets_only=original_bets_only, **fields)


# --- surrender -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("bet", "back"), [(10, 5), (7, 3)])
def test_late_surrender_returns_half_the_bet_rounded_down(bet, back):
    state = act(start([("Ts", "6h")], "Tc", "7d", bets={1: bet}), "surrender")
    assert results(state) == [(1, "surrender", back)]
    assert state.dealer_cards == ["Tc", "7d"]
    assert state.hole_revealed


def test_no_surrender_without_the_rule():
    state = start([("Ts", "6h")], "Tc", "7d", rules=RuleSet(surrender="none"))
    assert "surrender" not in allowed_actions(state, 1)
    refused(state, {"action": "surrender", "seat": 1}, "illegal_action")


def test_late_surrender_comes_after_the_peek():
    state = start([("Ts", "6h")], "Tc", "Ad")
    assert state.phase == "settled"
    assert results(state) == [(1, "lose", 0)]


def test_early_surrender_against_a_ten_is_decided_before_the_peek():
    state = start([("Ts", "6h"), ("9s", "9h")], "Tc", "Ad", rules=EARLY)
    assert state.phase == "insurance"
    assert allowed_actions(state, 1) == ["surrender"]
    refused(state, {"action": "surrender", "seat": 1, "accept": 1}, "bad_message")
    state = act(state, {"action": "surrender", "seat": 1})
    assert state.phase == "insurance"
    state = act(state, {"action": "surrender", "seat": 2, "accept": False})
    assert state.phase == "settled"
    assert results(state) == [(1, "surrender", 5), (2, "lose", 0)]


def test_early_surrender_against_an_ace_comes_with_insurance():
    state = start([("Ts", "6h")], "Ac", "Kd", rules=EARLY)
    assert allowed_actions(state, 1) == ["insurance", "surrender"]
    state = act(state, {"action": "surrender", "seat": 1, "accept": True})
    assert state.phase == "insurance"
    state = act(state, {"action": "insurance", "seat": 1, "accept": False})
    assert results(state) == [(1, "surrender", 5)]


def test_declining_early_surrender_plays_on_and_late_surrender_stays_available():
    state = start([("Ts", "6h")], "Tc", "7d", rules=EARLY)
    state = act(state, {"action": "timeout"})
    assert state.phase == "playing"
    assert "surrender" in allowed_actions(state, 1)
    state = act(state, "surrender")
    assert results(state) == [(1, "surrender", 5)]


def test_early_surrender_against_a_small_card_is_a_playing_decision():
    state = start([("Ts", "6h")], "9c", "7d", rules=EARLY)
    assert state.phase == "playing"
    assert "surrender" in allowed_actions(state, 1)


# --- the no-hole-card game -------------------------------------------------------------------------------


def test_the_dealer_takes_the_second_card_after_the_players():
    state = start([("Ts", "8h")], "9c", draws=("Td",), rules=european())
    assert state.dealer_cards == ["9c"]
    assert not state.hole_revealed
    state = act(state, "stand")
    assert state.dealer_cards == ["9c", "Td"]
    assert results(state) == [(1, "lose", 0)]


def test_no_second_card_when_every_hand_has_busted():
    state = act(start([("Ts", "6h")], "9c", draws=("Kd",), rules=european()), "hit")
    assert state.dealer_cards == ["9c"]
    assert results(state) == [(1, "bust", 0)]


@pytest.mark.parametrize(("original_bets_only", "payouts"), [(False, [0, 0]), (True, [0, 10])])
def test_split_bets_against_a_dealer_blackjack(original_bets_only, payouts):
    rules = european(original_bets_only)
    state = start([("8s", "8h")], "Tc", draws=("3d", "9c", "Ad"), rules=rules)
    state = act(state, "split", "stand", "stand")
    assert state.dealer_cards == ["Tc", "Ad"]
    assert [hand.payout for hand in state.seats[1].hands] == payouts
    assert state.seats[1].stake == 20
    expected = ["lose", "push"] if original_bets_only else ["lose", "lose"]
    assert [hand.result for hand in state.seats[1].hands] == expected


@pytest.mark.parametrize(("original_bets_only", "returned"), [(False, 0), (True, 10)])
def test_a_doubled_bet_against_a_dealer_blackjack(original_bets_only, returned):
    state = act(start([("5s", "6h")], "Tc", draws=("9c", "Ad"), rules=european(original_bets_only)), "double")
    assert state.dealer_cards == ["Tc", "Ad"]
    assert state.seats[1].stake == 20
    assert results(state) == [(1, "lose", returned)]


def test_a_blackjack_pushes_and_a_surrendered_hand_loses_all_to_the_dealer_blackjack():
    rules = RuleSet(dealer_peek=False, surrender="late")
    state = start([("As", "Kh"), ("Ts", "6h")], "Tc", draws=("Ad",), rules=rules)
    state = act(state, "surrender")
    assert results(state) == [(1, "push", 10), (2, "lose", 0)]


# --- charlie and the suited 6-7-8 ------------------------------------------------------------------------


def test_charlie_wins_at_once():
    rules = RuleSet(charlie=5)
    state = start([("2s", "3h")], "Tc", "Td", draws=("2d", "3c", "4s"), rules=rules)
    state = act(state, "hit", "hit", "hit")
    assert state.phase == "settled"
    assert results(state) == [(1, "charlie", 20)]
    assert state.dealer_cards == ["Tc", "Td"]


def test_without_charlie_five_cards_play_on():
    state = start([("2s", "3h")], "Tc", "Td", draws=("2d", "3c", "4s"))
    state = act(state, "hit", "hit", "hit")
    assert state.phase == "playing"


def test_charlie_loses_to_a_no_hole_card_dealer_blackjack():
    rules = european(charlie=5)
    state = start([("2s", "3h")], "Tc", draws=("2d", "3c", "4s", "Ad"), rules=rules)
    state = act(state, "hit", "hit", "hit")
    assert results(state) == [(1, "lose", 0)]


def test_suited_678_pays_the_bonus():
    rules = RuleSet(suited_678_bonus="2:1")
    state = act(start([("7h", "6h")], "Tc", "Td", draws=("8h",), rules=rules, bets={1: 5}), "hit")
    assert state.seats[1].hands[0].status == "suited_678"
    assert results(state) == [(1, "win", 15)]


@pytest.mark.parametrize(
    ("cards", "draw", "rules"),
    [
        (("7h", "6h"), "8d", RuleSet(suited_678_bonus="2:1")),  # not one suit
        (("7h", "6h"), "8h", RuleSet()),  # no bonus at this table
    ],
)
def test_21_without_the_bonus_is_an_ordinary_hand(cards, draw, rules):
    state = act(start([cards], "Tc", "Td", draws=(draw,), rules=rules), "hit")
    assert state.seats[1].hands[0].status == "stood"
    assert results(state) == [(1, "win", 20)]


def test_suited_678_does_not_count_after_a_split():
    rules = RuleSet(suited_678_bonus="2:1")
    state = start([("6h", "6d")], "Tc", "Td", draws=("7h", "8h", "6c"), rules=rules)
    state = act(state, "split", "hit")
    assert state.seats[1].hands[0].cards == ["6h", "7h", "8h"]
    assert state.seats[1].hands[0].status == "stood"


def test_original_bets_only_takes_one_original_bet_and_a_bust_stays_lost():
    rules = european(original_bets_only=True)
    state = start([("8s", "8h")], "Tc", draws=("4d", "Tc", "9c", "Ad"), rules=rules)
    state = act(state, "split", "hit", "stand")
    assert [hand.result for hand in state.seats[1].hands] == ["bust", "lose"]
    assert state.seats[1].returned == 0
