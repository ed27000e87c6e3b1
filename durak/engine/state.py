"""The state of one Durak game as an immutable value, its JSON round trip and the seat arithmetic.

Seats are numbered 0 .. players - 1 clockwise; play passes to the left, the next number (mod players).
"""

from collections.abc import Collection
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from cards.errors import Refused

from .rules import ALL_SIDES, NEIGHBOURS, DurakRules


@dataclass(frozen=True, slots=True)
class GameState:
    """One game. Every card is in exactly one of `hands`, `talon`, `table` and `discard`.

    `talon` is drawn from its start; while the trump card is in it, it is its last card (it lies face up under
    the talon). `table` holds the bout's (attacking card, beating card or None) pairs. `done` lists the
    attackers who have passed their right to add cards since the last beat, take or transfer. `limit` is the
    most attacking cards this bout may hold. `out` lists the players who have left the game, in order;
    `promoted` those of them who showed their passport cards (passport variant). A finished game has `fool`
    set, or None for a draw.
    """

    rules: DurakRules
    hands: tuple[tuple[str, ...], ...]
    talon: tuple[str, ...]
    trump: str
    discard: tuple[str, ...]
    table: tuple[tuple[str, str | None], ...]
    attacker: int
    defender: int
    done: tuple[int, ...]
    taking: bool
    limit: int
    bout: int
    out: tuple[int, ...]
    passports: tuple[str, ...]
    promoted: tuple[int, ...]
    finished: bool
    fool: int | None

    @property
    def trump_suit(self) -> str:
        return self.trump[1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "hands": [list(hand) for hand in self.hands],
            "talon": list(self.talon),
            "trump": self.trump,
            "discard": list(self.discard),
            "table": [[attack, defence] for attack, defence in self.table],
            "attacker": self.attacker,
            "defender": self.defender,
            "done": list(self.done),
            "taking": self.taking,
            "limit": self.limit,
            "bout": self.bout,
            "out": list(self.out),
            "passports": list(self.passports),
            "promoted": list(self.promoted),
            "finished": self.finished,
            "fool": self.fool,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GameState":
        """The state `to_dict` gave (trusted input: the engine's own snapshots)."""
        try:
            return cls(
                rules=DurakRules.parse(data["rules"]),
                hands=tuple(tuple(hand) for hand in data["hands"]),
                talon=tuple(data["talon"]),
                trump=data["trump"],
                discard=tuple(data["discard"]),
                table=tuple((attack, defence) for attack, defence in data["table"]),
                attacker=data["attacker"],
                defender=data["defender"],
                done=tuple(data["done"]),
                taking=data["taking"],
                limit=data["limit"],
                bout=data["bout"],
                out=tuple(data["out"]),
                passports=tuple(data["passports"]),
                promoted=tuple(data["promoted"]),
                finished=data["finished"],
                fool=data["fool"],
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise Refused("bad_message", f"not a Durak game state: {exc}") from exc


_FIELDS = tuple(field.name for field in fields(GameState))
_INDEX = {name: index for index, name in enumerate(_FIELDS)}
_values = attrgetter(*_FIELDS)


def evolve(state: GameState, **changes: Any) -> GameState:
    """`dataclasses.replace(state, **changes)`, about twice as fast (the hard bot's play-outs make many
    states): the same fields, the same checks (none), the same value."""
    values = list(_values(state))
    for name, value in changes.items():
        values[_INDEX[name]] = value
    return GameState(*values)


def next_active(state: GameState, seat: int) -> int:
    """The first player after `seat`, clockwise, who is still in the game."""
    return seat_after(state.rules.players, state.out, seat)


def seat_after(players: int, out: Collection[int], seat: int) -> int:
    """The first of `players` seats after `seat`, clockwise, not in `out`."""
    for step in range(1, players + 1):
        candidate = (seat + step) % players
        if candidate not in out:
            return candidate
    raise AssertionError("no player left in the game")


def attackers(state: GameState) -> list[int]:
    """Who may add attacking cards this bout, in the rules' order (the principal attacker first, then
    (neighbours) the defender's left neighbour or (all sides) everyone else clockwise from the defender's
    left): the order in which bots playing each other move and `legal_actions` lists them."""
    order = [state.attacker]
    if state.rules.players == 2:  # the defender is the only other player
        return order
    if state.rules.attack == NEIGHBOURS:
        left = next_active(state, state.defender)
        if left != state.attacker:
            order.append(left)
    elif state.rules.attack == ALL_SIDES:
        seat = next_active(state, state.defender)
        while seat != state.defender:
            if seat != state.attacker:
                order.append(seat)
            seat = next_active(state, seat)
    return order


def throwers(state: GameState) -> list[int]:
    """The attackers who may add cards now, all at once (whoever comes first): every one in `attackers`
    order who has cards and has not said done since the last beat, take or transfer. Empty before the lead
    (the principal attacker leads alone) and when every attacker is done (the bout can close)."""
    if not state.table:
        return []
    return [seat for seat in attackers(state) if state.hands[seat] and seat not in state.done]


def thrower(state: GameState) -> int | None:
    """The first of `throwers` in the rules' order (who moves next when bots play each other), or None
    when every attacker is done."""
    for seat in attackers(state):
        if state.hands[seat] and seat not in state.done:
            return seat
    return None
