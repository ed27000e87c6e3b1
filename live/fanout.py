"""How viewers learn of changes, for every game: a table's new version, a chat line, a reaction, the lobby.

In this process: a registry, per event loop, of the tables' viewers (`join`/`leave`: each a `Mailbox`, its
consumer's messages handled one at a time, in order) and of the lobby's. A table's actor hands the shared view
part of each version it commits straight to the table's viewers here (`show`: `live.shared` messages carrying
an in-process object with its `version`; each viewer adds its own part). A change made by any other path
(staff, the clock's sweep, a game's services) announces its version on commit (`changed_on_commit`): the
viewers here then get the shared part read once from the database for all of them (the game's
`Game.read_view`).

Between processes: only content-free notices ("table N of game G is at version v", "chat line m at table N",
"the lobby changed") and reactions (public: an emote from the list and its sender's name, never stored) over
Channels' channel layer. A process that has viewers of a table joins the layer's group `<game>-<id>` with one
channel of its own (`_Relay`), and the lobby's group while it has lobby viewers. A group this process is in
gets notices only while another live process is in it too: the relay reads the group's members (those that
renewed their membership lately) when it joins and every `REFRESH_SECONDS`, and a relay that joins a group
with others in it tells them (`relay.joined`). Where the load balancer sends each table's sockets to its
owner (docs/deployment.md) nobody else is in the group, and a commit costs no Redis traffic at all. Nothing on
the layer is trusted for content: a notice only makes this process read the table from the database (a forged
one costs a read; a reaction is checked against the emote list), and no view part, hidden card or seed
crosses Redis. With the in-memory layer this process is the only one and the layer is not used. After the
relay loses the layer (Redis restarts) it joins its groups again and reads every table it shows again, since
notices may have been lost meanwhile; and it joins them again every `REFRESH_SECONDS` in any case, since a
restarted Redis may be reconnected to without an error.

Which thread: the registry lives on the server's event loop (consumers register it when they connect,
`register_loop`); a send from another thread (a database thread, the clock) is handed to it with
`call_soon_threadsafe`. Without a running loop here nobody is listening in this process: only the other
processes are told (with a Redis layer).

The lobby is told at most once every `LOBBY_SECONDS` per process (`_LobbyPacer`): the first change after a
quiet spell at once, the rest of the interval's changes in one announcement at its end.
"""

import asyncio
import contextvars
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction

from live import games
from live.protocol import EMOTES

logger = logging.getLogger(__name__)

LOBBY_GROUP = "lobby"
#: The lobby is told of changes at most once in this many seconds per process (`_LobbyPacer`).
LOBBY_SECONDS = 0.5
#: How long the relay waits after the layer failed (Redis away) before it tries again.
RETRY_SECONDS = 1.0
#: The relay adds itself to its groups again this often: a Redis that restarted (without persistence) lost
#: every membership, and redis-py may reconnect the relay's reads without an error to tell it.
REFRESH_SECONDS = 5.0
#: A relay in a group that has not renewed its membership for this long is taken for dead (`_look`).
LIVE_MEMBER_SECONDS = 3 * REFRESH_SECONDS

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def group_of(game: str, table_id: int) -> str:
    """The viewers' group of a game's table (a valid channel-layer group name)."""
    return f"{game}-{table_id}"


def _table_of(group: str) -> tuple[str, int] | None:
    """The game and table of a table's group (None: the lobby's)."""
    game, _, table = group.rpartition("-")
    return (game, int(table)) if game and table.isdigit() else None


def register_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Remember the server's event loop (called by consumers in `connect`)."""
    global _loop
    with _lock:
        _loop = loop


class Mailbox:
    """A viewer's messages, handled one at a time in order by `handle` in a task of its own, from `start()`
    on (a consumer joins before reading its first view, and starts handling once it has sent it). If
    `handle` raises, the error is logged and `failed` called (a consumer closes its websocket)."""

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
        self._queue.put_nowait(message)

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


