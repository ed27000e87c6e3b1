"""The Durak table actor: the one owner, in this process, of a live Durak table (`live.actor.Actor`).

It takes the table's lease and loads the table once (`live.lease.acquire`; another live process's lease
raises `OwnedElsewhere`, and the command goes to that owner: `durak.remote`), decides each command on the
table in memory with the pure flow (`durak.table.decide`, which asks the pure engine), writes the outcome in
ONE short transaction whose first statement is the fence (`_FENCE`: `UPDATE ... WHERE id AND version AND
epoch`; no row means another writer moved the table or another process took it over: drop the memory and
load again, which takes the lease again or learns the new owner), and swaps the new table in only after the
commit. The turn deadline is the base's timer: when it rings, the bot moves for the seat the table waits for
(`Expire`, keyed on the version). The process clock renews the leases of this process's actors
(`renew_leases`, one UPDATE) and applies the deadlines of tables nobody owns (`sweep`, `live.sweep`).

After each commit the actor announces "table N is at version v" to the table's group; each consumer then
sends its viewer that viewer's own view, built from the actor's memory here, or from the table as read
once in this process when another process owns it (`seen`).

Presence is the actor's memory, never stored (`connections`, `live.presence.CountingActor`, as blackjack's):
each socket at the table, on any process, tells the owner when it opens and closes (`presence`), and
`durak.table.Present` marks the seated players left without one (`Seat.gone`: their grace) and clears the
others. A new actor counts nobody, so its first load marks every seated player gone (`synced`; an action or
expiry sent against the version before those marks is taken as sent against theirs, `_past_marks`); the
sockets still open tell it again when they see the mark (`DurakConsumer._reannounce`). The sweep's actor
counts what an actor here counts, and marks only a table another owner held.
"""

import asyncio
import logging
from collections import OrderedDict
from dataclasses import replace
from datetime import datetime

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts import services as wallet
from durak import services
from durak.engine import GameState, Match
from durak.models import DurakAction, DurakGame, DurakSeat, DurakTable
from durak.table import (
    GRACE_SECONDS,
    Command,
    Expire,
    Game,
    Outcome,
    Present,
    Refused,
    Seat,
    Table,
    decide,
    lobby_row_changed,
)
from live import clock as live_clock
from live import lease, presence
from live.actor import Run
from live.lease import OwnedElsewhere
from tables import broadcast

logger = logging.getLogger(__name__)

#: Every write of an actor starts here: the table row moves from the version in memory to the outcome's, or
#: nothing is written. The epoch is the lease's: once another process has taken the table over, this one's
#: writes change nothing.
_FENCE = (
    f"UPDATE {DurakTable._meta.db_table} SET version = %s, status = %s, deadline = %s, turn_deadline = %s "
    "WHERE id = %s AND version = %s AND epoch = %s"
)


def group_name(table_id: int) -> str:
    return f"durak-{table_id}"


class Stale(Exception):
    """The table's version or epoch in the database is not the one in memory: another writer changed the
    table, or another process took it over."""


