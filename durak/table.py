"""A live Durak table's flow, pure (no Django, no I/O, no clock): the table in memory and what each command
does to it.

`decide(table, command, now)` returns an `Outcome` (the new table, the engine action to log, the game started,
the chips to settle) or raises `Refused` (a code and a message), leaving the table as it was: tables are
values. The actor (`durak.actor`) persists an outcome and swaps the new table in after the commit.

The waiting room: players sit and leave between games, any seated player adds bots to empty seats, and each
player says `Ready`. The game starts when every seated player is ready (bots always are) and at least two
seats are taken, or when the table's opener says `Start` once at least two seats are ready (the opener
counts as ready): the ready seats play, an unready player sits this game out. The playing seats are moved to
the front first, in their order (seat n is the engine's player n), so a game of k players is the engine's
k-player game whatever the number of seats. The match (passports, who leads) goes on while the same players
play; another line-up starts a new one.

Nobody can stall a game. Whoever must move next (`to_act`) has a turn deadline: `turn_seconds` for a
player, `bot_seconds` for a bot or an away player. A bot moves at the table's `bot_level`, knowing what the
table's players saw (`Game.seen`: the cards picked up, who drew the trump). When a player's passes, the table
moves for them (`timeout_action`): an attacker is done, a defender takes, and a lead that is due (a bout
cannot be skipped) is the `normal` bot's. Throwing in is simultaneous (every attacker in the engine's
`throwers` may add at once, in any order): the table waits first for the bots and for the players with
nothing to add (their short deadline), then for the other players together, on one deadline that a `done`
does not restart; when it passes, each of them not yet done is done (one expiry each, at once).

A player left without a socket at the table (`Present`: who has one, as the table's owner counts them) has
`GRACE_SECONDS` to come back; then, or at once if they leave, they are `away`: the bot plays their seat to
the game's end at `normal` (`STAND_IN_LEVEL`, whatever the table's bots play), and they settle (stake,
rating) as the seat does, so an absent player left holding cards loses as the fool.

Nobody can hold a table between games either. A seated player without a socket there has the same grace,
then their seat is freed; once a seat is ready, every seated player has `READY_SECONDS` to be ready too, then
the unready stand up, and if every seat left is ready (two at least) the game is dealt. The table's `deadline`
(the actor's one timer) is the earliest of the turn deadline, the graces and that ready deadline; `Expire` is
keyed on the version. A table that no player holds a seat at between games closes (it leaves the lobby).
Staff close a table (`Close`: at once between games, after the game in play otherwise, everyone stood up) and
open it again (`Reopen`).

Chips (stake > 0): each player antes the stake into the pot at the deal (bots play without chips). At the
end, a draw, a bot fool, or a fool with no other player at the table refunds every stake; otherwise the fool's
stake is shared by the players who went out: stake // k each, the remainder one chip each to the first out.
"""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from cards.errors import Refused
from cards.fairness import client_seed_of, seed_digests, seed_hash
from durak import bot
from durak.bots import knowledge
from durak.bots.knowledge import Seen
from durak.engine import (
    DurakRules,
    GameState,
    Match,
    apply,
    new_match,
    record_game,
    shuffled_deck,
    start_game,
)
from durak.engine.game import ACTIONS, legal_actions
from durak.engine.state import throwers

#: Table commands besides the engine's actions.
TABLE_ACTIONS = ("sit", "leave", "add_bot", "ready", "start")
WAITING, PLAYING, CLOSED = "waiting", "playing", "closed"
#: How long a player whose connection went keeps their seat (in a game: before the bot takes it over).
GRACE_SECONDS = 30
#: Between games, how long the seated players have to be ready once a seat is.
READY_SECONDS = 60
#: The bot level that moves for a player who is away or whose turn time ran out (whatever the table's bots').
STAND_IN_LEVEL = "normal"


