"""Perevodnoy (the transfer), Passport (passport ranks, forced take, promotion) and the match over games."""

import pytest

from cards.errors import Refused
from durak.engine import (
    DurakRules,
    legal_actions,
    new_deck_order,
    new_game,
    new_match,
    record_game,
    start_game,
    thrower,
)
from durak.engine.match import Match

from .conftest import act, position, refused, scripted_deck

PEREVODNOY = DurakRules(players=3, variant="perevodnoy")
# Trump clubs; seat 0 leads (first_attacker).
THREE = [
    ["6s", "7h", "8d", "9s", "Ts", "Js"],
    ["6h", "8h", "9d", "Qs", "Qh", "Qd"],
    ["6d", "7d", "8s", "9h", "Th", "Jd"],
]


def three(rules: DurakRules):
    return new_game(rules, scripted_deck(THREE, trump="Ac"), first_attacker=0)


def test_the_defender_transfers_with_a_card_of_the_same_rank():
    state = act(three(PEREVODNOY), ("attack", 0, "6s"), ("transfer", 1, "6h"))
    assert state.table == (("6s", None), ("6h", None))
    assert (state.attacker, state.defender) == (1, 2)
    assert thrower(state) == 1
    # And on again, back to the first attacker.
    state = act(state, ("transfer", 2, "6d"))
    assert (state.attacker, state.defender, len(state.table)) == (2, 0, 3)
    refused(state, ("transfer", 0, "7h"), "cannot_transfer")  # not the attacking rank
    state = act(state, ("take", 0), ("done", 2), ("done", 1))
    assert sorted(state.hands[0]) == sorted(["7h", "8d", "9s", "Ts", "Js", "6s", "6h", "6d"])
    assert (state.attacker, state.defender) == (1, 2)


def test_no_transfer_after_a_beat_or_a_take():
    state = act(
        three(PEREVODNOY), ("attack", 0, "6s"), ("beat", 1, "Qs", "6s"), ("done", 0), ("attack", 2, "6d")
    )
    refused(state, ("transfer", 1, "6h"), "cannot_transfer")
    assert all(action["action"] != "transfer" for action in legal_actions(state, 1))
    taking = act(three(PEREVODNOY), ("attack", 0, "6s"), ("take", 1))
    refused(taking, ("transfer", 1, "6h"), "cannot_transfer")


def test_no_transfer_when_the_next_player_holds_too_few_cards():
    hands = [["6s", "6d", "Ks"], ["6h", "Qs", "Qh"], ["7d"]]
    state = act(position(PEREVODNOY, hands, "Ac", attacker=0), ("attack", 0, "6s"))
    refused(state, ("transfer", 1, "6h"), "cannot_transfer")  # two cards against a player holding one
    assert [action["action"] for action in legal_actions(state, 1)] == ["beat", "take"]


def test_no_transfer_in_podkidnoy():
    state = act(three(DurakRules(players=3)), ("attack", 0, "6s"))
    refused(state, ("transfer", 1, "6h"), "illegal_action")


def test_two_players_transfer_back_to_the_attacker():
    rules = DurakRules(players=2, variant="perevodnoy")
    state = new_game(rules, scripted_deck(THREE[:2], trump="Ac"), first_attacker=0)
    state = act(state, ("attack", 0, "6s"), ("transfer", 1, "6h"))
    assert (state.attacker, state.defender) == (1, 0)


PASSPORT = DurakRules(players=2, variant="passport")
# Trump clubs.
PASS_HANDS = [["6s", "Ts", "7h", "8d", "Jc", "Qs"], ["6h", "Th", "Tc", "9s", "Kd", "7d"]]


def passport_game(passports: tuple[str, str]):
    return new_game(PASSPORT, scripted_deck(PASS_HANDS, trump="Ac"), first_attacker=0, passports=passports)


