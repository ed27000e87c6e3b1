"""A Durak bot: a sound simple policy, deterministic given the state (fixed tie-breaks) and an optional
seeded `random.Random` that only breaks ties between equally cheap cards.

- Lead with the cheapest card: the lowest non-trump (trumps only when nothing else is left).
- Add cheap cards: non-trumps below a queen while the talon lasts, any non-trump once it is empty, a trump
  only to get rid of the last cards; in the passport variant a card of the defender's passport rank first
  (it forces a take).
- Defend with the cheapest card that beats each attacking card, the strongest attacking card first; take when
  a card cannot be beaten, or when beating one or two cards would cost a high trump (queen or better) or two
  trumps while more than a hand's worth of cards is left in the talon.
- Perevodnoy: transfer with a non-trump below a queen rather than beat.

Games between these bots last 10 to 30 bouts, but about one in a few thousand falls into a cycle (the same
cards taken and thrown back round a table of players short of playable cards). From bout `CYCLE_BOUTS` on,
the bot picks a random legal action (from `rng`, or from a generator seeded with the state): that ends them.
"""

import random
from typing import Any

from .engine.cards import RANK_ORDER, SUITS
from .engine.game import apply, legal_actions
from .engine.rules import HAND_SIZE
from .engine.state import GameState, thrower

_QUEEN = RANK_ORDER["Q"]
CYCLE_BOUTS = 60


def _cheapest(cards: list[str], trump_suit: str, rng: random.Random | None) -> str:
    """The cheapest card (non-trumps first, then rank); ties by suit order s h d c, or by `rng`."""
    best = min((card[1] == trump_suit, RANK_ORDER[card[0]]) for card in cards)
    ties = sorted(
        (card for card in cards if (card[1] == trump_suit, RANK_ORDER[card[0]]) == best),
        key=lambda card: SUITS.index(card[1]),
    )
    return ties[0] if rng is None else rng.choice(ties)


def choose(state: GameState, player: int, rng: random.Random | None = None) -> dict[str, Any] | None:
    """The bot's action for `player`, or None when the player has nothing to do."""
    options = legal_actions(state, player)
    if not options:
        return None
    if state.bout >= CYCLE_BOUTS:
        chooser = rng or random.Random(f"{state.bout}:{state.hands}:{state.table}:{player}")
        return chooser.choice(options)
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


def actor(state: GameState) -> int | None:
    """Who moves next when bots play each other: the principal attacker leads, the defender answers unbeaten
    cards, then the attacker holding the right to add cards; None when the game is over."""
    if state.finished:
        return None
    if not state.table:
        return state.attacker
    if not state.taking and any(defence is None for _, defence in state.table):
        return state.defender
    return thrower(state)


def play(state: GameState, rng: random.Random | None = None) -> tuple[GameState, list[dict[str, Any]]]:
    """Bots play `state` to its end; the final state and the actions taken."""
    actions = []
    while (player := actor(state)) is not None:
        action = choose(state, player, rng)
        assert action is not None  # the player the game waits for has a move
        state = apply(state, action)
        actions.append(action)
    return state, actions