@dataclass(frozen=True, slots=True)
class Seat:
    number: int
    user_id: int | None = None
    name: str = ""
    is_bot: bool = False
    away: bool = False
    #: Ready for the next game (bots always are).
    ready: bool = False
    #: The seed the player gave with their ready (or start): the next game's deck mixes every playing seat's.
    seed: str = ""
    #: Since when the player has had no connection (None: connected, or never seen).
    gone: datetime | None = None
    #: The player's account is suspended or closed: they may leave, nothing else (`Release`).
    barred: bool = False

    @property
    def empty(self) -> bool:
        return self.user_id is None and not self.is_bot

    @property
    def is_ready(self) -> bool:
        return self.is_bot or (self.user_id is not None and self.ready)

    @property
    def robot(self) -> bool:
        """Whether the bot moves for this seat (a bot's seat, or an away player's)."""
        return self.is_bot or self.away


@dataclass(frozen=True, slots=True)
class Logged:
    """The engine action that made the new version, for the action log (and the game's last move,
    which the players are told)."""

    seat: int
    action: dict
    by_bot: bool


@dataclass(frozen=True, slots=True)
class Bout:
    """A bout that closed, as its cards lay on the table (every one face up: public), and who took them (the
    defender's seat; None: beaten off)."""

    pairs: tuple[tuple[str, str | None], ...]
    took: int | None

    @property
    def cards(self) -> int:
        return sum(1 + (defence is not None) for _, defence in self.pairs)


def closed_bout(before: GameState, action: dict, after: GameState) -> Bout | None:
    """The bout `action` closed (None: it closed none): the table before it with the action's own card laid
    (a last throw-in or beat may close a bout), and whether the defender took."""
    if after.bout == before.bout:
        return None
    pairs = list(before.table)
    kind = action.get("action")
    if kind in ("attack", "transfer"):
        pairs.append((action["card"], None))
    elif kind == "beat":
        pairs = [
            (attack, action["card"] if attack == action["target"] else defence) for attack, defence in pairs
        ]
    if not pairs:
        return None
    took = before.defender if before.taking or kind == "take" else None
    return Bout(tuple(pairs), took)


def last_bout_of(state: GameState, actions: Iterable[dict]) -> Bout | None:
    """The last bout closed in a game dealt as `state` and played with `actions` (the action log): what the
    table shows after a reload, as it did live."""
    last = None
    for action in actions:
        after = apply(state, action)
        last = closed_bout(state, action, after) or last
        state = after
    return last


@dataclass(frozen=True, slots=True)
class Game:
    number: int
    players: tuple[int | None, ...]
    state: GameState
    first_version: int
    server_seed: str
    server_seed_hash: str
    client_seed: str
    stake: int
    rated: bool
    #: The match at the deal.
    match: Match
    payouts: tuple[int, ...] = ()
    #: The seats whose player had left (or was stood up) when the game ended: the bot played them out.
    left: tuple[int, ...] = ()
    #: The SHA-256 digests of the playing players' seeds, sorted (`cards.fairness.seed_digests`): each player
    #: finds their own among them, and the client seed is made of them.
    seed_digests: tuple[str, ...] = ()
    id: int | None = None
    #: The game's last move (None before the first).
    last: Logged | None = None
    #: The last bout that closed (None before the first closed): shown until the next closes.
    last_bout: Bout | None = None
    #: Per seat, a rated game's player's rating before and after it (None: a bot's seat), once it is settled.
    ratings: tuple[tuple[float, float] | None, ...] = ()
    #: What every player at the table has seen of the game's history (the cards picked up, who drew the
    #: trump: `durak.bots.knowledge`), for the bots; kept with each move, rebuilt from the action log on load.
    seen: Seen | None = None


