"""The blackjack engine: pure Python, no Django, no I/O, no clock, no global random state."""

from .cards import RANKS, SUITS, card_value, hand_value, is_blackjack, new_deck_order
from .round import RoundState, allowed_actions, apply, apply_in_place, new_round, replay
from .rules import PRESETS, RuleSet, get_preset, parse_rules
from .shoe import cut_card_index, shuffled_shoe

__all__ = [
    "PRESETS",
    "RANKS",
    "SUITS",
    "RoundState",
    "RuleSet",
    "allowed_actions",
    "apply",
    "apply_in_place",
    "card_value",
    "combine_client_seeds",
    "cut_card_index",
    "get_preset",
    "hand_value",
    "is_blackjack",
    "new_deck_order",
    "new_round",
    "new_server_seed",
    "parse_rules",
    "replay",
    "seed_hash",
    "shuffled_shoe",
]
