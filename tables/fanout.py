"""Broadcasts delivered inside the process without a trip through the channel layer, and between processes
through Redis publish/subscribe.

Every websocket of this process that listens to a group ("table-7", "lobby") joins it here with a mailbox (a
`Mailbox`: its consumer's messages handled one at a time, in order). `publish` hands a message to this
process's mailboxes in that group at once, then, with a Redis channel layer, publishes it once on the group's
Redis channel (`RedisPubSub`), to which every process with a mailbox in the group is subscribed. A process
hears its own messages back from Redis too; it has delivered them already, so it drops them unread (they
start with its origin). With the in-memory layer this process is the only one, and Redis is not used.

Before, the processes exchanged broadcasts through channels-redis's group send: four commands a message and
a copy queued per process, its own included, which the process then popped and decoded only to skip it.
A publish is one command, and Redis copies the message to the subscribers itself.

Redis restarts: the subscribing connection breaks; redis-py connects again (every `RETRY_SECONDS` while Redis
is away) and subscribes to the same channels. What was published meanwhile is lost, so once Redis confirms
the subscriptions again every listener here is told to catch up (`REJOINED`).

A link that goes silent instead (a firewall or NAT that forgets an idle connection, a network cut without a
reset: no error ever arrives) is found by asking: after `QUIET_SECONDS` without a word from Redis the relay
sends a PING on the subscribing connection, and if nothing at all comes back within `QUIET_SECONDS` more it
drops that connection and goes on as after a restart (connect, subscribe, `REJOINED`). A publish waits at most
`PUBLISH_SECONDS` for Redis's reply, then goes again once on a fresh connection.

The registry is per event loop (a server has one; tests make several). Everything here runs on that loop.
"""

import asyncio
import logging
import uuid
import weakref
from collections.abc import Awaitable, Callable

import orjson
import redis.asyncio
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

logger = logging.getLogger(__name__)

#: How long the relay waits after a failed receive (Redis away) before it tries again.
RETRY_SECONDS = 1.0
#: Silence on the subscribing connection after which the relay pings Redis, and then the wait for any reply
#: after which it takes the connection for dead.
QUIET_SECONDS = 5.0
#: The longest a publish waits for Redis's reply before it goes again on a fresh connection (once).
PUBLISH_SECONDS = 5.0
#: Handed to every listener of a process once its subscriptions are back after losing Redis: messages may
#: have been lost meanwhile (a consumer's `fanout_rejoined` catches up).
REJOINED = {"type": "fanout.rejoined"}


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


class RedisPubSub:
    """The processes' link: one Redis pub/sub channel per group, on the channel layer's Redis. Redis shares
    pub/sub channels between its numbered databases, so the names carry the database's number (a test run and
    a benchmark on one Redis stay apart)."""

    def __init__(self, address: str, **options):
        # One retry, at once, on a fresh connection: a pooled connection that a restarted Redis closed
        # while it lay idle fails its next command (without it the first broadcasts after a restart fail).
        options.setdefault("retry", Retry(NoBackoff(), 1))
        # Also bounds the subscribing connection's connects and commands; its reads have their own timeout.
        options.setdefault("socket_timeout", PUBLISH_SECONDS)
        self.client = redis.asyncio.Redis.from_url(address, **options)
        self.prefix = f"blackjack:{self.client.connection_pool.connection_kwargs.get('db', 0)}:"
        self.pubsub = self.client.pubsub()
        self._subscribed = asyncio.Event()  # nothing to read before the first subscription
        self._reconnected = False
        self._pinged_at: float | None = None  # when the relay asked Redis for a sign of life, unanswered

    @classmethod
    def for_layer(cls, layer, **extra) -> "RedisPubSub | None":
        """The link on a channels-redis layer's (first) Redis, with `extra` redis-py options; None for any
        other layer (one process)."""
        if not isinstance(layer, RedisChannelLayer):
            return None
        options = dict(layer.hosts[0])  # as settings.CHANNEL_LAYERS gives it: an address and options
        return cls(options.pop("address"), **options, **extra)

    async def publish(self, group: str, data: bytes) -> None:
        await self.client.publish(self.prefix + group, data)

    async def subscribe(self, group: str) -> None:
        await self.pubsub.subscribe(self.prefix + group)
        if not self._subscribed.is_set():
            # Called on every later connect of the subscribing connection, after redis-py has subscribed to
            # the same channels again (it registered its own callback first).
            self.pubsub.connection.register_connect_callback(self._connected_again)
            self._subscribed.set()

    async def unsubscribe(self, group: str) -> None:
        await self.pubsub.unsubscribe(self.prefix + group)

    def _connected_again(self, connection) -> None:
        self._reconnected = True

    async def receive(self) -> tuple[str, bytes] | None:
        """The next message published on a subscribed channel, as (group, data); None once Redis has confirmed
        the subscriptions again after the connection broke. Raises while Redis cannot be reached."""
        await self._subscribed.wait()
        loop = asyncio.get_running_loop()
        while True:
            message = await self.pubsub.get_message(timeout=QUIET_SECONDS)
            if message is None:
                await self._quiet(loop.time())
                continue
            self._pinged_at = None  # anything at all from Redis shows the connection alive
            if message["type"] == "message":
                return message["channel"].decode()[len(self.prefix) :], message["data"]
            if message["type"] == "subscribe" and self._reconnected:
                self._reconnected = False  # the resubscription is one command: all channels are back
                return None

    async def _quiet(self, now: float) -> None:
        """Nothing came for `QUIET_SECONDS`: ping Redis, or, if the last ping went unanswered as long, drop
        the subscribing connection (the next read connects and subscribes again) and raise ConnectionError."""
        if self._pinged_at is None:
            await self.pubsub.ping()  # answered on this connection, in turn with the messages
            self._pinged_at = now
        elif now - self._pinged_at >= QUIET_SECONDS:
            self._pinged_at = None
            await self.pubsub.connection.disconnect()
            raise redis.ConnectionError(f"Redis did not answer a ping in {QUIET_SECONDS:g} s")

    async def close(self) -> None:
        await self.pubsub.aclose()
        await self.client.aclose()


