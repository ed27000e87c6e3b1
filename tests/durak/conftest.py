"""Helpers for Durak engine tests: scripted decks, mid-game positions and short ways to play."""

from dataclasses import replace

import pytest

from cards.errors import Refused
from durak.engine import DurakRules, GameState, apply, new_deck_order, new_game


def scripted_deck(hands: list[list[str]], trump: str, talon: list[str] = ()) -> list[str]:
    """The deck that deals `hands` (6 cards each, in seat order), turns `trump` and puts `talon` on top of
    the rest (then the unused cards in canonical order). With 6 players `trump` ends the last hand."""
    players = len(hands)
    assert all(len(hand) == 6 for hand in hands)
    dealt = [hands[k % players][k // players] for k in range(6 * players)]
    if players == 6:
        assert trump == hands[5][5]
        return dealt
    front = [*dealt, trump, *talon]
    rest = [card for card in new_deck_order() if card not in front]
    assert len(front) + len(rest) == 36, "a card is used twice"
    return front + rest


def position(
    rules: DurakRules,
    hands: list[list[str]],
    trump: str,
    *,
    attacker: int,
    talon: list[str] = (),
    out: tuple[int, ...] = (),
    passports: tuple[str, ...] = (),
) -> GameState:
    """A mid-game position (bout 1): these hands and talon (its last card is the trump while it lasts), every
    other card beaten off; `attacker` leads against the next player still in."""
    used = [card for hand in hands for card in hand] + list(talon)
    assert len(used) == len(set(used)), "a card is used twice"
    assert not talon or talon[-1] == trump, "the trump card lies under the talon"
    discard = tuple(card for card in new_deck_order() if card not in used)
    state = new_game(rules, new_deck_order(), first_attacker=attacker, passports=passports or None)
    defender = next(
        seat % rules.players for seat in range(attacker + 1, attacker + 7) if seat % rules.players not in out
    )
    return replace(
        state,
        hands=tuple(tuple(hand) for hand in hands),
        talon=tuple(talon),
        trump=trump,
        discard=discard,
        defender=defender,
        bout=1,
        out=out,
        limit=rules.bout_limit(len(hands[defender]), first_bout=False),
    )


def act(state: GameState, *moves: tuple) -> GameState:
    """Apply moves written as tuples: ("attack", P, C), ("beat", P, C, TARGET), ("take", P), ("done", P),
    ("transfer", P, C)."""
    for move in moves:
        state = apply(state, to_action(move))
    return state


def to_action(move: tuple) -> dict:
    name, player, *cards = move
    action = {"action": name, "player": player}
    if cards:
        action["card"] = cards[0]
    if len(cards) == 2:
        action["target"] = cards[1]
    return action


def refused(state: GameState, move: tuple, code: str) -> Refused:
    """Assert the move is refused with `code` and leaves the state as it was."""
    before = state.to_dict()
    with pytest.raises(Refused) as caught:
        apply(state, to_action(move))
    assert caught.value.code == code, caught.value.message
    assert state.to_dict() == before
    return caught.value


def all_cards(state: GameState) -> list[str]:
    table = [card for pair in state.table for card in pair if card is not None]
    return [card for hand in state.hands for card in hand] + list(state.talon) + list(state.discard) + table
