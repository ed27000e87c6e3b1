"""The simple policy (`easy` plays it, with random moves mixed in): sound, deterministic given the state
(fixed tie-breaks) and an optional seeded `random.Random` that only breaks ties between equally cheap cards.

- Lead with the cheapest card: the lowest non-trump (trumps only when nothing else is left).
- Add cheap cards: non-trumps below a queen while the talon lasts, any non-trump once it is empty, a trump
  only to get rid of the last cards; in the passport variant a card of the defender's passport rank first
  (it forces a take).
- Defend with the cheapest card that beats each attacking card, the strongest attacking card first; take when
  a card cannot be beaten, or when beating one or two cards would cost a high trump (queen or better) or two
  trumps while more than a hand's worth of cards is left in the talon.
- Perevodnoy: transfer with a non-trump below a queen rather than beat.
"""

import random
from typing import Any

from durak.engine.cards import RANK_ORDER, SUITS
from durak.engine.rules import HAND_SIZE
from durak.engine.state import GameState

_QUEEN = RANK_ORDER["Q"]


def _cheapest(cards: list[str], trump_suit: str, rng: random.Random | None) -> str:
    """The cheapest card (non-trumps first, then rank); ties by suit order s h d c, or by `rng`."""
    best = min((card[1] == trump_suit, RANK_ORDER[card[0]]) for card in cards)
    ties = sorted(
        (card for card in cards if (card[1] == trump_suit, RANK_ORDER[card[0]]) == best),
        key=lambda card: SUITS.index(card[1]),
    )
    return ties[0] if rng is None else rng.choice(ties)


def choose(
    state: GameState, player: int, options: list[dict[str, Any]], rng: random.Random | None = None
) -> dict[str, Any]:
    """The policy's action for `player` among `options` (the legal actions, not empty)."""
    kinds = {option["action"] for option in options}
    if "take" in kinds:
        return _defend(state, player, options, rng)
    return _attack(state, player, options, rng)


def _attack(state: GameState, player: int, options: list[dict[str, Any]], rng: random.Random | None) -> dict:
    trump_suit = state.trump_suit
    cards = [option["card"] for option in options if option["action"] == "attack"]
    done = {"action": "done", "player": player}
    if not state.table:
        return {"action": "attack", "player": player, "card": _cheapest(cards, trump_suit, rng)}
    if state.passports:
        forcing = [card for card in cards if card[0] == state.passports[state.defender]]
        if forcing:
            return {"action": "attack", "player": player, "card": _cheapest(forcing, trump_suit, rng)}
    late = not state.talon
    cheap = [card for card in cards if card[1] != trump_suit and (late or RANK_ORDER[card[0]] < _QUEEN)]
    if not cheap and late and len(state.hands[player]) <= 2:
        cheap = cards
    if not cheap:
        return done
    return {"action": "attack", "player": player, "card": _cheapest(cheap, trump_suit, rng)}


def _defend(state: GameState, player: int, options: list[dict[str, Any]], rng: random.Random | None) -> dict:
    trump_suit = state.trump_suit
    take = {"action": "take", "player": player}
    transfers = [o["card"] for o in options if o["action"] == "transfer"]
    cheap_transfers = [card for card in transfers if card[1] != trump_suit and RANK_ORDER[card[0]] < _QUEEN]
    if cheap_transfers:
        return {"action": "transfer", "player": player, "card": _cheapest(cheap_transfers, trump_suit, rng)}
    beaters: dict[str, list[str]] = {}
    for option in options:
        if option["action"] == "beat":
            beaters.setdefault(option["target"], []).append(option["card"])
    unbeaten = [attack for attack, defence in state.table if defence is None]
    unbeaten.sort(
        key=lambda card: (card[1] == trump_suit, RANK_ORDER[card[0]], SUITS.index(card[1])), reverse=True
    )
    plan: list[tuple[str, str]] = []
    used: set[str] = set()
    for target in unbeaten:
        available = [card for card in beaters.get(target, ()) if card not in used]
        if not available:
            return take
        card = _cheapest(available, trump_suit, rng)
        used.add(card)
        plan.append((target, card))
    trumps = [card for _, card in plan if card[1] == trump_suit]
    costly = any(RANK_ORDER[card[0]] >= _QUEEN for card in trumps) or len(trumps) >= 2
    if costly and len(state.talon) > HAND_SIZE and len(state.table) <= 2:
        return take
    target, card = plan[0]
    return {"action": "beat", "player": player, "card": card, "target": target}