class DurakActor(presence.CountingActor):
    #: A player whose connection went keeps their seat in a game this long (`durak.table`).
    grace_seconds: float = GRACE_SECONDS

    def __init__(
        self, table_id: int, *, connections: presence.Connections | None = None, marks_on_load: bool = True
    ) -> None:
        super().__init__(table_id, _actors, connections=connections, marks_on_load=marks_on_load)
        self.table: Table | None = None
        self.epoch: int | None = None  # of the table's lease, taken when the table is loaded

    async def tell(self, command: Command, *, run: Run | None = None) -> int | None:
        """Queue a command and wait until it is applied: the new version (None: nothing changed); raises
        `Refused` with nothing changed."""
        if run is not None:
            self._run = run
        return await self._put(lambda: self.handle(command))

    def mark_present(self, now: datetime | None = None) -> int | None:
        """The seats marked as the sockets counted say (`durak.table.Present`)."""
        return self.handle(Present(self.connections.users()), now=now)

    async def current(self) -> Table:
        """The table in memory (loaded through the mailbox if it is not yet)."""
        return await self._put(self._loaded)

    def drop(self) -> None:
        """Forget the table and the sockets counted, and leave the registry: it changed hands, or a command
        failed. The next command here makes a new actor, which takes the lease again or learns who holds it
        (and the sockets tell it again when they see their players marked gone)."""
        self.table = self.epoch = None
        self.leave()

    def evict(self) -> None:
        """Idle: leave the registry, unless a game is in play here (its turn timer still has to ring; the
        next piece of work restarts the mailbox) or sockets are open at the table (their count is kept)."""
        if self.deadline() is not None and self.timers_enabled():
            return
        super().evict()

    def _loaded(self, now: datetime | None = None) -> Table:
        """The table in memory; loaded, with its lease taken, if it is not. Raises `OwnedElsewhere` when
        another live process holds the lease, or `DurakTable.DoesNotExist`: the actor is dropped. The first
        load marks the seats as the sockets counted here say (`synced`: a new owner counts nobody)."""
        if self.table is None:
            try:
                with transaction.atomic():
                    epoch = lease.acquire(DurakTable, self.key, now=timezone.now())
                    if epoch is None:
                        raise DurakTable.DoesNotExist(f"No Durak table {self.key}.")
                    table = load(self.key)
            except (OwnedElsewhere, DurakTable.DoesNotExist):
                self.drop()
                raise
            self.table, self.epoch = table, epoch
            self.synced(table.version, lambda: self.mark_present(now))
        return self.table

    def deadline(self) -> tuple[int, datetime] | None:
        table = self.table
        return (table.version, table.deadline) if table is not None and table.deadline else None

    def timers_enabled(self) -> bool:
        return settings.DURAK_TIMERS

    def expire(self, version: int, *, now: datetime | None = None) -> int | None:
        """The deadline of `version` passed: the bot moves for the seat the table waits for (once: the expiry
        is keyed on the version and the write fenced)."""
        try:
            return self.handle(Expire(version), now=now)
        except OwnedElsewhere:
            return None  # taken over: the new owner applies it
        except Exception:
            logger.exception("durak table %s: the deadline of version %s failed", self.key, version)
            return None

    def handle(self, command: Command, *, now: datetime | None = None) -> int | None:
        """Decide `command` on the table in memory and commit it; reload once if another writer moved it."""
        for _ in range(2):
            before = self._loaded(now)
            outcome = decide(
                before,
                self._past_marks(command),
                now or timezone.now(),
                bot_seconds=settings.DURAK_BOT_SECONDS,
                grace_seconds=self.grace_seconds,
            )
            if outcome is None:
                return None
            try:
                after = commit(before, outcome, epoch=self.epoch)
            except Stale:
                self.table = None  # loaded again: the lease taken again, or `OwnedElsewhere`
                continue
            except Refused:
                raise  # rolled back: the database is still the table in memory
            except BaseException:
                self.table = None
                raise
            self.table = after
            self._announce(after.version)
            if lobby_row_changed(before, after):
                broadcast.lobby_changed()
            return after.version
        raise Refused("stale_version", "The table changed while this action was applied; try again.")

    def _past_marks(self, command: Command) -> Command:
        """The command as sent against the first load's marks if it was sent against the version they
        replaced (`live.presence.CountingActor.past_marks`)."""
        if isinstance(command, Expire):
            version = self.past_marks(command.version)
            return command if version == command.version else Expire(version)
        expected = getattr(command, "expected", None)
        if expected is None or self.past_marks(expected) == expected:
            return command
        return replace(command, expected=self.past_marks(expected))

    def _announce(self, version: int) -> None:
        """Tell the table's viewers, in every process, that `version` is committed: sent on the actor's loop,
        or, for an actor without one (the clock's sweep), on the loop of this process's viewers; with no
        viewers here, from this thread to the other processes (a Redis layer)."""
        message = {"type": "durak.version", "v": version}
        layer, group = get_channel_layer(), group_name(self.key)
        loop = self._loop or _viewers_loop
        try:
            if loop is not None and loop.is_running():
                loop.call_soon_threadsafe(lambda: loop.create_task(layer.group_send(group, message)))
            elif not isinstance(layer, InMemoryChannelLayer):
                async_to_sync(layer.group_send, force_new_loop=True)(group, message)
        except Exception:  # the viewers catch up with the next version's notice
            logger.warning("durak table %s: version %s not announced", self.key, version, exc_info=True)


_actors: dict[int, DurakActor] = {}
#: The event loop of this process's Durak viewers (the server's; `watched_on`).
_viewers_loop: asyncio.AbstractEventLoop | None = None


def watched_on(loop: asyncio.AbstractEventLoop) -> None:
    """The loop this process's Durak viewers run on: announcements made off any actor's loop go there."""
    global _viewers_loop
    _viewers_loop = loop


