"""The `normal` policy: the simple one's sense plus card counting.

It knows which cards are gone (discard pile), which are in a hand because their holder picked them up, and
so which cards each opponent may hold (`knowledge.unseen`); with two players and an empty talon it knows the
opponent's hand exactly.

- Lead: a card the defender cannot beat once the talon is empty (a forced take keeps the lead); else the
  cheapest non-trump, a rank held twice or more counting cheaper (more of it can follow).
- Add: a card the defender cannot beat first (it forces a take); then any non-trump, the cheapest first, and
  trumps too once the talon is empty when the defender or the bot has two cards or fewer (overload, or the
  last cards); to a defender who takes, non-trumps below a queen while the talon lasts (gifts are cheap).
- Defend: the cheapest card for each attacking card (the strongest first); take when a card cannot be beaten,
  or when the talon still holds more than a hand and beating would cost a trump of queen or better or two
  trumps. Once the talon is empty, beat whenever possible (every card beaten is one card less to shed).
- Transfer (perevodnoy) with a non-trump below a queen (any non-trump once the talon is empty), or, when
  beating would be expensive or impossible, with any non-trump or a trump below a queen.
"""

import random
from typing import Any

from durak.engine.cards import RANK_ORDER, beats, card_key
from durak.engine.rules import HAND_SIZE
from durak.engine.state import GameState

from . import knowledge
from .knowledge import Seen

_QUEEN = RANK_ORDER["Q"]
#: On a lead, each other card of its rank in the hand makes a non-trump count this much cheaper.
PAIR_BONUS = 1.5
#: Add non-trumps below this rank to a defender who takes while the talon lasts.
GIVE_BELOW = _QUEEN
#: Take rather than beat expensively while the talon holds more than this many cards.
TAKE_TALON = HAND_SIZE
#: Beating with a trump of this rank or more is expensive.
COSTLY_TRUMP = _QUEEN
#: Beating with this many trumps is expensive.
COSTLY_TRUMPS = 2


def value(card: str, trump_suit: str) -> int:
    """A card's worth in play: its rank (6 is 0, ace 8), plus 9 for a trump."""
    return RANK_ORDER[card[0]] + (9 if card[1] == trump_suit else 0)


def choose(
    state: GameState,
    player: int,
    options: list[dict[str, Any]],
    rng: random.Random | None = None,
    seen: Seen | None = None,
) -> dict[str, Any]:
    """The policy's action for `player` among `options` (the legal actions, not empty). Deterministic: `rng`
    is not used (ties go by suit order)."""
    if seen is not None:
        seen = knowledge.consistent(seen, state, player)
    kinds = {option["action"] for option in options}
    if "take" in kinds:
        return _defend(state, player, options)
    return _attack(state, player, options, seen)


def _possible(state: GameState, player: int, seat: int, seen: Seen | None) -> set[str]:
    """The cards `seat` may hold as `player` sees it: known in their hand, or unseen."""
    cards = knowledge.unseen(state, player, seen)
    return cards | seen.known[seat] if seen is not None else cards


def _unbeatable(card: str, holdings: set[str], trump_suit: str) -> bool:
    return not any(beats(other, card, trump_suit) for other in holdings)


def _cheapest(cards: list[str], trump_suit: str, counts: dict[str, int] | None = None) -> str:
    """The cheapest card; a rank held several times counts cheaper when `counts` (rank: copies) is given."""

    def cost(card: str) -> tuple:
        pairs = counts.get(card[0], 1) - 1 if counts is not None and card[1] != trump_suit else 0
        worth = value(card, trump_suit) - PAIR_BONUS * pairs
        return (card[1] == trump_suit, worth, card_key(card, trump_suit))

    return min(cards, key=cost)


def _attack(state: GameState, player: int, options: list[dict[str, Any]], seen: Seen | None) -> dict:
    trump_suit = state.trump_suit
    cards = [option["card"] for option in options if option["action"] == "attack"]
    done = {"action": "done", "player": player}
    if not cards:
        return done
    late = not state.talon
    defender = state.defender

    def attack(card: str) -> dict:
        return {"action": "attack", "player": player, "card": card}

    def forcing(cards: list[str]) -> list[str]:
        if not cards:
            return []
        holdings = _possible(state, player, defender, seen)
        return [card for card in cards if _unbeatable(card, holdings, trump_suit)]

    if not state.table:
        unanswered = forcing(cards) if late else []
        if unanswered:
            return attack(_cheapest(unanswered, trump_suit))
        counts: dict[str, int] = {}
        for card in state.hands[player]:
            if card[1] != trump_suit:
                counts[card[0]] = counts.get(card[0], 0) + 1
        return attack(_cheapest(cards, trump_suit, counts))
    if state.passports:
        passport = [card for card in cards if card[0] == state.passports[defender]]
        if passport:
            return attack(_cheapest(passport, trump_suit))
    if state.taking:
        giveaway = [c for c in cards if c[1] != trump_suit and (late or RANK_ORDER[c[0]] < GIVE_BELOW)]
        return attack(_cheapest(giveaway, trump_suit)) if giveaway else done
    unanswered = forcing([card for card in cards if card[1] != trump_suit or late])
    if unanswered:
        return attack(_cheapest(unanswered, trump_suit))
    cheap = [card for card in cards if card[1] != trump_suit]
    if late and (len(state.hands[defender]) <= 2 or len(state.hands[player]) <= 2):
        cheap = cards
    return attack(_cheapest(cheap, trump_suit)) if cheap else done


def _defend(state: GameState, player: int, options: list[dict[str, Any]]) -> dict:
    trump_suit = state.trump_suit
    take = {"action": "take", "player": player}
    late = not state.talon
    plan = _plan(state, options)
    transfers = [o["card"] for o in options if o["action"] == "transfer"]
    cheap_transfers = [c for c in transfers if c[1] != trump_suit and (late or RANK_ORDER[c[0]] < _QUEEN)]
    costly = plan is None or _costly(state, plan)
    if not cheap_transfers and costly:
        cheap_transfers = [c for c in transfers if c[1] != trump_suit or RANK_ORDER[c[0]] < _QUEEN]
    if cheap_transfers:
        return {"action": "transfer", "player": player, "card": _cheapest(cheap_transfers, trump_suit)}
    if plan is None:
        return take
    if costly and len(state.talon) > TAKE_TALON:
        return take
    target, card = plan[0]
    return {"action": "beat", "player": player, "card": card, "target": target}


def _costly(state: GameState, plan: list[tuple[str, str]]) -> bool:
    trumps = [card for _, card in plan if card[1] == state.trump_suit]
    return any(RANK_ORDER[card[0]] >= COSTLY_TRUMP for card in trumps) or len(trumps) >= COSTLY_TRUMPS


def _plan(state: GameState, options: list[dict[str, Any]]) -> list[tuple[str, str]] | None:
    """The cheapest beating card for each unbeaten attacking card, the strongest first; None if one cannot
    be beaten."""
    trump_suit = state.trump_suit
    beaters: dict[str, list[str]] = {}
    for option in options:
        if option["action"] == "beat":
            beaters.setdefault(option["target"], []).append(option["card"])
    unbeaten = [attack for attack, defence in state.table if defence is None]
    unbeaten.sort(key=lambda card: card_key(card, trump_suit), reverse=True)
    plan: list[tuple[str, str]] = []
    used: set[str] = set()
    for target in unbeaten:
        available = [card for card in beaters.get(target, ()) if card not in used]
        if not available:
            return None
        card = min(available, key=lambda c: card_key(c, trump_suit))
        used.add(card)
        plan.append((target, card))
    return plan