class _Registry:
    """One event loop's viewers by group, and its relay to the other processes. Runs on its loop only."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.groups: dict[str, set[Mailbox]] = {}
        self.latest: dict[str, int] = {}  # table's group -> the newest version shown or being read here
        self.pacer = _LobbyPacer(self)
        layer = get_channel_layer()
        self.relay = None if layer is None or isinstance(layer, InMemoryChannelLayer) else _Relay(self, layer)

    async def join(self, group: str, mailbox: Mailbox) -> None:
        members = self.groups.setdefault(group, set())
        members.add(mailbox)
        if self.relay is not None and len(members) == 1:
            try:
                await self.relay.join(group)
            except Exception:
                self._forget(group, mailbox)
                raise

    async def leave(self, group: str, mailbox: Mailbox) -> None:
        self._forget(group, mailbox)
        if self.relay is not None and group not in self.groups:
            try:
                await self.relay.leave(group)
            except Exception:  # the layer is away: its groups expire
                logger.warning("could not leave %s", group, exc_info=True)

    def _forget(self, group: str, mailbox: Mailbox) -> None:
        members = self.groups.get(group)
        if members is not None:
            members.discard(mailbox)
            if not members:
                del self.groups[group]
                self.latest.pop(group, None)

    def deliver(self, group: str, message: dict) -> None:
        for mailbox in list(self.groups.get(group, ())):
            mailbox.deliver(message)

    # --- what happens here ---

    def show(self, game: str, table_id: int, shared, lobby: bool) -> None:
        """A table actor here committed `shared.version`: its viewers here get the shared part, the other
        processes a notice."""
        group, version = group_of(game, table_id), shared.version
        if version > self.latest.get(group, -1) and group in self.groups:
            self.latest[group] = version
            self.deliver(group, {"type": "live.shared", "shared": shared})
        self.tell_others(group, {"type": "live.changed", "game": game, "table": table_id, "v": version})
        if lobby:
            self.pacer.changed()

    def changed(self, game: str, table_id: int, version: int, *, lobby: bool, others: bool) -> None:
        """Version `version` of the table was committed without an actor here (or told by another process):
        read it once for the viewers here."""
        group = group_of(game, table_id)
        if version > self.latest.get(group, -1) and group in self.groups:
            self.latest[group] = version
            self.loop.create_task(self._read(game, table_id)).add_done_callback(_log_failure)
        if others:
            self.tell_others(group, {"type": "live.changed", "game": game, "table": table_id, "v": version})
        if lobby and others:
            self.pacer.changed()

    async def _read(self, game: str, table_id: int) -> None:
        group = group_of(game, table_id)
        try:
            shared = await database_sync_to_async(games.get(game).read_view)(table_id)
        except ObjectDoesNotExist:
            self.deliver(group, {"type": "live.gone"})
            return
        if shared.version >= self.latest.get(group, -1):
            self.latest[group] = shared.version
        self.deliver(group, {"type": "live.shared", "shared": shared})

    def chat(self, game: str, table_id: int, line_id: int, *, others: bool) -> None:
        group = group_of(game, table_id)
        self.deliver(group, {"type": "live.chat", "id": line_id})
        if others:
            self.tell_others(group, {"type": "live.chat", "game": game, "table": table_id, "id": line_id})

    def emote(self, game: str, table_id: int, entry: dict, *, others: bool) -> None:
        group = group_of(game, table_id)
        self.deliver(group, {"type": "live.emote", **entry})
        if others:
            self.tell_others(group, {"type": "live.emote", "game": game, "table": table_id, "entry": entry})

    def tell_others(self, group: str, message: dict) -> None:
        if self.relay is not None:
            self.loop.create_task(self.relay.send(group, message)).add_done_callback(_log_failure)

    def rejoined(self) -> None:
        """Notices may have been lost: read every table shown here again, and tell the lobby."""
        self.latest.clear()
        for group in list(self.groups):
            table = _table_of(group)
            if table is None:
                self.deliver(group, {"type": "lobby.changed"})
            else:
                self.changed(*table, 0, lobby=False, others=False)


class _Relay:
    """This process's channel on the layer, in the groups of the tables (and the lobby) it has viewers of;
    what arrives is checked for shape and used only as a reason to read the database."""

    def __init__(self, registry: _Registry, layer) -> None:
        self.registry, self.layer = registry, layer
        self.channel: str | None = None
        self.joined: set[str] = set()
        #: Whether another process is in each group joined here, as last read or told (`_look`).
        self.others: dict[str, bool] = {}
        #: How many `relay.joined` of each group arrived: one arriving during a read of the group's members
        #: outdates a read that found nobody.
        self._told: dict[str, int] = {}
        self._task: asyncio.Task | None = None
        self._refreshing: asyncio.Task | None = None

    async def _ensure(self) -> str:
        if self.channel is None:
            # The layer's default prefix: channels-redis receives every channel of one prefix with one loop
            # (a channel of a prefix of its own would wait its turn behind the consumers' blocking reads).
            self.channel = await self.layer.new_channel()
            self._task = self.registry.loop.create_task(self._receive())
            self._refreshing = self.registry.loop.create_task(self._refresh())
        return self.channel

    async def join(self, group: str) -> None:
        channel = await self._ensure()
        self.joined.add(group)
        await self.layer.group_add(group, channel)
        if await self._look(group):
            await self.layer.group_send(group, {"type": "relay.joined", "group": group, "from": channel})

    async def leave(self, group: str) -> None:
        self.joined.discard(group)
        self.others.pop(group, None)
        self._told.pop(group, None)
        if self.channel is not None:
            await self.layer.group_discard(group, self.channel)

    async def send(self, group: str, message: dict) -> None:
        """Send a notice to the other processes in `group` (none to a group this process is in alone)."""
        if self.others.get(group) is False:
            return
        await self.layer.group_send(group, {**message, "from": self.channel or ""})

    async def _look(self, group: str) -> bool:
        """Read whether another process is in `group` (one this process is in), and remember it."""
        told = self._told.get(group, 0)
        channels = await self.layer.group_channels(group, within=LIVE_MEMBER_SECONDS)
        others = any(channel != self.channel for channel in channels) or self._told.get(group, 0) != told
        if group in self.joined:
            self.others[group] = others
        return others

    async def _receive(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("the relay could not receive from the channel layer; retrying", exc_info=True)
                await asyncio.sleep(RETRY_SECONDS)
                await self._rejoin()
                continue
            try:
                self._handle(message)
            except Exception:
                logger.warning("the relay skipped a message it could not read: %r", message, exc_info=True)

    async def _refresh(self) -> None:
        """Join the groups again every `REFRESH_SECONDS` and read again who else is in them (no table is read:
        a notice lost meanwhile is made good by the table's next one, which makes this process read the
        table's current version; a `relay.joined` lost meanwhile, by this read)."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            try:
                for group in list(self.joined):
                    await self.layer.group_add(group, self.channel)
                    await self._look(group)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("the relay could not refresh its groups; trying again later", exc_info=True)

    async def _rejoin(self) -> None:
        try:
            for group in list(self.joined):
                await self.layer.group_add(group, self.channel)
                await self._look(group)
        except Exception:
            logger.warning("the relay could not join its groups again", exc_info=True)
            return
        self.registry.rejoined()

    def _handle(self, message: dict) -> None:
        if message.get("from") == self.channel:
            return  # sent from here, and shown here already
        kind = message.get("type")
        if kind == "relay.joined":
            group = message.get("group")
            if group in self.joined:  # (one left since is read again at the next refresh)
                self.others[group] = True  # another process shows it now: send it the group's notices
                self._told[group] = self._told.get(group, 0) + 1
            return
        if kind == "lobby.changed":
            self.registry.deliver(LOBBY_GROUP, {"type": "lobby.changed"})
            return
        game, table_id = message.get("game"), message.get("table")
        if type(table_id) is not int or type(game) is not str:
            raise ValueError("no table")
        if kind == "live.changed" and type(message.get("v")) is int:
            self.registry.changed(game, table_id, message["v"], lobby=False, others=False)
        elif kind == "live.chat" and type(message.get("id")) is int:
            self.registry.chat(game, table_id, message["id"], others=False)
        elif kind == "live.emote" and _is_emote(message.get("entry")):
            entry = {key: message["entry"][key] for key in EMOTE_FIELDS}
            self.registry.emote(game, table_id, entry, others=False)
        else:
            raise ValueError("an unknown notice")


#: What a reaction carries (`live.chat.react`).
EMOTE_FIELDS = ("emote", "text", "from", "display_name", "at")


def _is_emote(entry) -> bool:
    """A reaction from another process has the shape `live.chat.react` gives it, with an emote of the list."""
    if type(entry) is not dict:
        return False
    if not all(type(entry.get(key)) is str and len(entry[key]) <= 200 for key in EMOTE_FIELDS):
        return False
    return EMOTES.get(entry["emote"]) == entry["text"]


class _LobbyPacer:
    """The lobby's announcements of one event loop, at most one every `LOBBY_SECONDS`: the first change after
    a quiet spell goes at once, the ones that follow it within the interval go as one at its end. Every
    phase change of every table changes the lobby, and every lobby viewer reads and renders the whole lobby
    when told (100 busy tables: some 40 announcements a second); the announcement carries nothing, so one
    stands for any number."""

    def __init__(self, registry: _Registry) -> None:
        self.registry = registry
        self.last = -LOBBY_SECONDS  # loop time of the last announcement
        self.waiting: asyncio.TimerHandle | None = None

    def changed(self) -> None:
        if self.waiting is not None:
            return  # an announcement is already due: it will tell of this change too
        loop = self.registry.loop
        delay = self.last + LOBBY_SECONDS - loop.time()
        if delay <= 0:
            self._announce()
        else:
            self.waiting = loop.call_later(delay, self._announce)

    def _announce(self) -> None:
        self.waiting = None
        self.last = self.registry.loop.time()
        self.registry.deliver(LOBBY_GROUP, {"type": "lobby.changed"})
        self.registry.tell_others(LOBBY_GROUP, {"type": "lobby.changed"})


_registries: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Registry]" = weakref.WeakKeyDictionary()