@dataclass(frozen=True, slots=True)
class Table:
    id: int
    name: str
    variant: str
    attack: str
    limit: str
    seats: tuple[Seat, ...]
    stake: int
    rated: bool
    turn_seconds: int
    status: str = WAITING
    version: int = 0
    #: The actor's timer: the earliest of `turn_deadline` and the graces of players gone during a game.
    deadline: datetime | None = None
    #: When the seat `to_act` is moved for.
    turn_deadline: datetime | None = None
    #: The user who opened the table: they may start a game once two seats are ready.
    opener: int | None = None
    game: Game | None = None
    #: The match (passports, fools); None before the first game. A match that is over starts anew.
    match: Match | None = None
    games_played: int = 0
    #: The server seed of the next game, committed before anyone gives a seed for it: its hash is in every
    #: view, the seed itself only once that game is over (the deal can't be chosen after the players' seeds).
    next_server_seed: str = ""
    #: Between games, once a seat is ready: when the unready seated players stand up.
    ready_deadline: datetime | None = None
    #: Staff closed the table during a game: it closes when the game ends.
    closing: bool = False
    #: How well the table's bots play (`durak.bot.LEVELS`); an away player's seat is played at `normal`.
    bot_level: str = bot.DEFAULT_LEVEL

    def rules(self, players: int) -> DurakRules:
        return DurakRules(players=players, variant=self.variant, attack=self.attack, limit=self.limit)

    def in_game(self, seat: Seat) -> bool:
        """Whether `seat` plays the game in play (the playing seats are the first ones)."""
        return self.status == PLAYING and self.game is not None and seat.number < len(self.game.players)

    def seat_of(self, user_id: int | None) -> Seat | None:
        return next((seat for seat in self.seats if user_id is not None and seat.user_id == user_id), None)

    def to_act(self) -> int | None:
        """The seat whose move the table waits for (None: no game in play): the leader, the defender with
        unbeaten cards, else of the attackers who may add (`throwers`, all at once) first a bot or an away
        player, or a player with nothing to add (so they move after the short pause), in the rules' order;
        else the first of them in that order."""
        if self.status != PLAYING or self.game is None:
            return None
        state = self.game.state
        seat = bot.actor(state)
        if seat is None or seat == state.defender or not state.table:
            return seat
        quick = (s for s in throwers(state) if self.seats[s].robot or only_done(state, s))
        return next(quick, seat)


# --- commands ---


@dataclass(frozen=True, slots=True)
class Sit:
    user_id: int
    name: str
    expected: int | None = None
    #: The player's account is suspended or closed (read by the owner when the command is made).
    barred: bool = False


@dataclass(frozen=True, slots=True)
class Leave:
    user_id: int
    expected: int | None = None


@dataclass(frozen=True, slots=True)
class AddBot:
    user_id: int
    expected: int | None = None


@dataclass(frozen=True, slots=True)
class Ready:
    """The player is ready for the next game, with their own seed; if this makes every seated player ready,
    the game is dealt from the table's committed server seed and the playing seats' seeds, and `fresh_seed`
    (drawn by the server with the command) becomes the committed seed of the game after it."""

    user_id: int
    fresh_seed: str
    seed: str
    expected: int | None = None


@dataclass(frozen=True, slots=True)
class Present:
    """Who has a socket open at the table, as its owner counts them (`live.presence`): the other seated
    players are marked gone from now (their grace runs; a mark already set keeps its time), these players'
    marks are cleared. An away player stays away for the rest of the game."""

    players: frozenset[int]


@dataclass(frozen=True, slots=True)
class Start(Ready):
    """The table's opener starts the game with the seats ready now (the opener among them)."""


@dataclass(frozen=True, slots=True)
class Act:
    user_id: int
    action: dict
    expected: int | None = None


@dataclass(frozen=True, slots=True)
class Expire:
    """The timer of `version` rang; `fresh_seed` (drawn by the server) becomes the committed seed of the game
    after the one it may deal."""

    version: int
    fresh_seed: str = ""


@dataclass(frozen=True, slots=True)
class Release:
    """Staff stand a player up (a suspension, a closed account): their seat is barred at once; in a game the
    bot plays it to the end and it settles as the seat does (as if they had left), between games it is
    freed."""

    user_id: int


@dataclass(frozen=True, slots=True)
class Close:
    """Staff close the table: between games at once, everyone stood up; during a game when it ends."""


@dataclass(frozen=True, slots=True)
class Reopen:
    """Staff open a closed table again (or keep open one that was to close after its game)."""


