"""An actor: the one owner, in this process, of a live object's state (a blackjack table, a Durak table).

Work reaches an actor through its mailbox (`_put`, an asyncio queue served by one task), so it is applied one
piece at a time, in order. Each piece is a synchronous function run on a database thread (Channels'
`database_sync_to_async`), since it decides and writes. An actor that
gets no work for `idle_seconds` leaves its registry (a dict keyed by the object's id, kept by the game); the
next piece of work makes a new actor, which loads the object afresh.

The object's deadline is a timer of its actor (`loop.call_later`) that puts the expiry in the mailbox, behind
the work already queued. A game says what its deadline is (`deadline`), how to apply it (`expire`) and whether
deadlines are enforced in this process at all (`timers_enabled`).
"""

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any

from channels.db import database_sync_to_async
from django.utils import timezone


class Actor:
    """A mailbox served by one task, with the deadline timer of the state it holds."""

    #: An actor that has had no work for this many seconds leaves its registry (lichess's actor maps do too).
    idle_seconds: float = 60.0

    def __init__(self, key: int, registry: dict) -> None:
        self.key = key
        self._registry = registry
        self._mailbox: asyncio.Queue | None = None
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._armed: tuple[int, datetime] | None = None

    # --- what a game defines ---

    def deadline(self) -> tuple[int, datetime] | None:
        """The version of the state in memory and its deadline, if it has one."""
        return None

    def expire(self, version: int) -> Any:
        """Apply the deadline set for `version` (on a database thread, from the mailbox)."""
        raise NotImplementedError

    def timers_enabled(self) -> bool:
        """Whether this process enforces deadlines."""
        return True

    # --- the mailbox ---

    def _put(self, work: Callable[[], Any]) -> asyncio.Future:
        """Queue `work`; the future is its result (or its exception) once applied."""
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._loop is not loop:
            self._loop, self._mailbox = loop, asyncio.Queue()
            self._task = loop.create_task(self._serve())
        done = loop.create_future()
        mailbox = self._mailbox
        assert mailbox is not None  # made with the task above
        mailbox.put_nowait((work, done))
        return done

    async def _serve(self) -> None:
        while True:
            mailbox = self._mailbox
            assert mailbox is not None  # made before this task
            try:
                work, done = await asyncio.wait_for(mailbox.get(), self.idle_seconds)
            except TimeoutError:
                self.evict()
                return
            try:
                result = await database_sync_to_async(work)()
            except Exception as exc:
                if not done.cancelled():
                    done.set_exception(exc)
            else:
                if not done.cancelled():
                    done.set_result(result)
            self._arm()

    def evict(self) -> None:
        """Leave the registry (idle, or dropped); a deadline still to come is left to the clock's sweep."""
        self._disarm()
        if self._registry.get(self.key) is self:
            del self._registry[self.key]

    # --- the deadline timer ---

    def armed_for(self, version: int) -> bool:
        """Whether the timer is set for the deadline of `version` (read from other threads: a snapshot)."""
        armed = self._armed
        return armed is not None and armed[0] == version

    def _arm(self) -> None:
        """Set the timer of the deadline of the state in memory (once per version and deadline)."""
        if not self.timers_enabled():
            return
        wanted = self.deadline()
        if wanted == self._armed:
            return
        self._disarm()
        if wanted is not None:
            self._armed = wanted
            self._schedule(*wanted)

    def _schedule(self, version: int, deadline: datetime) -> None:
        delay = max(0.0, (deadline - timezone.now()).total_seconds())
        loop = self._loop
        assert loop is not None  # a timer is set from the mailbox's task, or by the timer it replaces
        self._timer = loop.call_later(delay, self._ring, version, deadline)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._armed = None

    def _ring(self, version: int, deadline: datetime) -> None:
        """The deadline set for `version` is due: put its expiry in the mailbox (after the work already
        there). The loop's clock may ring a moment before the wall clock agrees: then wait the rest."""
        self._timer = None
        if timezone.now() < deadline:
            self._schedule(version, deadline)
            return
        self._put(lambda: self.expire(version))
