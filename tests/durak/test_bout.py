"""A bout: leading, beating, throwing in, taking, the limits, the attack types and the refill."""

from dataclasses import replace

import pytest

from durak.engine import DurakRules, attackers, legal_actions, new_deck_order, new_game, thrower, throwers

from .conftest import act, all_cards, position, refused, scripted_deck

# Trump clubs. Seat 0 leads (first_attacker), seat 1 defends.
TWO = [["6s", "6d", "7h", "9d", "Ts", "7c"], ["7s", "6h", "8d", "6c", "Ks", "Qc"]]
TALON = ["As", "Ah", "Ad", "Kh", "Kd", "Qs"]


def two_players(**options) -> object:
    deck = scripted_deck(TWO, trump="Tc", talon=TALON)
    return new_game(DurakRules(players=2, **options), deck, first_attacker=0)


def test_a_higher_card_of_the_suit_or_a_trump_beats():
    state = act(two_players(), ("attack", 0, "6s"))
    refused(state, ("beat", 1, "6h", "6s"), "cannot_beat")
    refused(state, ("beat", 0, "7s", "6s"), "not_your_turn")
    refused(state, ("beat", 1, "Qd", "6s"), "not_in_hand")
    refused(state, ("beat", 1, "7s", "9d"), "illegal_action")
    assert act(state, ("beat", 1, "7s", "6s")).table == (("6s", "7s"),)
    assert act(state, ("beat", 1, "6c", "6s")).table == (("6s", "6c"),)


def test_a_trump_is_beaten_only_by_a_higher_trump():
    state = act(two_players(), ("attack", 0, "7c"))
    refused(state, ("beat", 1, "6c", "7c"), "cannot_beat")
    refused(state, ("beat", 1, "Ks", "7c"), "cannot_beat")
    assert act(state, ("beat", 1, "Qc", "7c")).table == (("7c", "Qc"),)


def test_only_the_principal_attacker_leads():
    state = two_players()
    refused(state, ("attack", 1, "7s"), "not_your_turn")
    refused(state, ("done", 0), "illegal_action")
    refused(state, ("take", 1), "illegal_action")


