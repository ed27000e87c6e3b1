"""A spike of the table actor, for one process: a table's state kept in memory between commands.

A `TableActor` loads its table once (`services.load.begin`), then decides each command on the state in memory
(`tables.flow.decide`) and writes the outcome in one transaction without reading the table again. The write
is fenced by the table's version: a conditional `UPDATE ... WHERE version = <the version in memory>` that
finds no row means someone else changed the table (the clock, staff, another process); the actor then drops
its state, reloads it and decides again. The state in memory is replaced only after the commit succeeded; a
failed commit drops it.

Commands reach an actor through its mailbox (`tell`, an asyncio queue served by one task, so they are applied
one at a time, in order); the database work of each runs on a database thread. `handle` is that work without
the mailbox, for callers that are synchronous already (the benchmark). The actors of a process live in a map
keyed by table id (`actor_for`): made on first use, dropped after `IDLE_SECONDS` without a command.

The consumers hand players' actions to the actor when `settings.TABLE_ACTORS` is on. The table's deadline is a
timer of the actor (`loop.call_later`) that puts the expiry in the mailbox; the stored deadline stays, and the
clock's sweep (`services.expire_due`) still applies the deadlines of tables without a live actor here. The
expiry is keyed on the version it was set for and the write is fenced, so the two apply it once. Presence,
chat, staff and the clock still write through the services: the fence catches their changes. See
docs/architecture.md.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from channels.db import database_sync_to_async
from django.db import DataError, connection, transaction
from django.utils import timezone

from blackjack_site.prepared import sent_together, snapshot
from tables import broadcast, flow
from tables.models import Table
from tables.services import actions, load, store
from tables.services.load import ActionRefused, Loaded, RoundBroken

# The table row moves from the version in memory to the outcome's, or nothing is written: the first statement
# of every commit (the ORM's update costs more CPU than the rest of the statement's trip).
_FENCE = f"UPDATE {Table._meta.db_table} SET version = %s WHERE id = %s AND version = %s"
# The same fence as the first statement of the write pipeline (PostgreSQL), where no row count comes back:
# no row fails the statement (a division by zero), which fails the pipeline's later statements and the
# transaction with them.
_FENCE_IN_PIPELINE = f"WITH fenced AS ({_FENCE} RETURNING 1) SELECT 1 / count(*) FROM fenced"
_DIVISION_BY_ZERO = "22012"

logger = logging.getLogger(__name__)

#: An actor that has had no command for this many seconds leaves the map (lichess's actor maps do the same).
IDLE_SECONDS = 60.0

#: Makes the command from the loaded state (an action needs its player, read from the seats).
Build = Callable[[Loaded], flow.Command]
#: Given the new version (None: nothing changed), what the teller wants done in the same database trip.
Then = Callable[[int | None], Any]
#: Turns a synchronous function into a coroutine running it on a database thread.
Run = Callable[[Callable[..., Any]], Callable[..., Awaitable[Any]]]


class Stale(Exception):
    """The table's version in the database is not the one in memory: another writer changed the table."""


