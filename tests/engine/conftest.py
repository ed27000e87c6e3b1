"""Helpers for engine tests: a scripted shoe (chosen cards first) and short ways to play a round."""

from collections import Counter
from typing import Any

import pytest

from blackjack.engine import RuleSet, apply, new_deck_order, new_round
from blackjack.engine.round import RoundState
from cards.errors import Refused


def scripted_shoe(cards: list[str], decks: int = 6) -> list[str]:
    """`cards` first, then the rest of a real `decks`-deck shoe in canonical order."""
    rest = Counter(new_deck_order(decks))
    rest.subtract(cards)
    assert min(rest.values()) >= 0, "more copies of a card than the shoe holds"
    tail = []
    for card in new_deck_order(decks):
        if rest[card] > 0:
            rest[card] -= 1
            tail.append(card)
    return list(cards) + tail


def deal_order(players: list[tuple[str, str]], up: str, hole: str | None, draws: tuple = ()) -> list[str]:
    """The shoe front that deals `players` (in seat order) two cards each and the dealer `up` (and `hole`),
    then `draws` (the cards taken later, in order: hits, doubles, split cards, then the dealer's)."""
    first = [cards[0] for cards in players]
    second = [cards[1] for cards in players]
    return [*first, up, *second, *([hole] if hole else []), *draws]


def start(
    players: list[tuple[str, str]],
    up: str,
    hole: str | None = None,
    draws: tuple = (),
    *,
    rules: RuleSet | None = None,
    bets: dict[int, int] | None = None,
) -> RoundState:
    """A dealt round: seats 1..n (or the seats of `bets`) bet, then the scripted cards are dealt."""
    rules = rules or RuleSet()
    bets = bets or dict.fromkeys(range(1, len(players) + 1), 10)
    assert rules.dealer_peek or hole is None, "no hole card in this game: its second card is a draw"
    shoe = scripted_shoe(deal_order(players, up, hole, draws), rules.decks)
    state = new_round(rules=rules, shoe=shoe, position=0, seats=bets, min_bet=1, max_bet=1000)
    for seat, amount in bets.items():
        state = apply(state, {"action": "bet", "seat": seat, "amount": amount})
    return apply(state, {"action": "deal"})


def act(state: RoundState, *actions: dict[str, Any] | str) -> RoundState:
    """Apply actions in order; a bare string is that action by the seat whose turn it is."""
    for action in actions:
        if isinstance(action, str):
            assert state.turn is not None, f"no turn for {action!r} (phase {state.phase})"
            action = {"action": action, "seat": state.turn[0]}
        state = apply(state, action)
    return state


def refused(state: RoundState, action: Any, code: str) -> Refused:
    """Assert `action` is refused with `code` and leaves the state as it was; returns the error."""
    before = state.to_dict()
    with pytest.raises(Refused) as caught:
        apply(state, action)
    assert caught.value.code == code, caught.value.message
    assert state.to_dict() == before
    return caught.value


def results(state: RoundState) -> list[tuple[int, str | None, int | None]]:
    """(seat, result, payout) of every hand, in order."""
    return [(seat.number, hand.result, hand.payout) for seat in state.seats.values() for hand in seat.hands]
