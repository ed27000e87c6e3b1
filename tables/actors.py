"""A spike of the table actor, for one process: a table's state kept in memory between commands.

A `TableActor` loads its table once (`services.load.begin`), then decides each command on the state in memory
(`tables.flow.decide`) and writes the outcome in one transaction without reading the table again. The write
is fenced by the table's version: a conditional `UPDATE ... WHERE version = <the version in memory>` that
finds no row means someone else changed the table (the clock, staff, another process); the actor then drops
its state, reloads it and decides again. The state in memory is replaced only after the commit succeeded; a
failed commit drops it.

Commands reach an actor through its mailbox (`tell`, an asyncio queue served by one task, so they are applied
one at a time, in order); the database work of each runs in Django's database thread. `handle` is that work
without the mailbox, for callers that are synchronous already (the benchmark).

Not wired into the consumers yet, and without timers: deadlines still go through `services.expire_due`,
whose changes the fence catches. See docs/architecture.md.
"""

import asyncio
from collections.abc import Callable
from datetime import datetime

from channels.db import database_sync_to_async
from django.db import connection, transaction
from django.utils import timezone

from blackjack_site.prepared import snapshot
from tables import flow
from tables.models import Table
from tables.services import actions, load, store
from tables.services.load import ActionRefused, Loaded, RoundBroken

# The table row moves from the version in memory to the outcome's, or nothing is written: the first statement
# of every commit (the ORM's update costs more CPU than the rest of the statement's trip).
_FENCE = f"UPDATE {Table._meta.db_table} SET version = %s WHERE id = %s AND version = %s"

#: Makes the command from the loaded state (an action needs its player, read from the seats).
Build = Callable[[Loaded], flow.Command]


class Stale(Exception):
    """The table's version in the database is not the one in memory: another writer changed the table."""


class TableActor:
    """The owner of one table's state in this process."""

    def __init__(self, table_id: int) -> None:
        self.table_id = table_id
        self.loaded: Loaded | None = None
        self._mailbox: asyncio.Queue | None = None
        self._task: asyncio.Task | None = None

    async def tell(self, build: Build) -> int | None:
        """Queue a command and wait until it is applied: the table's new version, None if it changed
        nothing; raises `ActionRefused` or `RoundBroken` as the services do."""
        if self._mailbox is None:
            self._mailbox = asyncio.Queue()
            self._task = asyncio.create_task(self._serve())
        done = asyncio.get_running_loop().create_future()
        self._mailbox.put_nowait((build, done))
        return await done

    async def _serve(self) -> None:
        while True:
            build, done = await self._mailbox.get()
            try:
                result = await database_sync_to_async(self.handle)(build)
            except Exception as exc:
                if not done.cancelled():
                    done.set_exception(exc)
            else:
                if not done.cancelled():
                    done.set_result(result)

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
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(_FENCE, [outcome.state.version, self.table_id, loaded.state.version])
                if cursor.rowcount != 1:
                    raise Stale
            version = store.write(loaded, outcome)
        _keep(loaded, outcome.state)
        return version


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


def forget_actors() -> None:
    """Drop every actor of this process (tests; a process that lost its database)."""
    _actors.clear()


def player_action(user, action: dict, expected_version) -> Build:
    """The command of `user`'s protocol action, as `services.perform` makes it."""

    def build(loaded: Loaded) -> flow.Command:
        loaded.users.setdefault(user.pk, user)
        player = actions.acting_player(loaded, user)
        return flow.Act(player=player, action=action, expected_version=expected_version)

    return build


async def perform(*, table_id: int, user, action: dict, expected_version) -> int:
    """`services.perform` through the table's actor: the new version."""
    if user is None or not user.is_authenticated:
        raise ActionRefused("not_authenticated", "Log in to play.")
    try:
        return await actor_for(table_id).tell(player_action(user, action, expected_version))
    except RoundBroken as broken:
        await database_sync_to_async(actions.void_round)(round_id=broken.round_id, reason=broken.reason)
        raise ActionRefused(
            "illegal_action", "The round could not be continued and was voided; every stake was refunded."
        ) from None
