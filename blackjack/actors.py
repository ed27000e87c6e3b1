"""The table actor: the one owner of a live table's state, in the process that holds the table's lease.

A `TableActor` takes its table's lease and loads the table once (`live.lease.acquire`, `services.load.begin`;
another process's live lease raises `OwnedElsewhere`), then decides each command on the state in memory
(`tables.flow.decide`) and writes the outcome in one transaction without reading the table again. The write
is fenced by the table's version and the lease's epoch: a conditional `UPDATE ... WHERE version = <in memory>
AND epoch = <held>` that finds no row means someone else changed the table (staff, the clock's sweep, the
lobby's one-click seat) or took it over; the actor then reloads and decides again, or, taken over, drops
itself. The state in memory is replaced only after the commit succeeded; a failed commit drops it.

Commands reach an actor through its mailbox (`tell`, an asyncio queue served by one task, so they are applied
one at a time, in order); the database work of each runs on a database thread. `handle` is that work without
the mailbox, for callers that are synchronous already (the benchmark, the clock's sweep). The actors of a
process live in a map keyed by table id (`actor_for`): made on first use, dropped after `idle_seconds`
without a command unless sockets are open at the table (the lease then lapses). The clock renews the leases
of the map's actors (`renew_leases`). The mailbox and the timer are the live runtime's (`live.actor.Actor`),
shared with Durak's.

After each commit the actor builds the new version's shared view part from what it holds
(`viewmodel.shared_from_memory`, with the `viewmodel.Memory` of events, chat and balances it keeps)
and hands it to the table's viewers in this process (`broadcast.show`), the acting player's among them; the
other processes get only a "version v" notice and read the database. The table's deadline, and the end of an
absent player's grace period, is a timer of the actor (`loop.call_later`) that puts the expiry in the mailbox;
the stored deadline serves the clock's sweep, which applies the deadlines of tables without a live owner
(`tables.clock`). An expiry is keyed on the version it was set for and every write is fenced, so a deadline is
applied once. Chat and settings changes run their service in the mailbox (`call`); those services announce
their versions on commit, and the viewers here then read them.

Presence is the actor's memory, never stored (`connections`; the counting is the live runtime's,
`live.presence.CountingActor`, shared with Durak's): each socket at the table tells the owner when it opens
and closes (`presence`), and `flow.Present` marks the seats of the players left without one (their grace
period) and clears those of the players with one. A new actor counts nobody, so its first load marks every
seated player (`_sync_presence`); the sockets still open tell it again when they see the mark
(`TableConsumer._reannounce`). Commands reach the actor through
`tables.remote`, from this process or forwarded from another. See docs/architecture.md.
"""

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from channels.db import database_sync_to_async
from django.db import DataError, connection, transaction
from django.utils import timezone

from blackjack import broadcast, flow, viewmodel
from blackjack.models import Phase, Table
from blackjack.services import actions, load, quarantine, store
from blackjack.services.load import Loaded, RoundBroken
from cardroom.batch import sends_together
from cards.errors import Refused
from live import clock as live_clock
from live import lease, presence
from live.lease import OwnedElsewhere

# The table row moves from the version in memory to the outcome's, or nothing is written: the first statement
# of every commit (the ORM's update costs more CPU than the rest of the statement's trip). The epoch is the
# lease's: once another process has taken the table over, this one's writes change nothing.
_FENCE = f"UPDATE {Table._meta.db_table} SET version = %s WHERE id = %s AND version = %s AND epoch = %s"
# The same fence as the first statement of the write pipeline (PostgreSQL), where no row count comes back:
# no row fails the statement (a division by zero), which fails the pipeline's later statements and the
# transaction with them.
_FENCE_IN_PIPELINE = f"WITH fenced AS ({_FENCE} RETURNING 1) SELECT 1 / count(*) FROM fenced"
_DIVISION_BY_ZERO = "22012"

logger = logging.getLogger(__name__)

#: Makes the command from the loaded state (an action needs its player, read from the seats).
Build = Callable[[Loaded], flow.Command]


class Stale(Exception):
    """The table's version or epoch in the database is not the one in memory: another writer changed the
    table, or another process took it over."""


