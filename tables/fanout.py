"""Broadcasts delivered inside the process without a trip through the channel layer, and between processes
with one channel-layer message per process.

Every websocket of this process that listens to a group ("table-7", "lobby") joins it here with a mailbox (a
`Mailbox`: its consumer's messages handled one at a time, in order). `publish` hands a message to this
process's mailboxes in that group at once, then, with a Redis layer, sends it once to the group on the layer,
where each process has one member: its relay channel. A process's relay receives what the other processes
publish and hands it to its own mailboxes; what it published itself it has already delivered, so it skips it.
With the in-memory layer this process is the only one, and the layer is not used at all.

Before, every consumer's own channel was in the group, and a viewer on the acting process heard of an action
only after the broadcast had gone through Redis and back (channels-redis's group send is four commands, then
the process pops the message): round trips that each wait their turn on a busy event loop.

A relay keeps its memberships fresh: after its receive fails (Redis went away, and a restarted Redis has
forgotten every group) it joins every group that has a mailbox here again as soon as it can, retrying every
`RETRY_SECONDS` until Redis takes the joins, and every `REJOIN_SECONDS` besides. So the other processes'
broadcasts are lost only while Redis is away and a moment after (at most `REJOIN_SECONDS` if a restart went
unnoticed), and then every listener here is told to catch up (`REJOINED`); the layer's group expiry never
drops a membership in use.

The registry is per event loop (a server has one; tests make several). Everything here runs on that loop.
"""

import asyncio
import contextlib
import logging
import uuid
import weakref
from collections.abc import Awaitable, Callable

from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger(__name__)

#: How often a relay joins its groups again besides after a failed receive (a restart it did not notice).
REJOIN_SECONDS = 10.0
#: How long a relay waits after a failed receive before it rejoins its groups and receives again.
RETRY_SECONDS = 1.0
#: Handed to every listener of a process once its relay is back in its groups after losing Redis: messages
#: may have been lost meanwhile (a consumer's `fanout_rejoined` catches up).
REJOINED = {"type": "fanout.rejoined"}
#: Extra keys of a message between processes: who published it, and to which group.
ORIGIN, GROUP = "_fanout_origin", "_fanout_group"


class Mailbox:
    """A listener's messages, handled one at a time in order by `handle` in a task of its own, from `start()`
    on (a consumer joins its group before reading the state, and starts handling once it has sent that
    state). If `handle` raises, the error is logged and `failed` called (a consumer closes its websocket, as
    Channels does when a handler raises)."""

    def __init__(
        self,
        handle: Callable[[dict], Awaitable[None]],
        *,
        failed: Callable[[], Awaitable[None]] | None = None,
    ):
        self._handle, self._failed = handle, failed
        self._queue: asyncio.Queue[dict] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    def deliver(self, message: dict) -> None:
        self._queue.put_nowait(dict(message))

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        while True:
            message = await self._queue.get()
            try:
                await self._handle(message)
            except Exception:
                logger.exception("a %s message could not be handled", message.get("type"))
                if self._failed is not None:
                    await self._failed()
                return


