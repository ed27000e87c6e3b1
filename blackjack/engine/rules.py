"""The rules of a table: one frozen `RuleSet`, JSON-serialisable, validated on construction.

Invalid values and combinations are refused with `Refused("invalid_rules", ...)`; a value of the wrong
type (or an unknown field in `RuleSet.from_dict`) with `bad_message`. Options that cannot take effect:

- `resplit_aces` needs room for a resplit (`max_split_hands` >= 3), `hit_split_aces` needs splitting
  (`max_split_hands` >= 2) and `original_bets_only` needs the no-hole-card game (`dealer_peek` false): each is
  off by default, so switching it on where it can never apply is a mistake and is refused.
- `double_after_split` is on by default; with `max_split_hands` 1 it never applies and is accepted.
- `surrender="early"` needs the dealer's peek (early surrender is offered *before* the dealer checks for
  blackjack). In the no-hole-card game use `"late"`: a surrendered hand still loses its whole bet when the
  dealer's second card makes a blackjack, as late surrender does in a peek game.
"""

import dataclasses
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cards.errors import Refused

PAYOUTS = ("3:2", "6:5", "2:1", "1:1")
DOUBLE_ON = ("any", "9-11", "10-11")
SURRENDER = ("none", "late", "early")
CHARLIE = (None, 5, 6, 7)
MIN_DECKS, MAX_DECKS = 1, 8
MIN_PENETRATION, MAX_PENETRATION = 0.5, 0.9


def parse_ratio(text: str) -> tuple[int, int]:
    """ "3:2" -> (3, 2). Raises `invalid_rules` unless both sides are positive integers below 1000."""
    parts = text.split(":") if isinstance(text, str) else []
    if len(parts) != 2 or not all(part.isdigit() and part.isascii() for part in parts):
        raise Refused("invalid_rules", f"a payout must look like '3:2', not {text!r}")
    num, den = int(parts[0]), int(parts[1])
    if not (0 < num < 1000 and 0 < den < 1000):
        raise Refused("invalid_rules", f"payout {text!r} is out of range (each side 1..999)")
    return num, den