class TableActor(presence.CountingActor):
    """The owner of one table's state in this process."""

    def __init__(
        self, table_id: int, *, connections: presence.Connections | None = None, marks_on_load: bool = True
    ) -> None:
        super().__init__(table_id, _actors, connections=connections, marks_on_load=marks_on_load)
        self.table_id = table_id
        self.loaded: Loaded | None = None
        self.epoch: int | None = None  # of the table's lease, taken when the state is loaded
        #: What the views need beyond `loaded` (None until the first commit after a load).
        self.memory: viewmodel.Memory | None = None
        #: The shared view part of the version in memory, once built after a commit.
        self.view: viewmodel._Shared | None = None

    async def tell(self, build: Build) -> int | None:
        """Queue a command and wait until it is applied: the table's new version (None if it changed
        nothing); raises `Refused` or `RoundBroken` as the services do."""
        return await self._put(lambda: self._apply(build))

    async def call(self, service: Callable[[], Any], *, reload: bool = True):
        """Run a service that writes the table itself (a chat line, a settings change) in the
        mailbox, between two commands, and return its result. With `reload` the state in memory is dropped
        after it: the next command loads the table as the service left it. The service's writes are fenced by
        the lease as a command's are: they share a transaction with taking the lease (`lease.acquire`, which
        locks the row), so a process whose lease was taken over writes nothing (`OwnedElsewhere`: the
        command goes to the owner)."""
        return await self._put(lambda: self._serve_call(service, reload))

    def mark_present(self) -> int | None:
        """The seats marked as the sockets counted say (`flow.Present`)."""
        return self._apply(lambda loaded: flow.Present(self.connections.users()))

    def _serve_call(self, service: Callable[[], Any], reload: bool) -> Any:
        try:
            with transaction.atomic():
                epoch = lease.acquire(Table, self.table_id, now=timezone.now())
                if epoch is None:
                    raise Table.DoesNotExist
                if epoch != self.epoch:  # taken over and back meanwhile: what is in memory is not the table's
                    self.loaded, self.epoch = None, epoch
                return service()
        except OwnedElsewhere:
            self.loaded = self.epoch = None
            raise
        finally:
            if reload:
                self.loaded = None

    def _apply(self, build: Build) -> int | None:
        """A command's work in the mailbox: `handle`, its failures counted towards quarantine."""
        return quarantine.watch(self.table_id, lambda: self.handle(build))

    def deadline(self) -> tuple[int, datetime] | None:
        """The table's deadline, or the moment its first absent player's grace period ends (outside play),
        whichever comes first."""
        state = self.loaded.state if self.loaded is not None else None
        if state is None:
            return None
        moments = [state.deadline] if state.deadline else []
        if state.phase in (Phase.WAITING, Phase.BETTING, Phase.SETTLED):
            seats = state.seats.values()
            gone = [seat.disconnected_at for seat in seats if seat.player and seat.disconnected_at]
            moments += [moment + flow.DISCONNECT_GRACE for moment in gone]
        return (state.version, min(moments)) if moments else None

    def timers_enabled(self) -> bool:
        """Deadlines are enforced where the process's clock is on (`clock.enabled()`: not with
        `TABLE_CLOCK=0`, nor under pytest unless `TABLE_CLOCK=1`), by its timers and its sweep alike."""
        from blackjack import clock  # the clock's sweep asks this module which deadlines are armed

        return clock.enabled()

    def expire(self, version: int, *, now: datetime | None = None) -> int:
        """Apply the deadline of `version` and stand up the players whose grace period is over: at most once,
        since the expiry is keyed on the version and every write is fenced. Returns how many changes were
        written. A failure drops the actor (its lease lapses and the sweeper tries again)."""
        changed = 0
        try:
            for command in (flow.Expire(version), flow.StandUpAbsent()):
                applied = quarantine.watch(
                    self.table_id, lambda command=command: self.handle(lambda loaded: command, now=now)
                )
                changed += applied is not None
        except RoundBroken as broken:
            changed += actions.void_round(round_id=broken.round_id, reason=broken.reason)
        except OwnedElsewhere:
            pass  # taken over: the new owner applies it (`handle` dropped this actor)
        except quarantine.Quarantined:
            changed += 1  # the table was stopped (logged); the state in memory was dropped with the failure
        except Exception:
            logger.exception("table %s: the deadline of version %s failed", self.table_id, version)
            self.drop()
        return changed

    def _past_marks(self, command: flow.Command) -> flow.Command:
        """The command as sent against the first load's marks if it was sent against the version they
        replaced (`live.presence.CountingActor.past_marks`)."""
        if isinstance(command, flow.Act):
            seen = self.past_marks(command.expected_version)
            if seen != command.expected_version:
                return replace(command, expected_version=seen)
        elif isinstance(command, flow.Expire) and self.past_marks(command.version) != command.version:
            return flow.Expire(self.past_marks(command.version))
        return command

    def handle(self, build: Build, *, now: datetime | None = None) -> int | None:
        """Decide one command on the state in memory and commit its outcome. The state is reloaded once if
        the table changed underneath (the fence), or if the command was refused as stale against a version
        newer than the one in memory (the client saw another writer's version; an older one is just stale)."""
        fenced = False
        for _ in range(2):
            fresh = self.loaded is None
            if fresh:
                try:
                    self.loaded = self._load()
                except OwnedElsewhere as taken:
                    if fenced:  # this process owned the table and lost it (paused, cut off)
                        logger.warning(
                            "table %s: taken over by %s; a write here was fenced", self.table_id, taken.owner
                        )
                    else:
                        logger.info("table %s: owned by %s", self.table_id, taken.owner)
                    self.drop()
                    raise
                self._sync_presence(now)
            loaded = self.loaded
            loaded.now = now or timezone.now()
            command = self._past_marks(build(loaded))
            outcome = store.decide(loaded, command)
            if outcome.refusal is not None and outcome.refusal.code == "stale_version" and not fresh:
                seen = getattr(command, "expected_version", None)
                if type(seen) is int and seen > loaded.state.version:
                    self.loaded = None  # the client saw a version another writer made: look again
                    continue
            if outcome.refusal is not None or outcome.broken is not None:
                if outcome.broken is not None:
                    self.loaded = None
                return store.apply(loaded, outcome)  # raises the refusal, or the broken round
            if not outcome.changed:
                return None
            try:
                version = self._commit(loaded, outcome)
            except Stale:
                self.loaded, fenced = None, True
                continue
            except BaseException:
                self.loaded = None
                raise
            self._show(loaded, outcome)
            return version
        raise Refused("stale_version", "The table changed while this action was applied; try again.")

    def _sync_presence(self, now: datetime | None) -> None:
        """At this actor's first load: the seats marked as the sockets counted here say (`synced`); the
        sockets still open tell a new owner again when they see their player marked
        (`TableConsumer._reannounce`)."""

        def mark() -> int | None:
            return self.handle(lambda loaded: flow.Present(self.connections.users()), now=now)

        self.synced(self.loaded.state.version, mark)

    def _load(self) -> Loaded:
        """Take the table's lease (`live.lease.acquire`: raises `OwnedElsewhere`) and load its state."""
        self.memory = self.view = None
        with transaction.atomic():
            epoch = lease.acquire(Table, self.table_id, now=timezone.now())
            loaded = load.begin(self.table_id)  # no row: "No such table"
        self.epoch = epoch
        return loaded

    def drop(self) -> None:
        """Forget the state and the sockets counted, and leave the registry: the table changed hands, or a
        command failed. The next command here makes a new actor, which takes the lease again or learns who
        holds it (and the sockets here tell it again when they see their players marked gone)."""
        self.loaded = self.epoch = None
        self.leave()

    def _commit(self, loaded: Loaded, outcome: flow.Outcome) -> int:
        """Write the outcome behind the fence. When every write of the outcome goes in the one batch (no chips
        move, no row is made or deleted: the ordinary action), the fence is the batch's first statement and
        the command takes two round trips on PostgreSQL (the batch, COMMIT); otherwise it goes first on its
        own, so that no row is locked before the table's (the services lock the table first)."""
        fence = [outcome.state.version, self.table_id, loaded.state.version, self.epoch]
        pipelined = sends_together(connection.alias) and _batched_only(loaded, outcome)
        try:
            with transaction.atomic():
                if pipelined:
                    version = store.write(loaded, outcome, first=(_FENCE_IN_PIPELINE, fence), announce=False)
                else:
                    with connection.cursor() as cursor:
                        cursor.execute(_FENCE, fence)
                        if cursor.rowcount != 1:
                            raise Stale
                    version = store.write(loaded, outcome, announce=False)
        except DataError as error:
            if pipelined and getattr(error.__cause__, "sqlstate", None) == _DIVISION_BY_ZERO:
                raise Stale from None
            raise
        _keep(loaded, outcome.state)
        return version

    def _show(self, loaded: Loaded, outcome: flow.Outcome) -> None:
        """After a commit: bring the memory up to date, build the new version's shared view part from it and
        hand that to the table's viewers (the commit stands whatever happens here; a failure is logged and
        the memory read again next time)."""
        changed, loaded.balances = loaded.balances, {}
        try:
            memory = self.memory
            if memory is None:  # the first commit since the table was loaded: read what the views need
                memory = self.memory = viewmodel.remember(self.table_id)
            else:
                added = [
                    viewmodel.event_entry(loaded.now, event.text, event.kind) for event in outcome.events
                ]
                memory.events = [*memory.events, *added][-viewmodel.EVENTS_SHOWN :]
                memory.balances.update(changed)
            state = outcome.state
            if loaded.round is not None:
                shoe = loaded.round.shoe
            elif state.shoe is not None and state.shoe.id in loaded.shoes:
                shoe = loaded.shoes[state.shoe.id]
            else:
                shoe = viewmodel._unretired_shoe(loaded.table)
            self.view = viewmodel.shared_from_memory(loaded.table, loaded.round, shoe, loaded.seats, memory)
        except Exception:
            logger.exception(
                "table %s: the views of version %s could not be built", self.table_id, state.version
            )
            self.memory = self.view = None
            broadcast.table_changed(self.table_id, outcome.state.version, lobby=outcome.lobby)
            return
        for user_id, balance in changed.items():
            balance_seen(user_id, balance, but=self)
        broadcast.show(self.view, lobby=outcome.lobby)