Command = Sit | Leave | AddBot | Ready | Start | Act | Present | Expire | Release | Close | Reopen


@dataclass(frozen=True, slots=True)
class Outcome:
    table: Table
    logged: Logged | None = None
    started: bool = False
    #: The game ended with this command: the pot is paid out (`Game.payouts`) and the players rated.
    settled: bool = False
    seats_changed: bool = False


def decide(
    table: Table,
    command: Command,
    now: datetime,
    *,
    bot_seconds: float = 1.0,
    grace_seconds: float = GRACE_SECONDS,
) -> Outcome | None:
    """The outcome of `command`, None if it changes nothing (an expiry of an older version or before its
    time, a presence that changes nothing); raises Refused. A command carrying the version its sender saw
    (`expected`) is refused on any other: a resent command is applied once."""
    expected = getattr(command, "expected", None)
    if expected is not None and expected != table.version:
        raise Refused("stale_version", "The table has moved on since you looked; here is its state now.")
    if table.status == CLOSED and not isinstance(command, Expire | Present | Release | Close | Reopen):
        raise Refused("table_closed", "This table is closed.")
    _refuse_barred(table, command)
    outcome: Outcome | None
    match command:
        case Sit():
            outcome = _sit(table, command)
        case Leave():
            outcome = _leave(table, command)
        case AddBot():
            outcome = _add_bot(table, command)
        case Start():  # before Ready, which it extends
            outcome = _start(table, command)
        case Ready():
            outcome = _ready(table, command)
        case Act():
            outcome = _act(table, command)
        case Present():
            outcome = _present(table, command, now)
        case Expire():
            outcome = _expire(table, command, now, grace_seconds)
        case Release():
            outcome = _release(table, command)
        case Close():
            outcome = _close(table)
        case Reopen():
            outcome = _reopen(table)
        case _:
            raise Refused("bad_message", "Unknown command.")
    if outcome is None:
        return None
    new = replace(outcome.table, version=table.version + 1)
    moved = outcome.logged is not None or outcome.started
    shared = outcome.logged is not None and _throwers_wait_on(table, new, outcome.logged)
    table = _with_deadlines(table, new, now, moved, shared, bot_seconds, grace_seconds)
    return replace(outcome, table=table)


def _refuse_barred(table: Table, command: Command) -> None:
    """A suspended or closed account may leave its seat and nothing else: no seat, no game, no bot."""
    if isinstance(command, Sit):
        barred = command.barred
    elif isinstance(command, Ready | AddBot | Act):  # Start is a Ready
        seat = table.seat_of(command.user_id)
        barred = seat is not None and seat.barred
    else:
        return
    if barred:
        raise Refused("suspended", "Your account is suspended or closed: you cannot play.")


def _with_deadlines(
    old: Table, new: Table, now: datetime, moved: bool, shared: bool, bot_seconds: float, grace_seconds: float
) -> Table:
    """`new` with its turn deadline (kept while the same seat still has the same move to make, or while the
    players adding cards still think after a `done`: `shared`) and the actor's timer: the earliest of it and
    the graces of players gone during the game."""
    seat = new.to_act()
    if seat is None:
        turn = None
    elif shared or (not moved and old.to_act() == seat and old.seats[seat].robot == new.seats[seat].robot):
        turn = old.turn_deadline
    else:
        assert new.game is not None  # a seat is to act in a game
        quick = new.seats[seat].robot or only_done(new.game.state, seat)
        turn = now + timedelta(seconds=bot_seconds if quick else new.turn_seconds)
    ready = None
    if _ready_check(new):
        ready = old.ready_deadline if _ready_check(old) else now + timedelta(seconds=READY_SECONDS)
    graces = [_grace_end(s, grace_seconds) for s in new.seats if _in_grace(new, s)]
    times = [t for t in (turn, ready, *graces) if t is not None]
    return replace(new, turn_deadline=turn, ready_deadline=ready, deadline=min(times) if times else None)


