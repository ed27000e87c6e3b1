"""The end of a game (out, fool, draw), the view of one player, replay and the JSON round trip."""

import json
import random

import pytest

from cards.errors import Refused
from durak.bot import play
from durak.engine import (
    DurakRules,
    GameState,
    apply,
    legal_actions,
    new_deck_order,
    new_game,
    replay,
    shuffled_deck,
    view_for,
)
from durak.engine.rules import VARIANTS

from .conftest import act, all_cards, position


def test_the_last_player_holding_cards_is_the_fool():
    state = position(DurakRules(players=2), [["6s"], ["7s", "8h"]], "Ac", attacker=0)
    state = act(state, ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    assert (state.finished, state.out, state.fool) == (True, (0,), 1)


def test_last_cards_going_out_together_is_a_draw():
    state = position(DurakRules(players=2), [["6s"], ["7s"]], "Ac", attacker=0)
    state = act(state, ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    assert (state.finished, state.out, state.fool) == (True, (0, 1), None)


def test_taking_the_last_attack_makes_the_fool():
    state = position(DurakRules(players=2), [["6s"], ["8h", "9h"]], "Ac", attacker=0)
    state = act(state, ("attack", 0, "6s"), ("take", 1))
    assert (state.finished, state.fool, state.hands[1]) == (True, 1, ("8h", "9h", "6s"))


def test_a_player_without_cards_leaves_and_the_others_play_on():
    hands = [["6s"], ["7s", "8h"], ["7h", "9h"]]
    state = position(DurakRules(players=3), hands, "Ac", attacker=0)
    state = act(state, ("attack", 0, "6s"), ("beat", 1, "7s", "6s"))
    assert state.table  # seat 2 may still add cards
    state = act(state, ("attack", 2, "7h"), ("take", 1))  # two cards: the limit, the bout closes
    assert (state.finished, state.out) == (False, (0,))
    # Seat 1 took: seat 2 leads against seat 1 (seat 0 is out).
    assert (state.attacker, state.defender) == (2, 1)
    state = act(state, ("attack", 2, "9h"), ("take", 1))
    assert (state.finished, state.out, state.fool) == (True, (0, 2), 1)


def test_a_view_holds_only_the_viewers_hand():
    state = new_game(DurakRules(players=3), new_deck_order())
    view = view_for(state, 1)
    assert view["hand"] == list(state.hands[1])
    assert view["hand_counts"] == [6, 6, 6]
    assert (view["talon"], view["trump"]) == (18, "Td")
    text = json.dumps(view)
    for seat in (0, 2):
        assert not any(f'"{card}"' in text for card in state.hands[seat])
    assert "Td" not in state.hands[0] + state.hands[2]
    assert view_for(state, None)["hand"] == []
    assert [action["action"] for action in view_for(state, state.attacker)["allowed"]] == ["attack"] * 6


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("players", [2, 6])
def test_bots_finish_games_with_two_and_six_players(variant, players):
    rng = random.Random(f"{variant}-{players}")
    for _ in range(20):
        deck = new_deck_order()
        rng.shuffle(deck)
        rules = DurakRules(
            players=players, variant=variant, attack=rng.choice(["one_side", "neighbours", "all_sides"])
        )
        start = new_game(rules, deck)
        end, actions = play(start, rng)
        assert end.finished
        assert sorted(all_cards(end)) == sorted(new_deck_order())
        assert len(end.out) == players - (end.fool is not None)
        replayed = replay(rules, deck, actions)
        assert json.dumps(replayed.to_dict()) == json.dumps(end.to_dict())
        assert GameState.from_dict(json.loads(json.dumps(end.to_dict()))) == end


def test_a_player_concedes_the_game_whoever_s_turn_it_is():
    """`surrender`: the player is the fool at once, the others go out after those out already; the cards stay
    where they are (every card in one place); not offered among the legal actions."""
    state = new_game(DurakRules(players=3), shuffled_deck(server_seed="ab" * 32, client_seed="c"))
    quiet = next(seat for seat in range(3) if seat not in (state.attacker, state.defender))
    assert all(action["action"] != "surrender" for seat in range(3) for action in legal_actions(state, seat))
    ended = apply(state, {"action": "surrender", "player": quiet})
    assert ended.finished
    assert ended.fool == quiet
    assert ended.out == tuple(seat for seat in range(3) if seat != quiet)
    assert ended.hands == state.hands
    assert ended.talon == state.talon
    with pytest.raises(Refused) as refused:
        apply(ended, {"action": "surrender", "player": quiet})
    assert refused.value.code == "game_over"