def test_a_passport_card_cannot_attack():
    state = passport_game(("6", "6"))
    refused(state, ("attack", 0, "6s"), "passport_card")
    assert "6s" not in [action["card"] for action in legal_actions(state, 0)]
    state = act(state, ("attack", 0, "Ts"), ("beat", 1, "Tc", "Ts"))
    refused(state, ("attack", 0, "6s"), "rank_not_on_table")


def test_a_passport_card_defends_only_as_a_trump():
    state = act(passport_game(("6", "T")), ("attack", 0, "7h"))
    refused(state, ("beat", 1, "Th", "7h"), "passport_card")
    assert act(state, ("beat", 1, "Tc", "7h")).table == (("7h", "Tc"),)


def test_being_attacked_with_your_passport_rank_forces_a_take():
    state = act(passport_game(("6", "T")), ("attack", 0, "Ts"))
    refused(state, ("beat", 1, "Tc", "Ts"), "must_take")
    assert legal_actions(state, 1) == [{"action": "take", "player": 1}]
    # Thrown in later, it forces a take too.
    state = act(passport_game(("6", "T")), ("attack", 0, "7h"), ("beat", 1, "Tc", "7h"), ("attack", 0, "Ts"))
    refused(state, ("beat", 1, "9s", "Ts"), "must_take")


def test_last_cards_of_your_passport_rank_are_shown_and_you_move_up():
    rules = DurakRules(players=3, variant="passport")
    hands = [["7s"], ["8s", "6h"], ["9d", "Ah"]]
    state = position(rules, hands, "Ac", attacker=0, passports=("6", "6", "6"))
    state = act(state, ("attack", 0, "7s"), ("beat", 1, "8s", "7s"), ("done", 2))
    assert state.finished
    assert state.out == (0, 1)  # seat 0 played out, seat 1 showed the 6h
    assert state.promoted == (1,)
    assert "6h" in state.discard
    assert state.fool == 2
    match = record_game(Match(rules=rules, passports=("6", "6", "6"), fools=(), winner=None), state)
    assert match.passports == ("6", "T", "6")
    assert (match.fools, match.winner, match.over) == ((2,), None, False)
    assert start_game(match, new_deck_order()).attacker == 0  # left of the fool
    assert start_game(match, new_deck_order()).passports == ("6", "T", "6")


def test_showing_aces_wins_the_match():
    rules = DurakRules(players=2, variant="passport")
    state = position(rules, [["7s", "8h"], ["8s", "As", "Ad"]], "Ac", attacker=0, passports=("6", "A"))
    state = act(state, ("attack", 0, "7s"), ("beat", 1, "8s", "7s"), ("done", 0))
    assert (state.finished, state.promoted, state.fool) == (True, (1,), 0)
    match = record_game(Match(rules=rules, passports=("6", "A"), fools=(), winner=None), state)
    assert (match.winner, match.over, match.passports) == (1, True, ("6", "A"))
    for attempt in (lambda: start_game(match, new_deck_order()), lambda: record_game(match, state)):
        with pytest.raises(Refused) as caught:
            attempt()
        assert caught.value.code == "game_over"


def test_a_match_starts_with_sixes_and_refuses_an_unfinished_game():
    rules = DurakRules(players=3, variant="passport")
    match = new_match(rules)
    assert match.passports == ("6", "6", "6")
    game = start_game(match, new_deck_order())
    with pytest.raises(Refused) as caught:
        record_game(match, game)
    assert caught.value.code == "illegal_action"
    assert Match.from_dict(match.to_dict()) == match


def test_after_a_draw_the_lowest_trump_leads_again():
    rules = DurakRules(players=2)
    draw = act(
        position(rules, [["6s"], ["7s"]], "Ac", attacker=0), ("attack", 0, "6s"), ("beat", 1, "7s", "6s")
    )
    assert (draw.finished, draw.fool) == (True, None)
    match = record_game(new_match(rules), draw)
    assert match.fools == (None,)
    assert start_game(match, new_deck_order()).attacker == 0  # 6s, the lowest trump (9s turned)
    assert new_match(DurakRules(players=2)).passports == ()
