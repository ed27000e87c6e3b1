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
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from live import forward, process

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


@forward.handles(KIND)
async def _alive(body: dict[str, Any]) -> dict[str, Any]:
    return {}


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