def only_done(state: GameState, seat: int) -> bool:
    """Whether the seat can only say it is done (an attacker with no card of a rank on the table, or a full
    bout): the table then says it for them after the bots' short pause (`timeout_action`), instead of making
    every other player wait for the click or the turn's time."""
    options = legal_actions(state, seat)
    return bool(options) and all(option["action"] == "done" for option in options)


def _thinking(table: Table) -> bool:
    """Whether the table waits for players adding cards (`throwers`) on their shared deadline: the seat to act
    is one of them, and a player (not a bot, not away) with something to add."""
    seat = table.to_act()
    game = table.game
    if seat is None or game is None or not game.state.table or seat not in throwers(game.state):
        return False
    return not table.seats[seat].robot and not only_done(game.state, seat)


def _throwers_wait_on(old: Table, new: Table, logged: Logged) -> bool:
    """Whether `logged` (a `done`, clicked or timed out) leaves the table waiting, as before it, for players
    adding cards: their shared deadline then runs on (a done does not give the others more time)."""
    return (
        logged.action.get("action") == "done"
        and old.turn_deadline is not None
        and _thinking(old)
        and _thinking(new)
        and new.game is not None
        and old.game is not None
        and new.game.state.bout == old.game.state.bout
    )


def _in_grace(table: Table, seat: Seat) -> bool:
    """Whether the seat's player is gone and their grace runs: in the game (then the bot takes the seat
    over), or between games (then the seat is freed)."""
    if seat.gone is None or seat.away:
        return False
    return table.in_game(seat) or (table.status == WAITING and seat.user_id is not None)


def _ready_check(table: Table) -> bool:
    """Whether the table waits between games for unready players while a seat is ready (the ready deadline
    runs)."""
    if table.status != WAITING:
        return False
    taken = [s for s in table.seats if not s.empty]
    return any(s.is_ready for s in taken) and any(not s.is_ready for s in taken)


def _grace_end(seat: Seat, grace_seconds: float) -> datetime:
    gone = seat.gone
    assert gone is not None  # asked only of a seat whose grace runs (`_in_grace`)
    return gone + timedelta(seconds=grace_seconds)


def lobby_row_changed(before: Table, after: Table) -> bool:
    """Whether the lobby's row of the table (its status, the seats taken) differs between the two."""
    return before.status != after.status or sum(not s.empty for s in before.seats) != sum(
        not s.empty for s in after.seats
    )


def _with_seat(table: Table, seat: Seat) -> Table:
    return replace(table, seats=tuple(seat if s.number == seat.number else s for s in table.seats))


def _sit(table: Table, command: Sit) -> Outcome:
    if table.closing:
        raise Refused("table_closed", "This table closes when the game in play ends.")
    if table.seat_of(command.user_id) is not None:
        raise Refused("already_seated", "You already hold a seat here.")
    free = next((seat for seat in table.seats if seat.empty), None)
    if free is None:
        raise Refused("table_full", "Every seat is taken.")
    seat = replace(free, user_id=command.user_id, name=command.name)
    return Outcome(_with_seat(table, seat), seats_changed=True)


def _leave(table: Table, command: Leave) -> Outcome:
    seat = table.seat_of(command.user_id)
    if seat is None:
        raise Refused("not_seated", "You hold no seat here.")
    if table.in_game(seat):
        if seat.away:
            raise Refused("already_away", "You have left; the bot plays your seat until the game ends.")
        return Outcome(_with_seat(table, replace(seat, away=True)), seats_changed=True)
    return Outcome(_closed_if_empty(_with_seat(table, Seat(seat.number))), seats_changed=True)


def _release(table: Table, command: Release) -> Outcome | None:
    seat = table.seat_of(command.user_id)
    if seat is None:
        return None
    if table.in_game(seat):
        released = replace(seat, away=True, barred=True, ready=False)
        return Outcome(_with_seat(table, released), seats_changed=True)
    return Outcome(_closed_if_empty(_with_seat(table, Seat(seat.number))), seats_changed=True)


