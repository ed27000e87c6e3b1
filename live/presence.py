"""Who is connected to a live object, as its owner counts: kept in the owner's memory, never stored.

The owner of a table counts each user's open sockets by their channel names (one name per socket, unique
across processes) and the process that holds each, so two tabs of a user, or two sockets on two processes,
count as two, and the user is gone only when the last one closes. A socket tells the owner when it opens
and closes (forwarded over the channel layer from another process). The counts die with the owner: its
successor starts with nobody connected, and the sockets that survive tell it again.

A process that dies outright never tells the owner that its sockets closed: while an owner counts sockets
held by other processes, it asks each of those processes every `PROBE_SECONDS` whether it is alive
(`watch`; one small request on the channel layer a process, whatever its number of sockets), and forgets the
sockets of one that does not answer within `forward.REPLY_SECONDS`. Nothing here touches the database.

`CountingActor` is what every game's table actor does with that count (blackjack's `TableActor`, Durak's
`DurakActor`): count a socket in its mailbox and write the seats' marks as the count says (the game's
`mark_present`), forget a dead holder's sockets (`lost`), stay in its registry while it counts sockets, and
at its first load mark every seated player gone until their sockets tell it again (`synced`), and take a
command sent against a version that only marks replaced as sent against the newest of them (`past_marks`):
a player's socket dropping and coming back refuses nobody's action.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from live import forward, process
from live.actor import Actor

#: How often an owner asks the processes holding sockets it counts whether they are alive.
PROBE_SECONDS = 5.0
#: The kind of the "are you alive?" request on a process's channel.
KIND = "alive"

logger = logging.getLogger(__name__)

_watchers: dict[int, asyncio.Task] = {}


class Connections:
    """The open sockets of each user at one live object, with the process holding each."""

    def __init__(self) -> None:
        self._sockets: dict[int, dict[str, str]] = {}  # user id -> channel name -> process name

    def opened(self, user_id: int, channel: str, holder: str) -> None:
        """Count a socket of the user, held by the process `holder`."""
        self._sockets.setdefault(user_id, {})[channel] = holder

    def closed(self, user_id: int, channel: str) -> None:
        """Forget a socket of the user (one never counted here, opened under a previous owner, too)."""
        sockets = self._sockets.get(user_id)
        if sockets is not None:
            sockets.pop(channel, None)
            if not sockets:
                del self._sockets[user_id]

    def lost(self, holder: str) -> bool:
        """Forget every socket the process `holder` held (it died); True if there was any."""
        found = False
        for user_id, sockets in list(self._sockets.items()):
            for channel in [channel for channel, held_by in sockets.items() if held_by == holder]:
                self.closed(user_id, channel)
                found = True
        return found

    def users(self) -> frozenset[int]:
        """The users with at least one open socket (from any thread: a copy taken at once)."""
        return frozenset(self._sockets.copy())

    def holders(self) -> set[str]:
        """The processes holding the sockets counted here."""
        return {holder for sockets in list(self._sockets.values()) for holder in list(sockets.values())}

    def __bool__(self) -> bool:
        return bool(self._sockets)


class CountingActor(Actor):
    """An actor of a table whose players' presence it counts (`Connections`): a player whose last socket
    closed is marked gone (their grace runs), one whose socket opens is cleared. A game says how the marks
    are written (`mark_present`) and calls `synced` at its actor's loads, `past_marks` on its commands."""

    def __init__(
        self, key: int, registry: dict, *, connections: Connections | None = None, marks_on_load: bool = True
    ) -> None:
        super().__init__(key, registry)
        #: The sockets open at the table, as they told this owner (`presence`); kept across reloads.
        self.connections = connections if connections is not None else Connections()
        #: Whether the seats' marks are still to be written as `connections` say (at the first load).
        self._unsynced = marks_on_load
        #: The versions written here since the last change that was not marks: the version the first of
        #: those marks replaced, and the newest (`past_marks`); None when the last change was not marks.
        self._marked: tuple[int, int] | None = None

    def mark_present(self) -> int | None:
        """Write the seats' marks as `connections.users()` says (on a database thread, from the mailbox): the
        new version, or None if no seat changed."""
        raise NotImplementedError

    async def presence(self, user_id: int, channel: str, *, connected: bool, holder: str) -> int | None:
        """A socket of the user (its channel name, held by the process `holder`) opened or closed at the
        table: counted here, and the seats marked as the count says (the last socket closing starts the
        player's grace period, one opening ends it). Returns the new version, or None if no seat changed.
        While sockets of other processes are counted, those processes are asked whether they are alive
        (`watch`)."""
        if holder != process.name():
            watch(self._registry, type(self).lost)
        return await self._put(lambda: self.count_socket(user_id, channel, connected, holder=holder))

    def count_socket(
        self, user_id: int, channel: str, connected: bool, *, holder: str | None = None
    ) -> int | None:
        """`presence`'s work, without the mailbox (for synchronous callers: tests)."""
        if connected:
            self.connections.opened(user_id, channel, holder or process.name())
        else:
            self.connections.closed(user_id, channel)
        return self.mark_present()

    async def lost(self, holder: str) -> int | None:
        """The process `holder` did not answer (it died): its sockets are forgotten, and the players left
        without one are marked gone."""
        return await self._put(lambda: self.mark_present() if self.connections.lost(holder) else None)

    def synced(self, mark: Callable[[], int | None]) -> None:
        """The actor loaded the table: at its first load, `mark` writes the seats' marks as the
        sockets counted here say, whatever the database holds. A new owner counts nobody yet (the previous
        owner's count died with it), so every seated player is marked gone from now; the sockets still open
        elsewhere tell it again when they see their player marked, and the others' grace period runs."""
        if not self._unsynced:
            return
        self._unsynced = False  # also while the marks are decided: their own reload does not mark again
        try:
            mark()
        except BaseException:
            self._unsynced = True
            raise

    def written(self, before: int, after: int, *, marks: bool) -> None:
        """A command took the table from version `before` to `after` here; `marks`: it only wrote the seats'
        marks (`mark_present`)."""
        if not marks:
            self._marked = None
            return
        held = self._marked
        self._marked = (held[0] if held is not None and held[1] == before else before, after)

    def past_marks(self, version):
        """The version a command sent against `version` is taken as sent against: marks (who has a socket
        open) change nothing a player decided on or a deadline was set for, so a command (or an expiry)
        sent against a version that only marks replaced is taken as sent against the newest of them. A
        player's dropped connection or a take-over (whose first load marks every seat) then refuses no
        other player's action and loses no deadline. A retry of an applied action is still refused: its
        version was replaced by the action itself."""
        marked = self._marked
        if type(version) is int and marked is not None and marked[0] <= version < marked[1]:
            return marked[1]
        return version

    def evict(self) -> None:
        """Idle: leave the registry, unless sockets are open at the table: their count is kept here."""
        if not self.connections:
            self.leave()

    def leave(self) -> None:
        """Leave the registry, with the sockets counted: the table changed hands, or a command failed (the
        next owner counts the sockets that tell it)."""
        super().evict()