def test_cards_of_a_rank_on_the_table_are_thrown_in_and_done_closes_the_bout():
    state = act(two_players(), ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    refused(state, ("attack", 0, "9d"), "rank_not_on_table")
    refused(state, ("done", 1), "not_your_turn")
    state = act(
        state, ("attack", 0, "7h"), ("beat", 1, "6c", "7h"), ("attack", 0, "6d"), ("beat", 1, "8d", "6d")
    )
    state = act(state, ("done", 0))
    assert state.table == ()
    assert sorted(state.discard) == sorted(["6s", "7s", "7h", "6c", "6d", "8d"])
    # Refill: the attacker first (three cards), the defender last (three).
    assert state.hands[0] == ("9d", "Ts", "7c", "As", "Ah", "Ad")
    assert state.hands[1] == ("6h", "Ks", "Qc", "Kh", "Kd", "Qs")
    # The defender beat the attack: they lead the next bout.
    assert (state.attacker, state.defender, state.bout) == (1, 0, 1)


def test_after_a_take_the_attackers_throw_in_and_the_defender_loses_the_turn():
    state = act(two_players(), ("attack", 0, "6s"), ("take", 1))
    refused(state, ("beat", 1, "7s", "6s"), "illegal_action")
    refused(state, ("take", 1), "illegal_action")
    state = act(state, ("attack", 0, "6d"), ("done", 0))
    assert sorted(state.hands[1]) == sorted([*TWO[1], "6s", "6d"])
    assert state.hands[0] == ("7h", "9d", "Ts", "7c", "As", "Ah")
    assert (state.attacker, state.defender) == (0, 1)  # the defender's turn to attack is skipped
    assert state.limit == 6


def test_the_defender_cannot_take_when_every_card_is_beaten():
    state = act(two_players(), ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    refused(state, ("take", 1), "illegal_action")


# Limits: seat 0 leads with the lowest trump (6c; trump clubs).
LIMITS = [["6s", "6h", "6d", "6c", "8h", "8d"], ["8s", "Kh", "Kd", "9h", "Qd", "7c"]]


def five_attacks(limit: str):
    state = new_game(DurakRules(players=2, limit=limit), scripted_deck(LIMITS, trump="Ac"))
    assert state.attacker == 0
    return act(
        state,
        ("attack", 0, "6s"),
        ("beat", 1, "8s", "6s"),
        ("attack", 0, "6h"),
        ("beat", 1, "Kh", "6h"),
        ("attack", 0, "6d"),
        ("beat", 1, "Kd", "6d"),
        ("attack", 0, "8h"),
        ("beat", 1, "9h", "8h"),
        ("attack", 0, "8d"),
    )


def test_five_in_the_first_bout():
    state = five_attacks("five_first_bout")
    assert state.limit == 5
    refused(state, ("attack", 0, "6c"), "limit_reached")
    state = act(state, ("beat", 1, "Qd", "8d"))
    assert state.table == ()  # the limit reached and every card beaten: the bout closes by itself
    assert state.limit == 6  # later bouts allow six


def test_six_in_the_first_bout_then_the_bout_closes_by_itself():
    state = act(five_attacks("six"), ("attack", 0, "6c"), ("beat", 1, "Qd", "8d"))
    assert len(state.table) == 6
    state = act(state, ("beat", 1, "7c", "6c"))
    assert (state.table, len(state.discard), state.bout) == ((), 12, 1)


def test_never_more_attacking_cards_than_the_defender_held():
    rules = DurakRules(players=2)
    state = position(rules, [["6s", "6h", "6d", "7s", "7h"], ["8s", "8h"]], "Ac", attacker=0)
    assert state.limit == 2
    state = act(state, ("attack", 0, "6s"), ("attack", 0, "6h"))
    refused(state, ("attack", 0, "6d"), "limit_reached")
    state = act(state, ("beat", 1, "8s", "6s"), ("beat", 1, "8h", "6h"))
    assert state.finished
    assert (state.out, state.fool) == ((1,), 0)


@pytest.mark.parametrize(("limit", "allowed"), [("six", 6), ("no_limit", 8)])
def test_no_limit_allows_as_many_cards_as_the_defender_holds(limit, allowed):
    rules = DurakRules(players=2, limit=limit)
    attacker = ["6s", "6h", "6d", "7s", "7h", "7d", "8s"]
    defender = ["6c", "7c", "8c", "9c", "Tc", "Jc", "Qc", "Kc"]
    state = position(rules, [attacker, defender], "Ac", attacker=0)
    assert state.limit == allowed
    state = act(
        state,
        ("attack", 0, "6s"),
        ("beat", 1, "6c", "6s"),
        ("attack", 0, "6h"),
        ("beat", 1, "7c", "6h"),
        ("attack", 0, "6d"),
        ("beat", 1, "8c", "6d"),
        ("attack", 0, "7s"),
        ("attack", 0, "7h"),
        ("attack", 0, "7d"),
    )
    if limit == "six":
        refused(state, ("attack", 0, "8s"), "limit_reached")
        return
    state = act(
        state,
        ("attack", 0, "8s"),
        ("beat", 1, "9c", "7s"),
        ("beat", 1, "Tc", "7h"),
        ("beat", 1, "Jc", "7d"),
        ("beat", 1, "Qc", "8s"),
    )
    # Seat 0 has no card left: they are done, the bout closes, they are out and seat 1 is the fool.
    assert (state.finished, state.out, state.fool) == (True, (0,), 1)


def test_a_defender_who_took_is_attacked_up_to_what_they_hold_without_a_limit():
    state = new_game(
        DurakRules(players=2, limit="no_limit"), scripted_deck(TWO, trump="Tc", talon=TALON), first_attacker=0
    )
    state = act(state, ("attack", 0, "6s"), ("take", 1), ("attack", 0, "6d"), ("done", 0))
    assert (len(state.hands[1]), state.limit) == (8, 8)


# Four players, trump clubs and no club in a hand: seat 0 leads (6s is the lowest card) against seat 1.
FOUR = [
    ["6s", "7h", "8d", "9s", "Ts", "Js"],
    ["7s", "8h", "9d", "Qs", "Qh", "Qd"],
    ["6h", "6d", "7d", "8s", "9h", "Th"],
    ["Ks", "Kh", "Kd", "As", "Ah", "Ad"],
]
FOUR_TALON = ["6c", "7c", "8c", "9c", "Tc", "Jc", "Qc", "Kc"]


def four_players(attack: str):
    state = new_game(DurakRules(players=4, attack=attack), scripted_deck(FOUR, trump="Ac", talon=FOUR_TALON))
    assert (state.attacker, state.defender) == (0, 1)
    return state


def test_one_side_only_the_principal_attacker_adds_cards():
    state = act(four_players("one_side"), ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    assert attackers(state) == [0]
    refused(state, ("attack", 2, "6h"), "not_your_turn")
    refused(state, ("done", 2), "not_your_turn")
    state = act(state, ("done", 0))
    assert (state.table, state.attacker, state.defender) == ((), 1, 2)


def test_neighbours_the_attacker_and_the_defenders_left_add_at_once_and_a_beat_reopens():
    state = act(four_players("neighbours"), ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    assert attackers(state) == [0, 2]
    assert throwers(state) == [0, 2]
    refused(state, ("attack", 3, "Ks"), "not_your_turn")
    # Seat 2 need not wait for seat 0 to be done: whoever comes first adds.
    state = act(state, ("attack", 2, "6h"), ("beat", 1, "Qh", "6h"), ("done", 2))
    assert (throwers(state), state.done) == ([0], (2,))
    refused(state, ("attack", 2, "8s"), "not_your_turn")  # done until the next beat
    refused(state, ("done", 2), "not_your_turn")
    assert legal_actions(state, 2) == []
    state = act(state, ("attack", 0, "7h"), ("beat", 1, "8h", "7h"))
    assert (throwers(state), state.done) == ([0, 2], ())  # a new rank on the table: everyone may add again
    state = act(state, ("attack", 2, "8s"), ("beat", 1, "Qs", "8s"), ("done", 0))
    assert state.table != ()  # seat 2 may still add
    state = act(state, ("done", 2))
    assert state.table == ()
    # Refill: the principal attacker, the other attackers clockwise, the defender last.
    assert state.hands[0][-2:] == ("6c", "7c")
    assert state.hands[2][-2:] == ("8c", "9c")
    assert state.hands[3] == tuple(FOUR[3])
    assert state.hands[1][-4:] == ("Tc", "Jc", "Qc", "Kc")
    assert (state.attacker, state.defender) == (1, 2)


def test_the_first_to_arrive_takes_the_last_place_of_the_bout():
    state = new_game(
        DurakRules(players=4, attack="neighbours", limit="five_first_bout"),
        scripted_deck(FOUR, trump="Ac", talon=FOUR_TALON),
    )
    state = act(state, ("attack", 0, "6s"), ("beat", 1, "7s", "6s"), ("attack", 2, "6h"), ("attack", 2, "6d"))
    state = act(state, ("beat", 1, "8h", "6h"), ("attack", 0, "8d"))
    assert (len(state.table), state.limit) == (4, 5)
    # Both hold a 7 (a rank on the table); seat 2's comes first and fills the bout.
    assert {"action": "attack", "player": 0, "card": "7h"} in legal_actions(state, 0)
    assert {"action": "attack", "player": 2, "card": "7d"} in legal_actions(state, 2)
    state = act(state, ("attack", 2, "7d"))
    refused(state, ("attack", 0, "7h"), "limit_reached")
    refused(state, ("attack", 3, "Ks"), "not_your_turn")
    assert legal_actions(state, 0) == [{"action": "done", "player": 0}]
    assert legal_actions(state, 2) == [{"action": "done", "player": 2}]


def test_every_attacker_who_may_add_is_offered_cards_and_done_in_the_rules_order():
    state = act(four_players("all_sides"), ("attack", 0, "6s"))
    assert throwers(state) == [0, 2, 3]
    assert thrower(state) == 0  # the rules' order: who moves first when bots play each other
    assert legal_actions(state, 2) == [
        {"action": "attack", "player": 2, "card": "6h"},
        {"action": "attack", "player": 2, "card": "6d"},
        {"action": "done", "player": 2},
    ]
    assert legal_actions(state, 3) == [{"action": "done", "player": 3}]
    assert {a["action"] for a in legal_actions(state, 1)} == {"beat", "take"}
    # Before the lead only the principal attacker plays.
    refused(four_players("all_sides"), ("done", 2), "not_your_turn")
    assert legal_actions(four_players("all_sides"), 2) == []


def test_all_sides_everyone_but_the_defender_in_any_order():
    state = act(four_players("all_sides"), ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    assert attackers(state) == [0, 2, 3]
    state = act(state, ("done", 3))
    refused(state, ("done", 3), "not_your_turn")
    refused(state, ("attack", 3, "Ks"), "not_your_turn")
    state = act(state, ("done", 2))
    assert [a["action"] for a in legal_actions(state, 0)] == ["attack", "done"]
    state = act(state, ("done", 0))
    assert (state.table, state.bout, state.attacker) == ((), 1, 1)


def test_a_card_of_a_rank_not_on_the_table_is_refused_to_every_attacker():
    state = act(four_players("all_sides"), ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    refused(state, ("attack", 3, "Ks"), "rank_not_on_table")
    refused(state, ("attack", 0, "Js"), "rank_not_on_table")
    assert [a["action"] for a in legal_actions(state, 3)] == ["done"]


def test_all_sides_order_starts_at_the_defenders_left():
    state = new_game(DurakRules(players=5), new_deck_order(), first_attacker=3)
    assert (state.attacker, state.defender, attackers(state)) == (3, 4, [3, 0, 1, 2])
    assert attackers(replace(state, out=(1,))) == [3, 0, 2]


def test_refill_stops_when_the_talon_runs_out_defender_last():
    rules = DurakRules(players=3)
    hands = [
        ["6s", "Js", "Qs", "Ks", "As", "9d"],
        ["7s", "8s", "9s", "Ts", "Jh", "Qh"],
        ["6h", "Kh", "Ah", "8d", "Td", "Jd"],
    ]
    state = position(rules, hands, "Ac", attacker=0, talon=["6c", "7c", "Ac"])
    state = act(state, ("attack", 0, "6s"), ("beat", 1, "7s", "6s"), ("done", 0))
    state = act(state, ("attack", 2, "6h"), ("beat", 1, "Jh", "6h"), ("done", 2), ("done", 0))
    assert state.hands[0][-1] == "6c"
    assert state.hands[2][-1] == "7c"
    assert len(state.hands[1]) == 5
    assert state.hands[1][-1] == "Ac"
    assert state.talon == ()
    assert sorted(all_cards(state)) == sorted(new_deck_order())
