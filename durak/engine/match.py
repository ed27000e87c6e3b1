"""A match: a series of games at one table. It carries the passports (passport variant), the fools of the
games played and, in the passport variant, the winner.

The player to the left of the previous game's fool leads the next game (after a draw: the lowest trump, as in
a first game). In the passport variant a player who shows their passport cards moves up one passport rank
(6 -> T -> J -> Q -> K -> A); the first to show Aces, their last passport, wins the match.
"""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from cards.errors import Refused

from .game import new_game
from .rules import PASSPORT, PASSPORT_RANKS, DurakRules
from .state import GameState


@dataclass(frozen=True, slots=True)
class Match:
    rules: DurakRules
    passports: tuple[str, ...]
    fools: tuple[int | None, ...]
    winner: int | None

    @property
    def over(self) -> bool:
        return self.winner is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "passports": list(self.passports),
            "fools": list(self.fools),
            "winner": self.winner,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Match":
        try:
            return cls(
                rules=DurakRules.parse(data["rules"]),
                passports=tuple(data["passports"]),
                fools=tuple(data["fools"]),
                winner=data["winner"],
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise Refused("bad_message", f"not a Durak match: {exc}") from exc


def new_match(rules: DurakRules) -> Match:
    passports = ("6",) * rules.players if rules.variant == PASSPORT else ()
    return Match(rules=rules, passports=passports, fools=(), winner=None)


def start_game(match: Match, deck: Iterable[str]) -> GameState:
    """The match's next game, dealt from `deck`."""
    if match.over:
        raise Refused("game_over", "the match is over")
    previous_fool = match.fools[-1] if match.fools else None
    passports = match.passports if match.rules.variant == PASSPORT else None
    return new_game(match.rules, deck, previous_fool=previous_fool, passports=passports)


def record_game(match: Match, game: GameState) -> Match:
    """The match after `game` (finished, started by `start_game`): its fool, promotions and winner."""
    if match.over:
        raise Refused("game_over", "the match is over")
    if not game.finished or game.rules != match.rules or game.passports != match.passports:
        raise Refused("illegal_action", "only a finished game of this match can be recorded")
    passports = list(match.passports)
    winner = None
    for seat in game.promoted:
        rank = passports[seat]
        if rank == PASSPORT_RANKS[-1]:
            winner = seat if winner is None else winner
        else:
            passports[seat] = PASSPORT_RANKS[PASSPORT_RANKS.index(rank) + 1]
    return replace(match, passports=tuple(passports), fools=(*match.fools, game.fool), winner=winner)