def actor_for(table_id: int) -> DurakActor:
    actor = _actors.get(table_id)
    if actor is None:
        actor = _actors[table_id] = DurakActor(table_id)
    return actor


def forget_actors() -> None:
    """Drop every actor of this process and the tables read for viewers (tests)."""
    for actor in _actors.values():
        actor._disarm()
    _actors.clear()
    _read.clear()


def renew_leases(*, now: datetime | None = None) -> set[int]:
    """Renew the leases of every Durak table this process's actors hold, in one UPDATE (from the clock's
    thread), and drop the actors whose lease was lost. Returns the ids of those tables."""
    held = {
        key: actor.epoch
        for key, actor in list(_actors.items())
        if actor.epoch is not None and (actor.table is not None or actor.connections)
    }
    return live_clock.renew_held(DurakTable, _actors, held, now=now or timezone.now())


def sweep(*, now: datetime | None = None) -> int:
    """Apply the due turn deadlines of the Durak tables no live owner looks after (`live.sweep`). Returns
    how many changes were written."""
    now = now or timezone.now()
    if not settings.DURAK_TIMERS:
        return 0
    due = list(
        DurakTable.objects.filter(deadline__lte=now).values_list(
            "id", "version", "deadline", "owner", "lease_until"
        )
    )
    owners = {row[0]: row[3] for row in due}
    changed = 0
    for key, version in live_clock.unowned(due, _actors, now=now):
        # The claim's actor counts the sockets an actor here counts; it marks the seats only when an owner
        # held the table (that owner's count is gone).
        held = _actors.get(key)
        connections = held.connections if held is not None else None
        actor = DurakActor(key, connections=connections, marks_on_load=bool(owners[key]))
        applied = live_clock.claim(DurakTable, actor, version, now=now, registry=_actors)
        changed += applied is not None
    return changed


live_clock.register("durak", renew=renew_leases, sweep=sweep)

#: Tables read for the viewers of this process when another process owns them: table id -> the table as
#: last read (at most `_READ_KEPT`, the least recently read forgotten first).
_read: OrderedDict[int, Table] = OrderedDict()
_READ_KEPT = 256


async def seen(table_id: int, at_least: int = -1, *, fresh: bool = False) -> Table:
    """The table at version `at_least` or later, for views: the memory of this process's actor when it
    holds the table, else the table as read once in this process (read again when a newer version is
    asked for, or with `fresh`). Raises `DurakTable.DoesNotExist`."""
    actor = _actors.get(table_id)
    held = actor.table if actor is not None else None
    if held is not None and held.version >= at_least:
        return held
    known = _read.get(table_id)
    if fresh or known is None or known.version < at_least:
        known = await database_sync_to_async(load)(table_id)
        _read[table_id] = known
        while len(_read) > _READ_KEPT:
            _read.popitem(last=False)
    _read.move_to_end(table_id)
    return known


# --- the database side: load and commit ---


def load(table_id: int) -> Table:
    """The table as stored (raises DurakTable.DoesNotExist)."""
    row = DurakTable.objects.select_related("current_game").get(pk=table_id)
    seats = tuple(
        Seat(
            number=seat.number,
            user_id=seat.user_id,
            name=seat.user.public_name if seat.user_id else ("Bot" if seat.is_bot else ""),
            is_bot=seat.is_bot,
            away=seat.away,
            ready=seat.ready,
            seed=seat.seed,
            gone=seat.gone,
            barred=seat.user_id is not None and seat.user.barred,
        )
        for seat in DurakSeat.objects.filter(table_id=table_id).select_related("user").order_by("number")
    )
    seats = tuple(replace(s, name=f"Bot {s.number + 1}") if s.is_bot else s for s in seats)
    game = None
    if row.current_game is not None:
        g = row.current_game
        game = Game(
            id=g.pk,
            number=g.number,
            players=tuple(g.players),
            state=GameState.from_dict(g.state),
            first_version=g.first_version,
            server_seed=g.server_seed,
            server_seed_hash=g.server_seed_hash,
            client_seed=g.client_seed,
            stake=g.stake,
            rated=g.rated,
            match=Match.from_dict(g.match),
            payouts=tuple(g.payouts),
        )
    return Table(
        id=row.pk,
        name=row.name,
        variant=row.variant,
        attack=row.attack,
        limit=row.limit,
        seats=seats,
        stake=row.stake,
        rated=row.rated,
        turn_seconds=row.turn_seconds,
        status=row.status,
        version=row.version,
        deadline=row.deadline,
        turn_deadline=row.turn_deadline,
        opener=row.created_by_id,
        game=game,
        match=Match.from_dict(row.match) if row.match is not None else None,
        games_played=game.number if game is not None else 0,
        next_server_seed=row.next_server_seed,
    )