def _registry(loop: asyncio.AbstractEventLoop) -> _Registry:
    with _lock:
        registry = _registries.get(loop)
        if registry is None:
            registry = _registries[loop] = _Registry(loop)
        return registry


async def join(group: str, mailbox: Mailbox) -> None:
    """`mailbox` receives the group's messages from now on (raises if the layer cannot be reached)."""
    await _registry(asyncio.get_running_loop()).join(group, mailbox)


async def leave(group: str, mailbox: Mailbox) -> None:
    await _registry(asyncio.get_running_loop()).leave(group, mailbox)


# --- from any thread ---------------------------------------------------------------------------------------


def show(game: str, table_id: int, shared, *, lobby: bool = False) -> None:
    """A table actor committed the version of `shared` (which has its `version`): show it to the table's
    viewers here, tell the other processes (and the lobby when `lobby`)."""
    notice = {"type": "live.changed", "game": game, "table": table_id, "v": shared.version}
    _on_loop(lambda registry: registry.show(game, table_id, shared, lobby), notice, lobby=lobby)


def changed(game: str, table_id: int, version: int, *, lobby: bool = False) -> None:
    """The table is at `version` (committed): every viewer, here and elsewhere, gets it read from the
    database."""
    notice = {"type": "live.changed", "game": game, "table": table_id, "v": version}
    _on_loop(
        lambda registry: registry.changed(game, table_id, version, lobby=lobby, others=True),
        notice,
        lobby=lobby,
    )