def _batched_only(loaded: Loaded, out: flow.Outcome) -> bool:
    """Whether `store.write` sends every write of the outcome in its batch (see `store.write`): no chips move
    (the wallet's statements return balances), no shoe, round or seat row is created or deleted, and every
    shoe and round written was loaded."""
    if out.moves or out.payments or out.seats_removed or not out.state.seats.keys() <= loaded.seats.keys():
        return False
    rounds_loaded = all(info.id in loaded.rounds for info in out.rounds)
    return rounds_loaded and all(info.id in loaded.shoes for info in out.shoes)


def _keep(loaded: Loaded, state: flow.TableState) -> None:
    """The commit succeeded: the outcome's state is the table's, and the models as written are the ones the
    next command's writes are compared with."""
    loaded.state = state
    loaded.keep_seats()
    current = state.round
    loaded.round = loaded.rounds[current.id] if current is not None else None
    loaded.rounds = {current.id: loaded.round} if current is not None else {}
    kept = (state.shoe, current.shoe if current is not None else None)
    loaded.shoes = {
        info.id: loaded.shoes[info.id] for info in kept if info is not None and info.id in loaded.shoes
    }


_actors: dict[int, TableActor] = {}


def actor_for(table_id: int) -> TableActor:
    """This process's actor of the table (created on first use; its state is loaded by its first command)."""
    actor = _actors.get(table_id)
    if actor is None:
        actor = _actors[table_id] = TableActor(table_id)
    return actor


