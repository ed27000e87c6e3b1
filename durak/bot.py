"""Durak bots at three levels, pure and deterministic given the state and an optional seeded
`random.Random` (`durak/bots/`):

- `easy`: the simple policy (`durak.bots.basic`: cheapest lead, cheap throw-ins, cheapest defence, takes
  rather than spend high trumps early), with a random legal action a third of the time.
- `normal`: card counting and heuristics (`durak.bots.normal`).
- `hard`: determinized Monte Carlo (`durak.bots.hard`): deals the cards it cannot see at random in ways
  consistent with what it saw, plays each candidate action out with the normal policy, keeps the best.

A bot sees what its seat sees: its hand, the table, the discard pile, the hands' and the talon's sizes, the
trump card and, given `seen` (`durak.bots.knowledge.Seen`, kept by the caller with `knowledge.observe`), the
cards players picked up. Without `seen` it knows what the state alone shows.

Games last 10 to 30 bouts, but about one in a few thousand falls into a cycle (the same cards taken and
thrown back round a table of players short of playable cards). From bout `CYCLE_BOUTS` on, every level picks
a random legal action (from `rng`, or from a generator seeded with what the seat sees): that ends them.
"""

import random
from collections.abc import Sequence
from typing import Any

from .bots import actor, basic, hard, knowledge, normal
from .bots.knowledge import Seen
from .engine.game import apply, legal_actions
from .engine.state import GameState

__all__ = ["CYCLE_BOUTS", "LEVELS", "actor", "choose", "play"]

LEVELS = ("easy", "normal", "hard")
DEFAULT_LEVEL = "normal"
CYCLE_BOUTS = 60
#: How often `easy` plays a random legal action instead of the simple policy's.
EASY_RANDOM = 1 / 3


def choose(
    state: GameState,
    player: int,
    rng: random.Random | None = None,
    level: str = DEFAULT_LEVEL,
    seen: Seen | None = None,
) -> dict[str, Any] | None:
    """The bot's action for `player` at `level`, or None when the player has nothing to do."""
    if level not in LEVELS:
        raise ValueError(f"a bot level is one of {', '.join(LEVELS)}")
    options = legal_actions(state, player)
    if not options:
        return None
    if len(options) == 1:
        return options[0]
    if state.bout >= CYCLE_BOUTS:
        return (rng or _seeded(state, player)).choice(options)
    if level == "easy":
        chooser = rng or _seeded(state, player)
        if chooser.random() < EASY_RANDOM:
            return chooser.choice(options)
        return basic.choose(state, player, options, rng)
    if level == "normal":
        return normal.choose(state, player, options, rng, seen)
    return hard.choose(state, player, options, rng or _seeded(state, player), seen)


def _seeded(state: GameState, player: int) -> random.Random:
    """A generator seeded with what `player` sees (never another hand or the talon's order)."""
    counts = [len(hand) for hand in state.hands]
    return random.Random(
        f"{state.bout}:{player}:{sorted(state.hands[player])}:{state.table}:{state.discard}:{counts}"
        f":{len(state.talon)}:{state.done}:{state.taking}"
    )


def play(
    state: GameState,
    rng: random.Random | None = None,
    level: str | Sequence[str] = DEFAULT_LEVEL,
    seen: Seen | None = None,
) -> tuple[GameState, list[dict[str, Any]]]:
    """Bots play `state` to its end, at one `level` or one per seat, remembering the cards players pick up
    (from `seen`, the knowledge so far; by default a new game's, or what a state in play shows); the final
    state and the actions taken."""
    levels = [level] * state.rules.players if isinstance(level, str) else list(level)
    if seen is None:
        fresh = state.bout == 0 and not state.discard and not state.table
        seen = knowledge.start(state) if fresh else knowledge.guess(state)
    actions = []
    while (player := actor(state)) is not None:
        action = choose(state, player, rng, levels[player], seen)
        assert action is not None  # the seat to act has a move
        after = apply(state, action)
        seen = knowledge.observe(seen, state, action, after)
        state = after
        actions.append(action)
    return state, actions