def changed_on_commit(game: str, table_id: int, version: int, *, lobby: bool = False) -> None:
    """After the current transaction commits, tell the table's viewers (and the lobby when `lobby`)."""
    transaction.on_commit(lambda: changed(game, table_id, version, lobby=lobby))


def chat_on_commit(game: str, table_id: int, line_id: int) -> None:
    """After the current transaction commits, show the table's new chat line to its viewers everywhere."""
    notice = {"type": "live.chat", "game": game, "table": table_id, "id": line_id}
    transaction.on_commit(
        lambda: _on_loop(lambda registry: registry.chat(game, table_id, line_id, others=True), notice)
    )


def committed_elsewhere(game: str, table_id: int, version: int) -> None:
    """Another process committed `version` of the table (its owner answered a forwarded command): the viewers
    here get it read from the database, once (its owner's notice of the same version then changes nothing).
    Nobody else is told: the owner told them."""
    _on_loop(lambda registry: registry.changed(game, table_id, version, lobby=False, others=False), None)


def emote(game: str, table_id: int, entry: dict) -> None:
    """Show a reaction (`live.chat.react`) to the table's viewers, here and in the other processes."""
    notice = {"type": "live.emote", "game": game, "table": table_id, "entry": entry}
    _on_loop(lambda registry: registry.emote(game, table_id, entry, others=True), notice)


