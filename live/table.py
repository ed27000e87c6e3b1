"""The table loop every game's live tables run on: load -> decide -> fenced commit -> publish.

A `TableActor` is the one owner, in this process, of one live table of a game. It takes the table's lease
and loads the table once (`live.lease.acquire`, then the game's `load`; another live process's lease raises
`OwnedElsewhere`, and the command goes to that owner: `live.route`), decides each command on the state in
memory with the game's pure flow (`decide`), writes the outcome in one short transaction whose first statement
is the fence (the game's `commit`: `UPDATE ... WHERE id AND version AND epoch`; no row raises `Stale`: another
writer moved the table or another process took it over, so the state is dropped and loaded again, which takes
the lease again or learns the new owner), swaps the new state in only after the commit, and then shows the new
version to the table's viewers (the game's `publish`). A command that fails drops the state in memory: the
next one loads the table as the database has it.

The game says, on its subclass: `game` and `model` (its registry name and its `live.models.LiveTable`
rows), and `load`, `decide`, `commit`, `publish`, `version_of`, `deadline_of`, `expiries` (the commands of a
due deadline), `presence_command` (the command marking who has a socket open). Everything else is here, once:
the mailbox and deadline timer (`live.actor`), presence counting (`live.presence`), the two tries, quarantine
(`live.quarantine`: the game says how a table is stopped, `stop` and `stop_stuck`), the map of a game's actors
in this process, lease renewal and the sweep of deadlines no live owner applies (`renew_leases`, `sweep`,
called by the clock: `live.clock`)."""

import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from cards.errors import Refused
from live import lease, quarantine
from live.clock import claim, renew_held, unowned
from live.lease import OwnedElsewhere
from live.presence import Connections, CountingActor

if TYPE_CHECKING:
    from live.models import LiveTable

logger = logging.getLogger(__name__)


class Stale(Exception):
    """The table's version or epoch in the database is not the one in memory: another writer changed the
    table, or another process took it over (raised by a game's `commit`; nothing was written)."""


class Behind(Exception):
    """Raised by a game's `decide` when a command was sent against a version newer than the one in memory
    (another writer's, which a viewer saw first): the table is loaded again and the command decided again.
    `refusal` is what the command gets if the state was fresh already."""

    def __init__(self, refusal: Refused) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