@dataclass(frozen=True)
class RuleSet:
    """One table's rules. The defaults are the "Vegas Strip" game."""

    decks: int = 6
    dealer_hits_soft_17: bool = False
    blackjack_payout: str = "3:2"
    double_on: str = "any"
    double_after_split: bool = True
    max_split_hands: int = 4
    resplit_aces: bool = False
    hit_split_aces: bool = False
    surrender: str = "late"
    dealer_peek: bool = True
    original_bets_only: bool = False
    penetration: float = 0.75
    charlie: int | None = None
    suited_678_bonus: str | None = None

    def __post_init__(self) -> None:
        self.validate()
        # Parsed once: the round reads these on every settlement. Declared here, not as fields: they are no
        # part of the rules' values (fields, equality, `to_dict`).
        self._blackjack_ratio: tuple[int, int]
        self._suited_678_ratio: tuple[int, int] | None
        object.__setattr__(self, "_blackjack_ratio", parse_ratio(self.blackjack_payout))
        bonus = None if self.suited_678_bonus is None else parse_ratio(self.suited_678_bonus)
        object.__setattr__(self, "_suited_678_ratio", bonus)

    def validate(self) -> None:
        """Raise Refused (`bad_message` for a wrong type, `invalid_rules` otherwise) unless playable."""
        for field in dataclasses.fields(self):
            _check_type(field.name, getattr(self, field.name))
        if not MIN_DECKS <= self.decks <= MAX_DECKS:
            raise Refused("invalid_rules", f"decks must be {MIN_DECKS} to {MAX_DECKS}, not {self.decks}")
        _check_choice("blackjack_payout", self.blackjack_payout, PAYOUTS)
        _check_choice("double_on", self.double_on, DOUBLE_ON)
        if not 1 <= self.max_split_hands <= 4:
            raise Refused("invalid_rules", f"max_split_hands must be 1 to 4, not {self.max_split_hands}")
        _check_choice("surrender", self.surrender, SURRENDER)
        if self.penetration != 0 and not MIN_PENETRATION <= self.penetration <= MAX_PENETRATION:
            raise Refused(
                "invalid_rules",
                f"penetration must be 0 (fresh shuffle every round) or {MIN_PENETRATION} to "
                f"{MAX_PENETRATION}, not {self.penetration}",
            )
        if self.charlie not in CHARLIE:
            raise Refused("invalid_rules", f"charlie must be null, 5, 6 or 7, not {self.charlie}")
        if self.suited_678_bonus is not None:
            parse_ratio(self.suited_678_bonus)
        if self.resplit_aces and self.max_split_hands < 3:
            raise Refused(
                "invalid_rules", "resplit_aces needs max_split_hands of at least 3 (room for a second split)"
            )
        if self.hit_split_aces and self.max_split_hands < 2:
            raise Refused("invalid_rules", "hit_split_aces needs splitting (max_split_hands at least 2)")
        if self.surrender == "early" and not self.dealer_peek:
            raise Refused(
                "invalid_rules",
                "early surrender is offered before the dealer's peek; the no-hole-card game has no peek "
                "(use late surrender)",
            )
        if self.original_bets_only and self.dealer_peek:
            raise Refused(
                "invalid_rules",
                "original_bets_only applies to the no-hole-card game only (with a peek no extra bet meets a "
                "dealer blackjack)",
            )

    @property
    def blackjack_ratio(self) -> tuple[int, int]:
        """The blackjack payout as (numerator, denominator), e.g. (3, 2)."""
        return self._blackjack_ratio

    @property
    def suited_678_ratio(self) -> tuple[int, int] | None:
        """The suited 6-7-8 bonus as (numerator, denominator), or None without the bonus."""
        return self._suited_678_ratio

    def to_dict(self) -> dict[str, Any]:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Any) -> "RuleSet":
        """Build from a partial or full dict: missing fields take the defaults, unknown ones are refused."""
        if not isinstance(data, dict):
            raise Refused("bad_message", "rules must be a JSON object")
        unknown = sorted(str(key) for key in data if key not in cls.__dataclass_fields__)
        if unknown:
            raise Refused("bad_message", f"unknown rule field(s): {', '.join(unknown)}")
        # Every action and view reads a round's rules: a rule set already built from equal values (of equal
        # types, so that 1 and True stay apart) is returned again; rule sets are immutable.
        try:
            key = tuple(sorted((name, type(value), value) for name, value in data.items()))
            # mypy reads the frozen dataclass's instance `__hash__` as the class's own: a class is hashable.
            return _built(cls, key)  # type: ignore[arg-type]
        except TypeError:  # a value that cannot be part of a key (a list), refused as it is built here
            return cls(**data)

    def summary(self) -> str:
        """Short human text such as "6 decks · S17 · DAS · LS · 3:2"."""
        parts = ["1 deck" if self.decks == 1 else f"{self.decks} decks"]
        parts.append("H17" if self.dealer_hits_soft_17 else "S17")
        if not self.dealer_peek:
            parts.append("no hole card" + (" (OBO)" if self.original_bets_only else ""))
        if self.double_on != "any":
            parts.append(f"D{self.double_on}")
        if self.max_split_hands == 1:
            parts.append("no split")
        else:
            if self.double_after_split:
                parts.append("DAS")
            if self.max_split_hands < 4:
                parts.append(f"split to {self.max_split_hands}")
            if self.resplit_aces:
                parts.append("RSA")
            if self.hit_split_aces:
                parts.append("HSA")
        if self.surrender != "none":
            parts.append("LS" if self.surrender == "late" else "ES")
        parts.append(self.blackjack_payout)
        if self.charlie is not None:
            parts.append(f"{self.charlie}-card charlie")
        if self.suited_678_bonus is not None:
            parts.append(f"suited 6-7-8 {self.suited_678_bonus}")
        return " · ".join(parts)


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "decks": (int,),
    "dealer_hits_soft_17": (bool,),
    "blackjack_payout": (str,),
    "double_on": (str,),
    "double_after_split": (bool,),
    "max_split_hands": (int,),
    "resplit_aces": (bool,),
    "hit_split_aces": (bool,),
    "surrender": (str,),
    "dealer_peek": (bool,),
    "original_bets_only": (bool,),
    "penetration": (int, float),
    "charlie": (int, type(None)),
    "suited_678_bonus": (str, type(None)),
}


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise Refused("invalid_rules", f"{name} must be one of {', '.join(choices)}, not {value!r}")


def _check_type(name: str, value: Any) -> None:
    expected = _FIELD_TYPES[name]
    # bool is a subclass of int: only fields declared bool accept it.
    if (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
        names = " or ".join("null" if kind is type(None) else kind.__name__ for kind in expected)
        raise Refused("bad_message", f"rule {name} must be {names}, not {value!r}")


PRESETS: dict[str, RuleSet] = {
    "Vegas Strip": RuleSet(),
    "Downtown": RuleSet(decks=2, dealer_hits_soft_17=True, surrender="none"),
    "Atlantic City": RuleSet(decks=8),
    "European": RuleSet(dealer_peek=False, double_on="9-11", surrender="none"),
    "Single deck 6:5": RuleSet(
        decks=1, dealer_hits_soft_17=True, double_after_split=False, blackjack_payout="6:5", surrender="none"
    ),
}


def get_preset(name: str) -> RuleSet:
    """The named preset (exact name, or the same name in any letter case)."""
    if name in PRESETS:
        return PRESETS[name]
    for key, rules in PRESETS.items():
        if isinstance(name, str) and key.casefold() == name.casefold():
            return rules
    raise Refused("invalid_rules", f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")


def parse_rules(text: str) -> RuleSet:
    """A preset name or a JSON object of rule fields (as given on the simulator's command line)."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return get_preset(stripped)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise Refused("bad_message", f"rules are not valid JSON: {exc}") from None
    return RuleSet.from_dict(data)


@lru_cache(maxsize=256)
def _built(cls: type[RuleSet], key: tuple) -> RuleSet:
    return cls(**{name: value for name, _type, value in key})