def _closed_if_empty(table: Table) -> Table:
    """A table between games that no player holds a seat at: its bots leave, and a player's table closes (it
    leaves the lobby); the site's own (no opener: the demo tables) stays open for the next players."""
    if table.status != WAITING or any(seat.user_id is not None for seat in table.seats):
        return table
    if table.opener is None:
        return replace(table, seats=tuple(Seat(seat.number) for seat in table.seats))
    return _closed(table)


def _closed(table: Table) -> Table:
    return replace(
        table, status=CLOSED, closing=False, seats=tuple(Seat(seat.number) for seat in table.seats)
    )


def _close(table: Table) -> Outcome | None:
    if table.status == CLOSED or table.closing:
        return None
    if table.status == PLAYING:
        return Outcome(replace(table, closing=True))
    return Outcome(_closed(table), seats_changed=True)


def _reopen(table: Table) -> Outcome | None:
    if table.status == CLOSED:
        return Outcome(replace(table, status=WAITING))
    if table.closing:
        return Outcome(replace(table, closing=False))
    return None


def bot_name(number: int) -> str:
    """A bot is named after its seat (the table stores no names: a bot moved to another seat is renamed)."""
    return f"Bot {number + 1}"


def _add_bot(table: Table, command: AddBot) -> Outcome:
    if table.seat_of(command.user_id) is None:
        raise Refused("not_seated", "Sit down first to add a bot.")
    if table.status != WAITING:
        raise Refused("game_in_play", "Bots join between games.")
    free = next((seat for seat in table.seats if seat.empty), None)
    if free is None:
        raise Refused("table_full", "Every seat is taken.")
    return Outcome(
        _with_seat(table, replace(free, is_bot=True, name=bot_name(free.number))), seats_changed=True
    )


def _ready(table: Table, command: Ready) -> Outcome:
    seat = table.seat_of(command.user_id)
    if seat is None:
        raise Refused("not_seated", "Sit down first.")
    if table.status != WAITING:
        raise Refused("game_in_play", "A game is in play: get ready when it ends.")
    if seat.ready:
        raise Refused("already_ready", "You are ready; the game starts when everyone is.")
    table = _with_seat(table, replace(seat, ready=True, seed=command.seed))
    taken = [s for s in table.seats if not s.empty]
    if len(taken) >= 2 and all(s.is_ready for s in taken):
        return replace(_deal(table, command), seats_changed=True)
    return Outcome(table, seats_changed=True)


def _start(table: Table, command: Start) -> Outcome:
    seat = table.seat_of(command.user_id)
    if seat is None:
        raise Refused("not_seated", "Only a seated player can start the game.")
    if table.status != WAITING:
        raise Refused("game_in_play", "A game is in play already.")
    if command.user_id != table.opener:
        raise Refused("not_opener", "The game starts when every player is ready (or the opener starts it).")
    table = _with_seat(table, replace(seat, ready=True, seed=command.seed))
    if sum(s.is_ready for s in table.seats) < 2:
        raise Refused("not_enough_ready", "A game needs two ready seats: add a bot or wait for a player.")
    return replace(_deal(table, command), seats_changed=True)


def _deal(table: Table, command: Ready | Expire) -> Outcome:
    """The ready seats play: moved to the front in their order, then the seated players sitting out, then
    the empty seats. The deck comes from the command's server seed and every playing player's seed (bots
    give none). The game is rated only at a rated table and with at least two players: bots carry no rating,
    so a game against bots alone cannot move one."""
    playing = [s for s in table.seats if s.is_ready]
    order = playing + [s for s in table.seats if not s.is_ready and not s.empty]
    order += [s for s in table.seats if s.empty]
    seats = tuple(replace(s, number=n, name=bot_name(n) if s.is_bot else s.name) for n, s in enumerate(order))
    table = replace(table, seats=seats)
    players = tuple(s.user_id for s in playing)
    digests = tuple(seed_digests([s.seed for s in playing if s.user_id is not None and not s.is_bot]))
    client_seed = client_seed_of(list(digests))
    server_seed = table.next_server_seed
    deck = shuffled_deck(server_seed=server_seed, client_seed=client_seed)
    same_players = table.game is not None and table.game.players == players
    match = table.match
    if match is None or match.over or not same_players or match.rules.players != len(players):
        match = new_match(table.rules(len(players)))
    state = start_game(match, deck)
    game = Game(
        seen=knowledge.start(state),
        number=table.games_played + 1,
        players=players,
        state=state,
        first_version=table.version + 1,
        server_seed=server_seed,
        server_seed_hash=seed_hash(server_seed),
        client_seed=client_seed,
        seed_digests=digests,
        stake=table.stake,
        rated=table.rated and sum(user is not None for user in players) >= 2,
        match=match,
    )
    started = replace(
        table,
        status=PLAYING,
        game=game,
        games_played=game.number,
        match=match,
        next_server_seed=command.fresh_seed,
    )
    return Outcome(started, started=True)