def lobby_changed() -> None:
    """The lobby changed (paced: `_LobbyPacer`)."""
    _on_loop(lambda registry: registry.pacer.changed(), None, lobby=True)


def lobby_changed_on_commit() -> None:
    transaction.on_commit(lobby_changed)


def _on_loop(work: Callable[[_Registry], None], notice: dict | None, *, lobby: bool = False) -> None:
    """Run `work` on the server's loop (from any thread); never raises (a lost notice is repaired by the next
    one, since every notice makes the receivers read the current state). Without a running loop nobody is
    listening here: only the other processes are told, through a Redis layer."""
    with _lock:
        loop = _loop
    if loop is not None and (loop.is_closed() or not loop.is_running()):
        loop = None
    try:
        if loop is not None:
            registry = _registry(loop)
            if _runs_on(loop):
                work(registry)
            else:
                # In a context of its own: the calling thread's (a database thread inside Channels'
                # `database_sync_to_async`) would make the reads it starts refuse to run (asgiref's deadlock
                # guard).
                loop.call_soon_threadsafe(work, registry, context=contextvars.Context())
            return
        layer = get_channel_layer()
        if layer is None or isinstance(layer, InMemoryChannelLayer):
            return
        for message in ([notice] if notice else []) + ([{"type": "lobby.changed"}] if lobby else []):
            if message["type"] == "lobby.changed":
                group = LOBBY_GROUP
            else:
                group = group_of(message["game"], message["table"])
            _send_elsewhere_now(layer, group, message)
    except Exception:
        logger.exception("a notice could not be sent")


def _send_elsewhere_now(layer, group: str, message: dict) -> None:
    """Tell the other processes and wait until it is done: in an event loop of this thread's own, or, from
    synchronous code called inside a running event loop (where `async_to_sync` refuses to run), of a helper
    thread's."""
    send = async_to_sync(layer.group_send, force_new_loop=True)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        send(group, message)
        return
    helper = threading.Thread(target=send, args=(group, message), name="notice-elsewhere")
    helper.start()
    helper.join()


def single_process() -> bool:
    """True with the in-memory channel layer: this process is the only one serving websockets."""
    return isinstance(get_channel_layer(), InMemoryChannelLayer)


def _runs_on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _log_failure(future) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.error("a notice failed: %r", future.exception())