class Fanout:
    """One process's listeners by group, and its link to the other processes (see the module)."""

    def __init__(self, link: RedisPubSub | None = None, *, origin: str | None = None):
        self.link = link
        self.origin = (origin or uuid.uuid4().hex).encode()
        self.groups: dict[str, set] = {}  # group -> mailboxes (anything with `deliver(message)`)
        self.subscribed: set[str] = set()  # groups the link is subscribed to
        self._membership = asyncio.Lock()
        self._relay: asyncio.Task | None = None

    async def join(self, group: str, mailbox) -> None:
        """`mailbox` receives the group's messages from now on (raises if Redis cannot be reached)."""
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
        except Exception:  # Redis is away: the connection is gone, and with it the subscription
            logger.warning("could not unsubscribe from %s", group, exc_info=True)

    async def publish(self, group: str, message: dict) -> None:
        """Deliver `message` to this process's mailboxes in `group`, then to the other processes'."""
        for mailbox in list(self.groups.get(group, ())):
            mailbox.deliver(message)
        if self.link is not None:
            await self.link.publish(group, encode(self.origin, message))

    async def close(self) -> None:
        if self._relay is not None:
            self._relay.cancel()
        if self.link is not None:
            await self.link.close()

    def _forget(self, group: str, mailbox) -> None:
        members = self.groups.get(group)
        if members is not None:
            members.discard(mailbox)
            if not members:
                del self.groups[group]

    async def _sync(self, group: str) -> None:
        """Keep the link subscribed to `group` exactly while it has a mailbox here."""
        if self.link is None:
            return
        async with self._membership:
            wanted = group in self.groups
            if wanted and group not in self.subscribed:
                await self.link.subscribe(group)
                self.subscribed.add(group)
                if self._relay is None:
                    self._relay = asyncio.get_running_loop().create_task(self._receive())
            elif not wanted and group in self.subscribed:
                self.subscribed.discard(group)
                await self.link.unsubscribe(group)

    async def _receive(self) -> None:
        """The relay: hand the other processes' messages to this process's mailboxes."""
        while True:
            try:
                received = await self.link.receive()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("the relay could not receive from Redis; retrying", exc_info=True)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if received is None:
                # What the other processes published while Redis was away is lost: tell every listener here
                # to catch up (a consumer sends its viewer's current view if newer).
                for mailbox in {mailbox for members in self.groups.values() for mailbox in members}:
                    mailbox.deliver(REJOINED)
                continue
            group, data = received
            if data.startswith(self.origin + b" "):
                continue  # published here, and delivered here already
            members = self.groups.get(group)
            if not members:
                continue
            message = decode(data)
            if message is None:
                logger.warning("the relay skipped a message on %s it could not read: %r", group, data[:80])
                continue
            for mailbox in list(members):
                mailbox.deliver(message)


def encode(origin: bytes, message: dict) -> bytes:
    """A message between processes: its publisher's origin, a space, the message as JSON."""
    return origin + b" " + orjson.dumps(message)


def decode(data: bytes) -> dict | None:
    """The message `encode` made, or None for anything else on the channel."""
    _, _, body = data.partition(b" ")
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return message if isinstance(message, dict) and isinstance(message.get("type"), str) else None


_by_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Fanout]" = weakref.WeakKeyDictionary()


def here() -> Fanout:
    """The running loop's registry (made on first use, linked through the default channel layer's Redis)."""
    loop = asyncio.get_running_loop()
    fanout = _by_loop.get(loop)
    if fanout is None:
        fanout = _by_loop[loop] = Fanout(RedisPubSub.for_layer(get_channel_layer()))
    return fanout


async def join(group: str, mailbox) -> None:
    await here().join(group, mailbox)


async def leave(group: str, mailbox) -> None:
    await here().leave(group, mailbox)


async def publish(group: str, message: dict) -> None:
    await here().publish(group, message)


async def publish_elsewhere(group: str, message: dict) -> None:
    """Send `message` to the other processes only, from a loop with no listeners (a thread of a process
    whose server loop has stopped, a management command)."""
    link = RedisPubSub.for_layer(get_channel_layer())
    if link is not None:
        try:
            await link.publish(group, encode(b"", message))
        finally:
            await link.close()
