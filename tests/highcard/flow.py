"""High card's pure flow: a table's state, the commands and `decide` (no database, no clock)."""

from dataclasses import dataclass, replace

from cards.errors import Refused
from cards.fairness import shuffled_cards

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = tuple(rank + suit for suit in SUITS for rank in RANKS)


@dataclass(frozen=True)
class State:
    id: int
    version: int
    stake: int
    #: Each seat's (user id, name), or None.
    seats: tuple[tuple[int, str] | None, ...]
    closed: bool = False
    #: The last round: each player's (user id, name, card), and the winner's id.
    draws: tuple[tuple[int, str, str], ...] = ()
    winner: int | None = None


@dataclass(frozen=True)
class Sit:
    user: int
    name: str
    expected: int


@dataclass(frozen=True)
class Leave:
    user: int
    expected: int


@dataclass(frozen=True)
class Deal:
    """Any seated player deals: `server_seed` is drawn by the owner, revealed with the round."""

    user: int
    expected: int
    server_seed: str


@dataclass(frozen=True)
class Close:
    pass


@dataclass(frozen=True)
class Present:
    """Who has a socket open (the runtime's presence): high card keeps no such marks."""

    users: frozenset[int]


Command = Sit | Leave | Deal | Close | Present


@dataclass(frozen=True)
class Outcome:
    state: State
    #: The round dealt: its server seed (None: no round).
    server_seed: str | None = None


def strength(card: str) -> tuple[int, int]:
    return RANKS.index(card[0]), SUITS.index(card[1])


def decide(state: State, command: Command) -> Outcome | None:
    """The outcome of `command`; raises `Refused` with nothing changed."""
    if isinstance(command, Present):
        return None
    if isinstance(command, Close):
        return None if state.closed else Outcome(replace(state, version=state.version + 1, closed=True))
    if command.expected != state.version:
        raise Refused("stale_version", "The table changed; look again.")
    if state.closed:
        raise Refused("table_closed", "The table is closed.")
    seated = [seat[0] for seat in state.seats if seat is not None]
    match command:
        case Sit(user, name):
            if user in seated:
                raise Refused("already_seated", "You are seated already.")
            if None not in state.seats:
                raise Refused("table_full", "Every seat is taken.")
            seats = list(state.seats)
            seats[seats.index(None)] = (user, name)
            return Outcome(replace(state, version=state.version + 1, seats=tuple(seats)))
        case Leave(user):
            if user not in seated:
                raise Refused("not_seated", "You are not seated.")
            seats = tuple(None if seat is not None and seat[0] == user else seat for seat in state.seats)
            return Outcome(replace(state, version=state.version + 1, seats=seats))
        case Deal(user, _, server_seed):
            if user not in seated:
                raise Refused("not_seated", "Sit down to deal.")
            if len(seated) < 2:
                raise Refused("need_players", "Two players are needed.")
            deck = shuffled_cards(DECK, server_seed=server_seed, client_seed=str(state.version))
            players = [seat for seat in state.seats if seat is not None]
            draws = tuple((uid, name, card) for (uid, name), card in zip(players, deck, strict=False))
            winner = max(draws, key=lambda draw: strength(draw[2]))[0]
            after = replace(state, version=state.version + 1, draws=draws, winner=winner)
            return Outcome(after, server_seed=server_seed)
    raise Refused("bad_message", "Unknown command.")


def view(state: State, viewer: int | None) -> dict:
    """What every viewer sees (high card hides nothing: the cards are drawn face up)."""
    seats = [None if seat is None else {"user": seat[0], "name": seat[1]} for seat in state.seats]
    draws = [{"user": uid, "name": name, "card": card} for uid, name, card in state.draws]
    table = {"id": state.id, "stake": state.stake, "closed": state.closed, "seats": seats}
    return {
        "type": "state",
        "v": state.version,
        "you": viewer,
        "table": table | {"draws": draws, "winner": state.winner},
    }
