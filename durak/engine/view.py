"""What one viewer may see of a game: their own hand, and of the others only how many cards they hold."""

from typing import Any

from .game import legal_actions
from .state import GameState, attackers, thrower, throwers


def view_for(state: GameState, player: int | None) -> dict[str, Any]:
    """The game as `player` sees it (None: a spectator, who sees no hand). Public: the table, the trump card
    (face up under the talon, or shown at the deal with 6 players), card counts, who attacks and defends,
    passports. Private: `hand` and `allowed` (the viewer's legal actions)."""
    return {
        "rules": state.rules.to_dict(),
        "you": player,
        "hand": list(state.hands[player]) if player is not None else [],
        "hand_counts": [len(hand) for hand in state.hands],
        "talon": len(state.talon),
        "trump": state.trump,
        "discard": len(state.discard),
        "table": [[attack, defence] for attack, defence in state.table],
        "attacker": state.attacker,
        "defender": state.defender,
        "attackers": attackers(state) if not state.finished else [],
        "thrower": thrower(state) if not state.finished else None,
        # Every attacker who may add a card now (all at once, whoever comes first).
        "throwers": throwers(state) if not state.finished else [],
        "done": list(state.done),
        "taking": state.taking,
        "limit": state.limit,
        "bout": state.bout,
        "out": list(state.out),
        "passports": list(state.passports),
        "promoted": list(state.promoted),
        "finished": state.finished,
        "fool": state.fool,
        "allowed": legal_actions(state, player) if player is not None else [],
    }