def commit(before: Table, outcome: Outcome, *, epoch: int) -> Table:
    """Write `outcome` in one transaction, fenced by the version in memory and the lease's `epoch`; the table
    as committed (a new game gets its row's id). Raises Stale (nothing written) or Refused (a stake the
    wallet cannot cover, or above a new account's limit)."""
    try:
        with transaction.atomic():
            return _write(before, outcome, epoch)
    except IntegrityError:  # the action log holds this version already: another writer came first
        raise Stale from None


def _write(before: Table, outcome: Outcome, epoch: int) -> Table:
    table = outcome.table
    with connection.cursor() as cursor:
        fence = [
            table.version,
            table.status,
            table.deadline,
            table.turn_deadline,
            table.id,
            before.version,
            epoch,
        ]
        cursor.execute(_FENCE, fence)
        if cursor.rowcount != 1:
            raise Stale
    if outcome.seats_changed:
        _write_seats(before, table)
    game = table.game
    if outcome.started:
        game = _create_game(table)
        table = replace(table, game=game)
    elif outcome.logged is not None:
        state = game.state
        DurakGame.objects.filter(pk=game.id).update(
            state=state.to_dict(),
            version=table.version,
            finished=state.finished,
            fool=state.fool,
            payouts=list(game.payouts),
            finished_at=timezone.now() if state.finished else None,
        )
    if outcome.logged is not None:
        logged = outcome.logged
        DurakAction.objects.create(
            game_id=game.id,
            version=table.version,
            seat=logged.seat,
            action=logged.action,
            by_bot=logged.by_bot,
        )
    if outcome.started:
        DurakTable.objects.filter(pk=table.id).update(
            match=table.match.to_dict(), next_server_seed=table.next_server_seed
        )
    elif outcome.settled:
        DurakTable.objects.filter(pk=table.id).update(match=table.match.to_dict())
    if outcome.settled:
        _settle(table, game)
    return table


def _write_seats(before: Table, after: Table) -> None:
    for old, new in zip(before.seats, after.seats, strict=True):
        if old != new:
            DurakSeat.objects.filter(table_id=after.id, number=new.number).update(
                user_id=new.user_id,
                is_bot=new.is_bot,
                away=new.away,
                ready=new.ready,
                seed=new.seed,
                gone=new.gone,
            )


def _user(user_id: int):
    return get_user_model()(pk=user_id)


def _create_game(table: Table) -> Game:
    game = table.game
    humans = [user for user in game.players if user is not None]
    row = DurakGame.objects.create(
        table_id=table.id,
        number=game.number,
        players=list(game.players),
        state=game.state.to_dict(),
        first_version=game.first_version,
        version=table.version,
        match=game.match.to_dict(),
        server_seed=game.server_seed,
        server_seed_hash=game.server_seed_hash,
        client_seed=game.client_seed,
        stake=game.stake,
        pot=game.stake * len(humans),
        rated=game.rated,
    )
    DurakTable.objects.filter(pk=table.id).update(current_game=row.pk)
    row.participants.set(humans)
    if game.stake:
        for seat, user_id in enumerate(game.players):
            if user_id is None:
                continue
            services.check_stake(user_id=user_id, stake=game.stake)  # a new account's limit
            try:
                wallet.stake(
                    user=_user(user_id),
                    amount=game.stake,
                    table_ref=table.id,
                    memo=f"Durak game {row.pk} stake",
                )
            except wallet.WalletError:
                name = table.seats[seat].name
                raise Refused(
                    "insufficient_chips", f"{name} cannot cover the stake of {game.stake}."
                ) from None
    return replace(game, id=row.pk)


def _settle(table: Table, game: Game) -> None:
    """The pot back to the players (`durak.table.settle`) and the ratings, in the commit's transaction."""
    for user_id, amount in zip(game.players, game.payouts, strict=True):
        if user_id is not None and amount:
            kind = "refund" if amount == game.stake else "payout"
            wallet.pay(
                user=_user(user_id),
                amount=amount,
                kind=kind,
                table_ref=table.id,
                memo=f"Durak game {game.id}",
            )
    if game.rated:
        services.rate(game.players, game.state.fool, variant=game.state.rules.variant)