async def _alive(body: dict[str, Any]) -> dict[str, Any]:
    return {}


def serve() -> None:
    """Answer the other processes' "are you alive?" on this process's channel (at the app's `ready()`)."""
    forward.handles(KIND)(_alive)


async def answers(holder: str) -> bool:
    """Whether the process `holder` answers on its channel in time (`forward.REPLY_SECONDS`)."""
    try:
        await forward.request(holder, KIND, {})
    except (forward.Unreachable, forward.Failed):
        return False
    return True


def watch(registry: dict, lost: Callable[[Any, str], Awaitable[object]]) -> None:
    """Start, once per registry on the running loop, the task that asks the processes holding sockets the
    registry's actors count (`actor.connections`) whether they are alive, every `PROBE_SECONDS`, and calls
    `lost(actor, holder)` for each actor counting sockets of one that did not answer."""
    running = _watchers.get(id(registry))
    if running is not None and not running.done() and running.get_loop() is asyncio.get_running_loop():
        return
    forward.listen()  # the answers of this process to the others' probes
    _watchers[id(registry)] = asyncio.get_running_loop().create_task(_watch(registry, lost))


async def _watch(registry: dict, lost: Callable[[Any, str], Awaitable[object]]) -> None:
    me = process.name()
    while True:
        await asyncio.sleep(PROBE_SECONDS)
        actors = list(registry.values())
        holders = sorted({holder for actor in actors for holder in actor.connections.holders()} - {me})
        if not holders:
            continue
        alive = await asyncio.gather(*(answers(holder) for holder in holders))
        for holder, answered in zip(holders, alive, strict=True):
            if answered:
                continue
            logger.warning("%s did not answer: the sockets it held are gone", holder)
            for actor in actors:
                if holder in actor.connections.holders():
                    try:
                        await lost(actor, holder)
                    except Exception:
                        logger.exception("forgetting the sockets of %s failed", holder)
