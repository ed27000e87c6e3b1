"""Betting, dealing, hit/stand/double, the dealer's drawing rule, payouts, turns and refusals."""

import json

import pytest

from blackjack.engine import RuleSet, allowed_actions, apply, apply_in_place, new_round, replay
from blackjack.engine.round import RoundState
from cards.errors import Refused

from .conftest import act, refused, results, scripted_shoe, start


def betting_round(seats=(1, 2, 3), **kwargs) -> RoundState:
    options = {"rules": RuleSet(), "shoe": scripted_shoe([]), "position": 0, "min_bet": 5, "max_bet": 500}
    return new_round(seats=seats, **(options | kwargs))


# --- betting ---------------------------------------------------------------------------------------------


def test_a_bet_replaces_the_earlier_bet_of_that_seat():
    state = betting_round()
    assert state.phase == "betting"
    assert allowed_actions(state, 1) == ["bet", "sit_out"]
    state = act(state, {"action": "bet", "seat": 1, "amount": 50})
    state = act(state, {"action": "bet", "seat": 1, "amount": 20})
    assert (state.seats[1].bet, state.seats[1].stake) == (20, 20)
    state = act(state, {"action": "sit_out", "seat": 1})
    assert (state.seats[1].bet, state.seats[1].stake, state.seats[1].sitting_out) == (0, 0, True)


@pytest.mark.parametrize("amount", [4, 501, 0, -10])
def test_bets_outside_the_limits_are_bad_amounts(amount):
    refused(betting_round(), {"action": "bet", "seat": 1, "amount": amount}, "bad_amount")


@pytest.mark.parametrize(
    "action",
    [
        {"action": "bet", "seat": 1, "amount": True},
        {"action": "bet", "seat": 1, "amount": 10.0},
        {"action": "bet", "seat": 1, "amount": "10"},
        {"action": "bet", "seat": 1},
        {"action": "bet", "amount": 10},
        {"action": "bet", "seat": 4, "amount": 10},
        {"action": "bet", "seat": True, "amount": 10},
        {"action": "bet", "seat": "1", "amount": 10},
        {"action": "fold", "seat": 1},
        {"seat": 1},
        {"action": None},
        {"action": ["bet"]},
        ["bet", 1, 10],
        "bet",
        None,
    ],
)
def test_malformed_actions_are_bad_messages(action):
    refused(betting_round(), action, "bad_message")


def test_deal_needs_a_bet():
    state = betting_round()
    refused(state, {"action": "deal"}, "illegal_action")
    refused(state, {"action": "timeout"}, "illegal_action")


def test_actions_out_of_phase_are_illegal():
    state = betting_round()
    for name in ["hit", "stand", "double", "split", "surrender"]:
        refused(state, {"action": name, "seat": 1}, "illegal_action")
    refused(state, {"action": "insurance", "seat": 1, "accept": True}, "illegal_action")
    dealt = start([("Ts", "9h")], "7c", "Td")
    refused(dealt, {"action": "bet", "seat": 1, "amount": 10}, "illegal_action")
    refused(dealt, {"action": "sit_out", "seat": 1}, "illegal_action")
    refused(dealt, {"action": "deal"}, "illegal_action")


def test_new_round_checks_its_arguments():
    with pytest.raises(Refused):
        betting_round(seats=[0])
    with pytest.raises(Refused):
        betting_round(seats=[8])
    with pytest.raises(Refused):
        betting_round(seats=[])
    with pytest.raises(Refused):
        betting_round(seats=["a", 1])
    with pytest.raises(Refused):
        betting_round(min_bet=10, max_bet=5)
    with pytest.raises(Refused):
        betting_round(position=10_000)
    with pytest.raises(Refused):
        betting_round(rules={"decks": 6})


# --- the deal --------------------------------------------------------------------------------------------


def test_deal_order_and_seats_without_a_bet_sit_out():
    shoe = scripted_shoe(["2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s"])
    state = new_round(rules=RuleSet(), shoe=shoe, position=1, seats=[5, 2, 7], min_bet=1, max_bet=10)
    state = act(state, {"action": "bet", "seat": 7, "amount": 3}, {"action": "bet", "seat": 2, "amount": 4})
    state = act(state, {"action": "deal"})
    # seat 2, seat 7, dealer up, seat 2, seat 7, hole; starting at index 1.
    assert state.seats[2].hands[0].cards == ["3s", "6s"]
    assert state.seats[7].hands[0].cards == ["4s", "7s"]
    assert state.dealer_cards == ["5s", "8s"]
    assert state.seats[5].hands == []
    assert state.seats[5].sitting_out
    assert state.position == 7
    assert state.turn == (2, 0)
    assert not state.hole_revealed