class Fanout:
    """One process's listeners by group, and its relay channel on the layer (see the module)."""

    def __init__(self, layer, *, origin: str | None = None):
        self.layer = layer
        self.origin = origin or uuid.uuid4().hex
        self.groups: dict[str, set] = {}  # group -> mailboxes (anything with `deliver(message)`)
        self.remote = layer is not None and not isinstance(layer, InMemoryChannelLayer)
        self.relay: str | None = None
        self.joined: set[str] = set()  # groups the relay is a member of
        self._membership = asyncio.Lock()
        self._lost = asyncio.Event()  # set when the relay's receive failed: rejoin at once
        self._tasks: list[asyncio.Task] = []

    async def join(self, group: str, mailbox) -> None:
        """`mailbox` receives the group's messages from now on (raises if the layer cannot be reached)."""
        self.groups.setdefault(group, set()).add(mailbox)
        try:
            await self._sync(group)
        except Exception:
            self._forget(group, mailbox)
            raise

    async def leave(self, group: str, mailbox) -> None:
        self._forget(group, mailbox)
        try:
            await self._sync(group)
        except Exception:  # the layer is down: its memberships expire, and a rejoin only adds groups in use
            logger.warning("could not leave %s on the channel layer", group, exc_info=True)

    async def publish(self, group: str, message: dict) -> None:
        """Deliver `message` to this process's mailboxes in `group`, then to the other processes'."""
        for mailbox in list(self.groups.get(group, ())):
            mailbox.deliver(message)
        if self.remote:
            await self.layer.group_send(group, {**message, ORIGIN: self.origin, GROUP: group})

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()

    def _forget(self, group: str, mailbox) -> None:
        members = self.groups.get(group)
        if members is not None:
            members.discard(mailbox)
            if not members:
                del self.groups[group]

    async def _sync(self, group: str) -> None:
        """Make the relay a member of `group` exactly while it has a mailbox here."""
        if not self.remote:
            return
        async with self._membership:
            if self.relay is None:
                # A channel like the consumers' own: channels-redis pops every channel of a process from one
                # key, under one lock, so a channel of another prefix would wait for their blocking pops.
                self.relay = await self.layer.new_channel()
                loop = asyncio.get_running_loop()
                self._tasks = [
                    loop.create_task(self._receive()),
                    loop.create_task(self._rejoin_now_and_then()),
                ]
            wanted = group in self.groups
            if wanted and group not in self.joined:
                await self.layer.group_add(group, self.relay)
                self.joined.add(group)
            elif not wanted and group in self.joined:
                self.joined.discard(group)
                await self.layer.group_discard(group, self.relay)

    async def _receive(self) -> None:
        """The relay: hand the other processes' messages to this process's mailboxes."""
        while True:
            try:
                message = await self.layer.receive(self.relay)
            except asyncio.CancelledError:
                raise
            except Exception:
                # Redis went away: when it is back it has forgotten every group, so join them again at once.
                logger.warning("the relay could not receive from the channel layer; retrying", exc_info=True)
                self._lost.set()
                await asyncio.sleep(RETRY_SECONDS)
                continue
            # Not changed in place: the layer hands one dict to every relay of this process (tests run two).
            origin, group = message.get(ORIGIN), message.get(GROUP)
            if origin == self.origin or group is None:
                continue
            plain = {key: value for key, value in message.items() if key not in (ORIGIN, GROUP)}
            for mailbox in list(self.groups.get(group, ())):
                mailbox.deliver(plain)

    async def _rejoin_now_and_then(self) -> None:
        """Rejoin every `REJOIN_SECONDS`, and at once after a failed receive; a rejoin that fails (Redis not
        back yet, or a pooled connection it closed) is tried again every `RETRY_SECONDS` until it succeeds."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._lost.wait(), REJOIN_SECONDS)
            recovering = self._lost.is_set()
            self._lost.clear()
            if not await self.rejoin():
                self._lost.set()
                await asyncio.sleep(RETRY_SECONDS)
            elif recovering:
                # What the other processes published while this relay was out of its groups is lost: tell
                # every listener here to catch up (a consumer sends its viewer's current view if newer).
                for mailbox in {mailbox for members in self.groups.values() for mailbox in members}:
                    mailbox.deliver(REJOINED)

    async def rejoin(self) -> bool:
        """Join every group that has a mailbox here again (a restarted Redis has forgotten them all); whether
        every join succeeded."""
        async with self._membership:
            for group in list(self.groups):
                try:
                    await self.layer.group_add(group, self.relay)
                except Exception:
                    logger.warning("the relay could not join %s again", group, exc_info=True)
                    return False
                self.joined.add(group)
        return True


_by_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Fanout]" = weakref.WeakKeyDictionary()


def here() -> Fanout:
    """The running loop's registry (made on first use, for the default channel layer)."""
    loop = asyncio.get_running_loop()
    fanout = _by_loop.get(loop)
    if fanout is None:
        fanout = _by_loop[loop] = Fanout(get_channel_layer())
    return fanout


async def join(group: str, mailbox) -> None:
    await here().join(group, mailbox)


async def leave(group: str, mailbox) -> None:
    await here().leave(group, mailbox)


async def publish(group: str, message: dict) -> None:
    await here().publish(group, message)


async def publish_elsewhere(group: str, message: dict) -> None:
    """Send `message` to the servers' relays only, from a loop with no listeners (a thread of a process
    whose server loop has stopped, a management command)."""
    layer = get_channel_layer()
    if layer is not None and not isinstance(layer, InMemoryChannelLayer):
        await layer.group_send(group, {**message, ORIGIN: "", GROUP: group})