class TableActor(CountingActor):
    """The owner of one table of a game in this process (see the module docstring)."""

    #: The game's name in the registry (`live.games`) and its table rows.
    game: ClassVar[str]
    model: ClassVar[type["LiveTable"]]
    #: Exceptions of a command that are not the table's fault (they do not count towards quarantine).
    passes: ClassVar[tuple[type[BaseException], ...]] = ()
    #: The game's actors in this process, by table id (each subclass gets a map of its own).
    actors: ClassVar[dict[int, "TableActor"]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "game" in cls.__dict__:
            cls.actors = {}

    def __init__(
        self, key: int, *, connections: Connections | None = None, marks_on_load: bool = True
    ) -> None:
        super().__init__(key, self.actors, connections=connections, marks_on_load=marks_on_load)
        #: The table as this owner holds it (None: not loaded, or dropped after a failure).
        self.state: Any = None
        #: The lease's epoch, taken when the table was loaded: every write is fenced by it.
        self.epoch: int | None = None

    # --- what a game defines ---

    def load(self) -> Any:
        """The table as stored (inside the transaction that took its lease)."""
        raise NotImplementedError

    def decide(self, state: Any, command: Any, now: datetime) -> Any:
        """The outcome of `command` on `state` (pure), None if it changes nothing; raises `Refused`, or
        `Behind`."""
        raise NotImplementedError

    def commit(self, state: Any, outcome: Any) -> Any:
        """Write `outcome` in one transaction fenced by `version_of(state)` and `self.epoch`; the state as
        committed. Raises `Stale` (nothing written), or `Refused` (rolled back)."""
        raise NotImplementedError

    def publish(self, before: Any, outcome: Any, after: Any) -> None:
        """After a commit: show the new version to the table's viewers (must not raise)."""

    def version_of(self, state: Any) -> int:
        raise NotImplementedError

    def deadline_of(self, state: Any) -> datetime | None:
        """When the table's next deadline is due (None: it has none)."""
        return None

    def expiries(self, version: int) -> Iterable[Any]:
        """The commands applied when the deadline set for `version` is due."""
        raise NotImplementedError

    def presence_command(self, users: frozenset[int]) -> Any:
        """The command that marks the seats as `users` (who have a socket open) say."""
        raise NotImplementedError

    @classmethod
    def stop(cls, *, table_id: int, reason: str) -> bool:
        """Quarantine: stop the table in one transaction (settle or refund what is in play, stand everyone
        up, close it, mark it for staff with `reason`); False if it was stopped already."""
        raise NotImplementedError

    @classmethod
    def stop_stuck(cls, *, table_id: int, reason: str) -> None:
        """Quarantine when `stop` itself failed: close and mark the table with one update, its version moved
        on, what is in play held for staff."""
        raise NotImplementedError

    def recovered(self, error: Exception) -> int | None:
        """A deadline's command failed with `error`: how many changes the game's own remedy wrote (None: no
        remedy; the failure is logged and the actor dropped)."""
        return None

    # --- the loop ---

    async def tell(self, command: Any) -> int | None:
        """Queue a command and wait until it is applied: the new version (None: nothing changed); raises
        `Refused` with nothing changed."""
        return await self._put(lambda: self.apply(command))

    def apply(self, command: Any, *, now: datetime | None = None, marks: bool = False) -> int | None:
        """`handle`, its failures counted towards quarantine (`live.quarantine`)."""
        return quarantine.watch(self.game, self.key, lambda: self.handle(command, now=now, marks=marks))

    def handle(self, command: Any, *, now: datetime | None = None, marks: bool = False) -> int | None:
        """Decide `command` on the state in memory and commit its outcome; load the table again and decide
        again once if another writer moved it (the fence) or the command saw a newer version (`Behind`).
        `marks`: the command is `presence_command`'s (its version is one `past_marks` looks past)."""
        fenced = False
        for _ in range(2):
            fresh = self.state is None
            state = self._loaded(now, fenced=fenced)
            try:
                outcome = self.decide(state, command, now or timezone.now())
            except Behind as behind:
                if fresh:
                    raise behind.refusal from None
                self.state = None
                continue
            except Refused:
                raise
            except BaseException:
                self.state = None
                raise
            if outcome is None:
                return None
            before = self.version_of(state)  # (a game's commit may update `state` in place)
            try:
                after = self.commit(state, outcome)
            except Stale:
                self.state, fenced = None, True
                continue
            except BaseException:
                self.state = None
                raise
            self.state = after
            self.written(before, self.version_of(after), marks=marks)
            self.publish(state, outcome, after)
            return self.version_of(after)
        raise Refused("stale_version", "The table changed while this action was applied; try again.")

    async def call(self, service: Callable[[], Any], *, reload: bool = True) -> Any:
        """Run a service that writes the table itself (a staff edit) in the mailbox, between two commands, and
        return its result; with `reload` the state in memory is dropped after it. The service shares a
        transaction with taking the lease (which locks the row), so a process whose lease was taken over
        writes nothing (`OwnedElsewhere`: the command goes to the owner)."""
        return await self._put(lambda: self._serve_call(service, reload))

    def _serve_call(self, service: Callable[[], Any], reload: bool) -> Any:
        try:
            with transaction.atomic():
                epoch = lease.acquire(self.model, self.key, now=timezone.now())
                if epoch is None:
                    raise self.model.DoesNotExist
                if epoch != self.epoch:  # taken over and back meanwhile: what is in memory is not the table's
                    self.state, self.epoch = None, epoch
                return service()
        except OwnedElsewhere:
            self.state = self.epoch = None
            raise
        finally:
            if reload:
                self.state = None

    def mark_present(self, now: datetime | None = None) -> int | None:
        return self.apply(self.presence_command(self.connections.users()), now=now, marks=True)

    def _loaded(self, now: datetime | None = None, *, fenced: bool = False) -> Any:
        """The state in memory; loaded, with the lease taken, if it is not. Raises `OwnedElsewhere` when
        another live process holds the lease, or the model's `DoesNotExist`: the actor is dropped. The first
        load marks the seats as the sockets counted here say (`synced`: a new owner counts nobody)."""
        if self.state is None:
            try:
                with transaction.atomic():
                    epoch = lease.acquire(self.model, self.key, now=timezone.now())
                    if epoch is None:
                        raise self.model.DoesNotExist(f"No {self.game} table {self.key}.")
                    state = self.load()
            except OwnedElsewhere as taken:
                if fenced:  # this process owned the table and lost it (paused, cut off)
                    logger.warning("%s table %s: taken over by %s", self.game, self.key, taken.owner)
                self.drop()
                raise
            except self.model.DoesNotExist:
                self.drop()
                raise
            self.state, self.epoch = state, epoch
            self.synced(
                lambda: self.handle(self.presence_command(self.connections.users()), now=now, marks=True)
            )
        return self.state

    async def current(self) -> Any:
        """The state in memory (loaded through the mailbox if it is not yet)."""
        return await self._put(self._loaded)

    def drop(self) -> None:
        """Forget the state and the sockets counted, and leave the map: the table changed hands, or a command
        failed. The next command here makes a new actor, which takes the lease again or learns who holds it
        (and the sockets tell it again when they see their players marked gone)."""
        self.state = self.epoch = None
        self.leave()

    # --- the deadline ---

    def deadline(self) -> tuple[int, datetime] | None:
        state = self.state
        if state is None:
            return None
        due = self.deadline_of(state)
        return (self.version_of(state), due) if due is not None else None

    def timers_enabled(self) -> bool:
        return settings.LIVE_TIMERS

    def expire(self, version: int, *, now: datetime | None = None) -> int:
        """Apply the deadline set for `version` (once: the expiry is keyed on the version and every write is
        fenced). Returns how many changes were written. A failure drops the actor: its lease lapses and the
        sweep tries again."""
        changed = 0
        try:
            for command in self.expiries(version):
                changed += self.apply(command, now=now) is not None
        except OwnedElsewhere:
            pass  # taken over: the new owner applies it
        except quarantine.Quarantined:
            changed += 1  # the table was stopped (logged); its state in memory went with the failure
        except Exception as error:
            remedied = self.recovered(error)
            if remedied is None:
                failed = "%s table %s: the deadline of version %s failed"
                logger.exception(failed, self.game, self.key, version)
                self.drop()
            else:
                changed += remedied
        return changed

    def evict(self) -> None:
        """Idle: leave the map, unless the table has a deadline to apply here (its timer still has to ring;
        the next piece of work restarts the mailbox) or sockets are open at the table (their count is
        kept)."""
        if self.deadline() is not None and self.timers_enabled():
            return
        super().evict()

    # --- a game's actors in this process ---

    @classmethod
    def actor_for(cls, key: int) -> "TableActor":
        """This process's actor of the table (made on first use; the table is loaded by its first command)."""
        actor = cls.actors.get(key)
        if actor is None:
            actor = cls.actors[key] = cls(key)
        return actor

    @classmethod
    def apply_once(cls, key: int, command: Any) -> int | None:
        """Apply one command through an actor made for it (not in the map), in this thread, and hand the
        lease back after it: a command from synchronous code for a table no live process owns (staff)."""
        actor = cls(key, marks_on_load=False)
        try:
            return actor.apply(command)
        finally:
            if actor.epoch is not None and key not in cls.actors:
                lease.release(cls.model, [(key, actor.epoch)])

    @classmethod
    def forget_actors(cls) -> None:
        """Drop every actor of the game in this process (tests; a process that lost its database)."""
        for actor in cls.actors.values():
            actor._disarm()
        cls.actors.clear()

    @classmethod
    def renew_leases(cls, *, now: datetime | None = None) -> set[int]:
        """Renew the leases of the game's tables this process's actors hold, in one UPDATE (the clock's
        thread), and drop the actors whose lease was lost. Returns the ids of those tables."""
        held = {
            key: actor.epoch
            for key, actor in list(cls.actors.items())
            if actor.epoch is not None and (actor.state is not None or actor.connections)
        }
        return renew_held(cls.model, cls.actors, held, now=now or timezone.now())

    @classmethod
    def due(cls, now: datetime) -> Iterable[tuple]:
        """The game's tables the sweep looks at: (id, version, deadline, owner, lease_until) of each row with
        a due deadline."""
        rows = cls.model.objects.filter(deadline__lte=now)
        return rows.values_list("id", "version", "deadline", "owner", "lease_until")

    @classmethod
    def sweep(cls, *, now: datetime | None = None) -> int:
        """Apply the due deadlines of the game's tables no live owner looks after (`live.clock_steps`).
        Returns how many changes were written."""
        now = now or timezone.now()
        due = list(cls.due(now))
        owners = {row[0]: row[3] for row in due}
        changed = 0
        for key, version in unowned(due, cls.actors, now=now):
            # The claim's actor counts the sockets an actor here counts; it marks the seats only when an owner
            # held the table (that owner's count is gone).
            held = cls.actors.get(key)
            connections = held.connections if held is not None else None
            actor = cls(key, connections=connections, marks_on_load=bool(owners[key]))
            changed += claim(cls.model, actor, version, now=now, registry=cls.actors)
        return changed