def test_timeout_in_betting_deals():
    state = betting_round(shoe=scripted_shoe(["Ts", "9c", "8d", "7h"]))
    state = act(state, {"action": "bet", "seat": 2, "amount": 5}, {"action": "timeout"})
    assert state.phase == "playing"
    assert [seat.number for seat in state.seats.values() if seat.hands] == [2]


# --- play and settlement ---------------------------------------------------------------------------------


def test_stand_and_win():
    state = start([("Ts", "9h")], "Tc", "7d")
    assert allowed_actions(state, 1) == ["hit", "stand", "double", "surrender"]
    state = act(state, "stand")
    assert state.phase == "settled"
    assert state.hole_revealed
    assert results(state) == [(1, "win", 20)]
    assert (state.seats[1].stake, state.seats[1].returned) == (10, 20)


def test_push_and_loss():
    state = act(start([("Ts", "8h"), ("Th", "7h")], "Tc", "8d"), "stand", "stand")
    assert results(state) == [(1, "push", 10), (2, "lose", 0)]


def test_hit_then_dealer_draws_and_busts():
    state = start([("Ts", "2h")], "6c", "Td", draws=("5s", "Kd"))
    state = act(state, "hit")
    assert state.turn == (1, 0)
    assert allowed_actions(state, 1) == ["hit", "stand"]
    state = act(state, "stand")
    assert state.dealer_cards == ["6c", "Td", "Kd"]
    assert results(state) == [(1, "win", 20)]


def test_bust_ends_the_hand_and_the_dealer_draws_nothing():
    state = act(start([("Ts", "6h")], "6c", "Td", draws=("9s",)), "hit")
    assert results(state) == [(1, "bust", 0)]
    assert state.dealer_cards == ["6c", "Td"]
    assert state.hole_revealed
    assert state.position == 5


def test_reaching_21_stands_by_itself():
    state = act(start([("5s", "6h"), ("Th", "9h")], "7c", "Td", draws=("Ts",)), "hit")
    assert state.turn == (2, 0)
    assert state.seats[1].hands[0].status == "stood"


def test_double_takes_one_card_for_a_second_bet():
    state = act(start([("5s", "6h")], "6c", "Td", draws=("9s", "8d")), "double")
    hand = state.seats[1].hands[0]
    assert (hand.cards, hand.bet, hand.doubled) == (["5s", "6h", "9s"], 20, True)
    assert results(state) == [(1, "win", 40)]
    assert (state.seats[1].stake, state.seats[1].returned) == (20, 40)


def test_double_can_bust():
    state = act(start([("Ts", "2h")], "6c", "Td", draws=("Ks",)), "double")
    assert results(state) == [(1, "bust", 0)]
    assert state.seats[1].stake == 20


def test_double_and_surrender_only_on_the_first_two_cards():
    state = act(start([("2s", "3h")], "6c", "Td", draws=("4s",)), "hit")
    refused(state, {"action": "double", "seat": 1}, "illegal_action")
    refused(state, {"action": "surrender", "seat": 1}, "illegal_action")
    refused(state, {"action": "split", "seat": 1}, "illegal_action")


@pytest.mark.parametrize(("hits_soft_17", "expected"), [(False, (1, "win", 20)), (True, (1, "lose", 0))])
def test_dealer_soft_17(hits_soft_17, expected):
    rules = RuleSet(dealer_hits_soft_17=hits_soft_17)
    state = act(start([("Ts", "8h")], "6c", "As", draws=("4d",), rules=rules), "stand")
    assert results(state) == [expected]
    assert len(state.dealer_cards) == (3 if hits_soft_17 else 2)


def test_dealer_hard_17_stands_and_16_draws_under_either_rule():
    for hits_soft_17 in (False, True):
        rules = RuleSet(dealer_hits_soft_17=hits_soft_17)
        state = act(start([("Ts", "8h")], "Tc", "7s", rules=rules), "stand")
        assert state.dealer_cards == ["Tc", "7s"]
        state = act(start([("Ts", "8h")], "Tc", "6s", draws=("5s",), rules=rules), "stand")
        assert state.dealer_cards == ["Tc", "6s", "5s"]
        assert results(state) == [(1, "lose", 0)]


