"""The Durak engine: pure Python, no Django, no I/O, no clock, no global random state.

A game is an immutable `GameState`; `apply(state, action)` returns the next one or raises
`cards.errors.Refused` (the site's one refusal type: a code and a message). `view_for` is what one player
may see.
"""

from .cards import RANKS, SUITS, beats, new_deck_order
from .deck import shuffled_deck
from .game import apply, legal_actions, new_game, replay
from .match import Match, new_match, record_game, start_game
from .rules import DurakRules
from .state import GameState, attackers, thrower, throwers
from .view import view_for

__all__ = [
    "RANKS",
    "SUITS",
    "DurakRules",
    "GameState",
    "Match",
    "apply",
    "attackers",
    "beats",
    "legal_actions",
    "new_deck_order",
    "new_game",
    "new_match",
    "record_game",
    "replay",
    "shuffled_deck",
    "start_game",
    "thrower",
    "throwers",
    "view_for",
]
