"""The blackjack engine: pure Python, no Django, no I/O, no clock, no global random state."""

from .cards import RANKS, SUITS, card_value, hand_value, is_blackjack, new_deck_order
from .errors import EngineError
from .round import RoundState, allowed_actions, apply, apply_in_place, new_round, replay
from .rules import PRESETS, RuleSet, get_preset, parse_rules

__all__ = [
    "PRESETS",
    "RANKS",
    "SUITS",
    "EngineError",
    "RoundState",
    "RuleSet",
    "allowed_actions",
    "apply",
    "apply_in_place",
    "card_value",
    "get_preset",
    "hand_value",
    "is_blackjack",
    "new_deck_order",
    "new_round",
    "parse_rules",
    "replay",
]
