"""A Durak table's options: variant, attack type, the limit of attacking cards per bout, number of players."""

from dataclasses import dataclass
from typing import Any

from cards.errors import Refused

PODKIDNOY, PEREVODNOY, PASSPORT = "podkidnoy", "perevodnoy", "passport"
VARIANTS = (PODKIDNOY, PEREVODNOY, PASSPORT)

#: Who may add attacking cards: the principal attacker only; they and the player on the defender's other side
#: (the defender's left); every player but the defender.
ONE_SIDE, NEIGHBOURS, ALL_SIDES = "one_side", "neighbours", "all_sides"
ATTACK_TYPES = (ONE_SIDE, NEIGHBOURS, ALL_SIDES)

#: At most 6 attacking cards a bout; the same with at most 5 in the game's first bout; no fixed number. Always
#: at most as many as the defender held when the bout began (or when the attack was transferred to them).
SIX, FIVE_FIRST_BOUT, NO_LIMIT = "six", "five_first_bout", "no_limit"
LIMITS = (SIX, FIVE_FIRST_BOUT, NO_LIMIT)

MIN_PLAYERS, MAX_PLAYERS = 2, 6
HAND_SIZE = 6

#: Passport ranks in the order a player moves up through them.
PASSPORT_RANKS = "6TJQKA"


@dataclass(frozen=True, slots=True)
class DurakRules:
    """The options of one table; `DurakRules.parse` checks a dictionary from outside."""

    players: int = 2
    variant: str = PODKIDNOY
    attack: str = ALL_SIDES
    limit: str = SIX

    def __post_init__(self) -> None:
        if type(self.players) is not int or not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise Refused("invalid_rules", f"a game has {MIN_PLAYERS} to {MAX_PLAYERS} players")
        if self.variant not in VARIANTS:
            raise Refused("invalid_rules", f"the variant is one of {', '.join(VARIANTS)}")
        if self.attack not in ATTACK_TYPES:
            raise Refused("invalid_rules", f"the attack type is one of {', '.join(ATTACK_TYPES)}")
        if self.limit not in LIMITS:
            raise Refused("invalid_rules", f"the limit is one of {', '.join(LIMITS)}")

    def bout_limit(self, defender_cards: int, first_bout: bool) -> int:
        """The most attacking cards a bout may hold against a defender with `defender_cards` cards."""
        if self.limit == NO_LIMIT:
            return defender_cards
        cap = 5 if self.limit == FIVE_FIRST_BOUT and first_bout else 6
        return min(cap, defender_cards)

    def to_dict(self) -> dict[str, Any]:
        return {"players": self.players, "variant": self.variant, "attack": self.attack, "limit": self.limit}

    @classmethod
    def parse(cls, data: Any) -> "DurakRules":
        """Rules from a dictionary (missing keys take the defaults); Refused(invalid_rules) otherwise."""
        if not isinstance(data, dict) or not set(data) <= {"players", "variant", "attack", "limit"}:
            raise Refused("invalid_rules", "rules are an object with players, variant, attack and limit")
        return cls(**data)