def _act(table: Table, command: Act) -> Outcome:
    seat = table.seat_of(command.user_id)
    if seat is None:
        raise Refused("not_seated", "Only a seated player can play.")
    if table.status != PLAYING or table.game is None:
        raise Refused("no_game", "No game is in play; start one.")
    if not table.in_game(seat):
        raise Refused("not_in_game", "You sit this game out; get ready for the next one.")
    if seat.away:
        raise Refused("away", "You left this game: the bot plays your seat until it ends.")
    action = command.action
    if not isinstance(action, dict) or action.get("action") not in ACTIONS:
        raise Refused("bad_message", f"An action is one of {', '.join(ACTIONS)}.")
    action = {**action, "player": seat.number}
    back = seat.gone is not None
    table = _with_seat(table, replace(seat, gone=None)) if back else table
    return _played(table, seat.number, action, by_bot=False, seats_changed=back)


def _present(table: Table, command: Present, now: datetime) -> Outcome | None:
    """The players' connections as the owner counts them: graces start or end (None: no seat changes, e.g.
    a spectator or a second tab came or went)."""
    seats = tuple(
        replace(seat, gone=None if seat.user_id in command.players else (seat.gone or now))
        if seat.user_id is not None and not seat.away
        else seat
        for seat in table.seats
    )
    if seats == table.seats:
        return None
    return Outcome(replace(table, seats=seats), seats_changed=True)


def _expire(table: Table, command: Expire, now: datetime, grace_seconds: float) -> Outcome | None:
    """The timer of `command.version` rang: players whose grace is over go away (the bot takes their seat),
    and if the turn deadline passed the table moves for the seat to act. Between games: see
    `_expire_waiting`."""
    if command.version != table.version:
        return None
    if table.status == WAITING:
        return _expire_waiting(table, command, now, grace_seconds)
    seats = tuple(
        replace(s, away=True) if _in_grace(table, s) and _grace_end(s, grace_seconds) <= now else s
        for s in table.seats
    )
    changed = seats != table.seats
    after = replace(table, seats=seats)
    seat, game = table.to_act(), table.game
    if seat is not None and table.turn_deadline is not None and table.turn_deadline <= now:
        assert game is not None  # a seat is to act in a game
        moving = table.seats[seat]
        if moving.is_bot:
            action = bot.choose(game.state, seat, level=table.bot_level, seen=game.seen)
        elif moving.away:
            action = bot.choose(game.state, seat, level=STAND_IN_LEVEL, seen=game.seen)
        else:
            action = timeout_action(game.state, seat, game.seen)
        assert action is not None  # the seat to act has a move
        return _played(after, seat, action, by_bot=True, seats_changed=changed)
    return Outcome(after, seats_changed=True) if changed else None