class TableActor:
    """The owner of one table's state in this process."""

    def __init__(self, table_id: int) -> None:
        self.table_id = table_id
        self.loaded: Loaded | None = None
        self._mailbox: asyncio.Queue | None = None
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._run: Run = database_sync_to_async
        self._timer: asyncio.TimerHandle | None = None
        self._armed: tuple[int, datetime] | None = None

    async def tell(self, build: Build, *, then: Then | None = None, run: Run | None = None):
        """Queue a command and wait until it is applied: the table's new version (None if it changed
        nothing), or what `then` returns given it (called in the same trip to the database thread, after the
        commit, the announcement held until it returns); raises `ActionRefused` or `RoundBroken` as the
        services do. `run` makes the database work a coroutine (Channels' database thread by default)."""
        if run is not None:
            self._run = run
        return await self._put(lambda: self._apply(build, then))

    def _put(self, work: Callable[[], Any]) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._loop is not loop:
            self._loop, self._mailbox = loop, asyncio.Queue()
            self._task = loop.create_task(self._serve())
        done = loop.create_future()
        self._mailbox.put_nowait((work, done))
        return done

    async def _serve(self) -> None:
        while True:
            try:
                work, done = await asyncio.wait_for(self._mailbox.get(), IDLE_SECONDS)
            except TimeoutError:
                self._evict()
                return
            try:
                result = await self._run(work)()
            except Exception as exc:
                if not done.cancelled():
                    done.set_exception(exc)
            else:
                if not done.cancelled():
                    done.set_result(result)
            self._arm()

    def _apply(self, build: Build, then: Then | None) -> Any:
        with broadcast.held():
            version = self.handle(build)
            return version if then is None else then(version)

    def _evict(self) -> None:
        """Idle for `IDLE_SECONDS`: leave the map (a later command makes a new actor, which loads the table
        afresh); a deadline still to come is left to the clock's sweep."""
        self._disarm()
        if _actors.get(self.table_id) is self:
            del _actors[self.table_id]

    # --- the deadline timer ---

    def _arm(self) -> None:
        """Set the timer of the deadline of the state in memory (once per version and deadline). Deadlines
        are enforced where the process's clock is on (`clock.enabled()`: not with `TABLE_CLOCK=0`, nor under
        pytest unless `TABLE_CLOCK=1`), by its timers and its sweep alike."""
        from tables import clock  # the clock's sweep asks this module which deadlines are armed

        if not clock.enabled():
            return
        state = self.loaded.state if self.loaded is not None else None
        wanted = (state.version, state.deadline) if state is not None and state.deadline else None
        if wanted == self._armed:
            return
        self._disarm()
        if wanted is not None:
            self._armed = wanted
            self._schedule(*wanted)

    def _schedule(self, version: int, deadline: datetime) -> None:
        delay = max(0.0, (deadline - timezone.now()).total_seconds())
        self._timer = self._loop.call_later(delay, self._ring, version, deadline)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._armed = None

    def _ring(self, version: int, deadline: datetime) -> None:
        """The deadline set for `version` is due: put its expiry in the mailbox (after the commands already
        there). The loop's clock may ring a moment before the wall clock agrees: then wait the rest."""
        self._timer = None
        if timezone.now() < deadline:
            self._schedule(version, deadline)
            return
        self._put(lambda: self._expire(version))

    def _expire(self, version: int) -> int | None:
        """Apply the deadline of `version` as the clock's sweep would (`actions.guarded`): at most once, since
        the expiry is keyed on the version and the write is fenced."""
        try:
            return self.handle(lambda loaded: flow.Expire(version))
        except RoundBroken as broken:
            actions.void_round(round_id=broken.round_id, reason=broken.reason)
        except Exception:  # the table stays as it was; the clock's sweep tries again
            logger.exception("table %s: the deadline of version %s failed", self.table_id, version)
        return None

    def handle(self, build: Build, *, now: datetime | None = None) -> int | None:
        """Decide one command on the state in memory and commit its outcome. The state is reloaded once if
        the table changed underneath (the fence), or if the command was refused as stale on a state that was
        not just loaded (the client may have seen another writer's version)."""
        for _ in range(2):
            fresh = self.loaded is None
            if fresh:
                self.loaded = self._load()
            loaded = self.loaded
            loaded.now = now or timezone.now()
            outcome = store.decide(loaded, build(loaded))
            if outcome.refusal is not None and outcome.refusal.code == "stale_version" and not fresh:
                self.loaded = None  # the client may have seen a version another writer made: look again
                continue
            if outcome.refusal is not None or outcome.broken is not None:
                if outcome.broken is not None:
                    self.loaded = None
                return store.apply(loaded, outcome)  # raises the refusal, or the broken round
            if not outcome.changed:
                return None
            try:
                return self._commit(loaded, outcome)
            except Stale:
                self.loaded = None
            except BaseException:
                self.loaded = None
                raise
        raise ActionRefused("stale_version", "The table changed while this action was applied; try again.")

    def _load(self) -> Loaded:
        with transaction.atomic():
            return load.begin(self.table_id)

    def _commit(self, loaded: Loaded, outcome: flow.Outcome) -> int:
        """Write the outcome behind the fence. When every write of the outcome goes in the one batch (no chips
        move, no row is made or deleted: the ordinary action), the fence is the batch's first statement and
        the command takes two round trips on PostgreSQL (the batch, COMMIT); otherwise it goes first on its
        own, so that no row is locked before the table's (the services lock the table first)."""
        fence = [outcome.state.version, self.table_id, loaded.state.version]
        pipelined = sent_together(connection.alias) and _batched_only(loaded, outcome)
        try:
            with transaction.atomic():
                if pipelined:
                    version = store.write(loaded, outcome, first=(_FENCE_IN_PIPELINE, fence))
                else:
                    with connection.cursor() as cursor:
                        cursor.execute(_FENCE, fence)
                        if cursor.rowcount != 1:
                            raise Stale
                    version = store.write(loaded, outcome)
        except DataError as error:
            if pipelined and getattr(error.__cause__, "sqlstate", None) == _DIVISION_BY_ZERO:
                raise Stale from None
            raise
        _keep(loaded, outcome.state)
        return version