@pytest.mark.parametrize(
    ("payout", "bet", "returned"),
    [
        ("3:2", 10, 25),
        ("3:2", 5, 12),
        ("3:2", 1, 2),
        ("6:5", 10, 22),
        ("6:5", 7, 15),
        ("2:1", 5, 15),
        ("1:1", 5, 10),
    ],
)
def test_blackjack_payouts_round_down(payout, bet, returned):
    rules = RuleSet(blackjack_payout=payout)
    state = start([("As", "Kh")], "9c", "7d", rules=rules, bets={1: bet})
    assert state.phase == "settled"
    assert results(state) == [(1, "blackjack", returned)]


def test_blackjack_needs_no_turn_and_the_others_play_on():
    state = start([("As", "Kh"), ("Ts", "7h")], "9c", "Td")
    assert state.turn == (2, 0)
    assert allowed_actions(state, 1) == []
    state = act(state, "stand")
    assert results(state) == [(1, "blackjack", 25), (2, "lose", 0)]


# --- turns and refusals ----------------------------------------------------------------------------------


def test_only_the_hand_whose_turn_it_is_may_act():
    state = start([("Ts", "7h"), ("Th", "6h")], "9c", "Td")
    refused(state, {"action": "stand", "seat": 2}, "not_your_turn")
    refused(state, {"action": "stand", "seat": 1, "hand": 1}, "not_your_turn")
    refused(state, {"action": "stand", "seat": 1, "hand": -1}, "not_your_turn")
    refused(state, {"action": "stand", "seat": 1, "hand": "0"}, "bad_message")
    refused(state, {"action": "stand", "seat": 9}, "bad_message")
    assert allowed_actions(state, 2) == []
    assert allowed_actions(state, 9) == []
    state = act(state, {"action": "stand", "seat": 1, "hand": 0})
    assert state.turn == (2, 0)


def test_timeout_stands_the_current_hand():
    state = act(start([("Ts", "7h"), ("Th", "6h")], "9c", "Td"), {"action": "timeout"})
    assert state.turn == (2, 0)
    assert state.seats[1].hands[0].status == "stood"


def test_nothing_is_accepted_once_settled():
    state = act(start([("Ts", "9h")], "Tc", "7d"), "stand")
    refused(state, {"action": "stand", "seat": 1}, "illegal_action")
    refused(state, {"action": "timeout"}, "illegal_action")
    assert allowed_actions(state, 1) == []


def test_apply_never_changes_its_input_and_in_place_is_the_same_code():
    state = start([("Ts", "2h")], "6c", "Td", draws=("5s", "Kd"))
    before = state.to_dict()
    after = apply(state, {"action": "hit", "seat": 1})
    assert state.to_dict() == before
    apply_in_place(state, {"action": "hit", "seat": 1})
    assert state == after


def test_the_shoe_running_out_is_an_engine_error():
    shoe = ["Ts", "9s", "Td"]
    state = new_round(rules=RuleSet(), shoe=shoe, position=0, seats=[1], min_bet=1, max_bet=10)
    state = act(state, {"action": "bet", "seat": 1, "amount": 1})
    refused(state, {"action": "deal"}, "shoe_exhausted")


# --- serialisation and replay ----------------------------------------------------------------------------


def test_state_round_trips_through_json_at_every_step():
    actions = [
        {"action": "bet", "seat": 1, "amount": 10},
        {"action": "bet", "seat": 3, "amount": 7},
        {"action": "deal"},
        {"action": "split", "seat": 1},
        {"action": "hit", "seat": 1, "hand": 0},
        {"action": "stand", "seat": 1},
        {"action": "double", "seat": 1},
        {"action": "stand", "seat": 3},
    ]
    shoe = scripted_shoe(["8s", "Tc", "6d", "8h", "9c", "Td", "2s", "3s", "4s", "5s", "Kd"])
    state = new_round(rules=RuleSet(), shoe=shoe, position=0, seats=[1, 3], min_bet=1, max_bet=10)
    for action in actions:
        state = apply(state, action)
        text = json.dumps(state.to_dict())
        assert RoundState.from_dict(json.loads(text)) == state
    assert state.phase == "settled"
    assert replay(RuleSet(), shoe, 0, [1, 3], 1, 10, actions) == state


def test_from_dict_refuses_garbage():
    with pytest.raises(Refused) as caught:
        RoundState.from_dict({"phase": "betting"})
    assert caught.value.code == "bad_message"