def renew_leases(*, now: datetime | None = None) -> set[int]:
    """Renew the leases of every table this process's actors hold, in one UPDATE (from the clock's thread),
    and drop the actors whose lease was lost (`live.clock.renew_held`). Returns the ids of those tables."""
    held = {
        actor.table_id: actor.epoch
        for actor in list(_actors.values())
        if actor.epoch is not None and (actor.loaded is not None or actor.connections)
    }
    return live_clock.renew_held(Table, _actors, held, now=now or timezone.now())


def balance_seen(user_id: int, balance: int, *, but: TableActor | None = None) -> None:
    """A player's balance moved (at another table of this process, or outside any table: `balance_changed`):
    the actors here that show it take the new figure into their next view. From any thread: a snapshot of
    the map, and one dict item set per actor."""
    for actor in list(_actors.values()):
        memory = actor.memory
        if actor is not but and memory is not None and user_id in memory.balances:
            memory.balances[user_id] = balance


def chat_arrived(table_id: int) -> None:
    """A chat line was posted at the table: its actor here reads the chat again for its next view."""
    actor = _actors.get(table_id)
    memory = actor.memory if actor is not None else None
    if memory is not None:
        memory.chat = None


def version_in_memory(table_id: int) -> int | None:
    """The version this process's actor of the table holds (None: no actor here, or nothing loaded)."""
    actor = _actors.get(table_id)
    loaded = actor.loaded if actor is not None else None
    return loaded.state.version if loaded is not None and loaded.state is not None else None


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


async def perform(*, table_id: int, user, action: dict, expected_version):
    """`services.perform` through the table's actor: the new version (its views are shown to the table's
    viewers here by the actor; see `TableActor.tell`)."""
    if user is None or not user.is_authenticated:
        raise Refused("not_authenticated", "Log in to play.")
    try:
        return await actor_for(table_id).tell(player_action(user, action, expected_version))
    except RoundBroken as broken:
        await database_sync_to_async(actions.void_round)(round_id=broken.round_id, reason=broken.reason)
        raise Refused(
            "illegal_action", "The round could not be continued and was voided; every stake was refunded."
        ) from None