def _expire_waiting(table: Table, command: Expire, now: datetime, grace_seconds: float) -> Outcome | None:
    """Between games: players gone past their grace stand up, and so do the unready once the ready deadline
    passed; then, if every seat left is ready (two at least), the game is dealt."""
    late = table.ready_deadline is not None and table.ready_deadline <= now

    def stands_up(seat: Seat) -> bool:
        if seat.user_id is None:
            return False
        return (_in_grace(table, seat) and _grace_end(seat, grace_seconds) <= now) or (
            late and not seat.ready
        )

    seats = tuple(Seat(seat.number) if stands_up(seat) else seat for seat in table.seats)
    if seats == table.seats:
        return None
    after = _closed_if_empty(replace(table, seats=seats))
    taken = [s for s in after.seats if not s.empty]
    if after.status == WAITING and len(taken) >= 2 and all(s.is_ready for s in taken) and command.fresh_seed:
        return replace(_deal(after, command), seats_changed=True)
    return Outcome(after, seats_changed=True)


def timeout_action(state: GameState, seat: int, seen: Seen | None = None) -> dict:
    """What the table does for a player whose turn time ran out: a defender takes, an attacker is done; a
    lead cannot be skipped, so it is the `normal` bot's (knowing `seen`)."""
    kinds = {option["action"] for option in legal_actions(state, seat)}
    if "take" in kinds:
        return {"action": "take", "player": seat}
    if "done" in kinds:
        return {"action": "done", "player": seat}
    lead = bot.choose(state, seat, level=STAND_IN_LEVEL, seen=seen)
    assert lead is not None  # the seat whose turn it is has a move
    return lead


def _played(table: Table, seat: int, action: dict, *, by_bot: bool, seats_changed: bool) -> Outcome:
    in_play = table.game
    assert in_play is not None  # a move is played in the game in play
    state = apply(in_play.state, action)  # the engine refuses with the site's `Refused`
    logged = Logged(seat, action, by_bot)
    bout = closed_bout(in_play.state, action, state) or in_play.last_bout
    seen = knowledge.observe(in_play.seen, in_play.state, action, state) if in_play.seen is not None else None
    game = replace(in_play, state=state, last=logged, last_bout=bout, seen=seen)
    if not state.finished:
        return Outcome(replace(table, game=game), logged=logged, seats_changed=seats_changed)
    left = tuple(s.number for s in table.seats if s.away and s.number < len(game.players))
    game = replace(game, payouts=settle(game), left=left)
    seats = tuple(
        Seat(seat.number) if seat.away else replace(seat, ready=False, seed="") for seat in table.seats
    )
    ended = replace(table, game=game, status=WAITING, match=record_game(game.match, state), seats=seats)
    ended = _closed(ended) if table.closing else _closed_if_empty(ended)
    changed = seats_changed or ended.seats != table.seats
    return Outcome(ended, logged=logged, settled=True, seats_changed=changed)


def seen_from_log(game: Game, actions: Iterable[dict]) -> Seen | None:
    """What the table's players saw of `game` (`Game.seen`), rebuilt from its action log: the deal again
    (the game's seeds, the match at the deal), each action applied and observed. None if the log does not
    lead to the game's state (it always does, unless the rows were changed by hand)."""
    state = start_game(game.match, shuffled_deck(server_seed=game.server_seed, client_seed=game.client_seed))
    seen = knowledge.start(state)
    try:
        for action in actions:
            after = apply(state, action)
            seen = knowledge.observe(seen, state, action, after)
            state = after
    except Refused:
        return None
    return seen if state == game.state else None


def settle(game: Game) -> tuple[int, ...]:
    """Per seat, the chips its player gets back from the pot at the end (the module's docstring has the rule).
    The sum is the pot: every player's stake."""
    players, stake, state = game.players, game.stake, game.state
    humans = [seat for seat, user in enumerate(players) if user is not None]
    payouts = [0] * len(players)
    if stake == 0:
        return tuple(payouts)
    fool = state.fool
    winners = [seat for seat in state.out if seat in humans and seat != fool]
    if fool is None or players[fool] is None or not winners:
        for seat in humans:
            payouts[seat] = stake
        return tuple(payouts)
    share, remainder = divmod(stake, len(winners))
    for index, seat in enumerate(winners):
        payouts[seat] = stake + share + (1 if index < remainder else 0)
    return tuple(payouts)