def _batched_only(loaded: Loaded, out: flow.Outcome) -> bool:
    """Whether `store.write` sends every write of the outcome in its batch (see `store.write`): no chips move
    (the wallet's statements return balances), no shoe, round or seat row is created or deleted, and every
    shoe and round written was loaded."""
    if out.moves or out.payments or out.seats_removed or not out.state.seats.keys() <= loaded.seats.keys():
        return False
    rounds_loaded = all(
        info.id in loaded.rounds and loaded.rounds[info.id][1] is not None for info in out.rounds
    )
    return rounds_loaded and all(info.id in loaded.shoes for info in out.shoes)


def _keep(loaded: Loaded, state: flow.TableState) -> None:
    """The commit succeeded: the outcome's state is the table's, and the models as written are the ones the
    next command's writes are compared with."""
    loaded.state = state
    loaded._table_before = snapshot(loaded.table)
    loaded._seats_before = {number: snapshot(seat) for number, seat in loaded.seats.items()}
    current = state.round
    loaded.round = loaded.rounds[current.id][0] if current is not None else None
    loaded.rounds = {current.id: (loaded.round, snapshot(loaded.round))} if current is not None else {}
    shoes = {}
    for info in (state.shoe, current.shoe if current is not None else None):
        if info is not None and info.id in loaded.shoes:
            shoe = loaded.shoes[info.id][0]
            shoes[info.id] = (shoe, snapshot(shoe))
    loaded.shoes = shoes


_actors: dict[int, TableActor] = {}


def actor_for(table_id: int) -> TableActor:
    """This process's actor of the table (created on first use; its state is loaded by its first command)."""
    actor = _actors.get(table_id)
    if actor is None:
        actor = _actors[table_id] = TableActor(table_id)
    return actor


def armed(table_id: int, version: int) -> bool:
    """Whether this process's actor of the table has its timer set for the deadline of `version` (the
    clock's sweep then leaves that deadline to it). Read from the clock's thread: a snapshot is enough."""
    actor = _actors.get(table_id)
    wanted = actor._armed if actor is not None else None
    return wanted is not None and wanted[0] == version


def forget_actors() -> None:
    """Drop every actor of this process (tests; a process that lost its database)."""
    for actor in _actors.values():
        actor._disarm()
    _actors.clear()


def player_action(user, action: dict, expected_version) -> Build:
    """The command of `user`'s protocol action, as `services.perform` makes it."""

    def build(loaded: Loaded) -> flow.Command:
        loaded.users.setdefault(user.pk, user)
        player = actions.acting_player(loaded, user)
        return flow.Act(player=player, action=action, expected_version=expected_version)

    return build


async def perform(
    *, table_id: int, user, action: dict, expected_version, then: Then | None = None, run: Run | None = None
):
    """`services.perform` through the table's actor: the new version, or what `then` returns given it (see
    `TableActor.tell`)."""
    if user is None or not user.is_authenticated:
        raise ActionRefused("not_authenticated", "Log in to play.")
    try:
        return await actor_for(table_id).tell(
            player_action(user, action, expected_version), then=then, run=run
        )
    except RoundBroken as broken:
        await (run or database_sync_to_async)(actions.void_round)(
            round_id=broken.round_id, reason=broken.reason
        )
        raise ActionRefused(
            "illegal_action", "The round could not be continued and was voided; every stake was refunded."
        ) from None
