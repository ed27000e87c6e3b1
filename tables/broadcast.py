"""Group sends registered on commit: "table N changed to version v", "a chat message arrived", "the lobby
changed". Broadcasts carry nothing a client sees; every consumer builds its own viewer's view of the version
announced. They are published through `tables.fanout`: to this process's listeners directly, to the other
processes' through Redis publish/subscribe, there with the version's shared part when this process has built
it (`tables.viewmodel.export_shared`), so they need not read it from the database.

Which event loop sends: the listeners' mailboxes (and the in-memory layer's queues) belong to the server's
event loop and are not thread-safe, so a send from another thread (the deadline clock, a service run by
`sync_to_async`) is handed to that loop with `asyncio.run_coroutine_threadsafe`. Consumers register the loop
when they connect (`register_loop`). Without a registered loop the other processes are told through a Redis
layer with `async_to_sync`; with the in-memory layer and no loop nobody is connected to tell, so nothing is
sent.

The lobby is told at most once every `LOBBY_SECONDS` per process (`_LobbyPacer`): the first change after a
quiet spell at once, the rest of the interval's changes in one announcement at its end.

`held()` lets a consumer announce an action only after building its own viewer's view of the new version,
which the other viewers then find kept (`tables.viewmodel.cached_viewer_view`); with a Redis layer the
announcement carries that version's shared part to the other processes (`tables.viewmodel.export_shared`).
"""

import asyncio
import contextlib
import logging
import threading
import weakref

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

from tables import fanout
from tables.viewmodel import export_shared

logger = logging.getLogger(__name__)

LOBBY_GROUP = "lobby"
#: The lobby is told of changes at most once in this many seconds per process (`_LobbyPacer`).
LOBBY_SECONDS = 0.5

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()
_held = threading.local()


def table_group(table_id: int) -> str:
    return f"table-{table_id}"


def register_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Remember the server's event loop (called by consumers in `connect`)."""
    global _loop
    with _lock:
        _loop = loop


def table_changed_on_commit(table_id: int, version: int, *, lobby: bool = False) -> None:
    """After the current transaction commits, tell the table's viewers (and the lobby when `lobby`)."""
    message = {"type": "table.changed", "v": version, "table": table_id}
    transaction.on_commit(lambda: send(table_group(table_id), message))
    if lobby:
        lobby_changed_on_commit()


def chat_on_commit(table_id: int, message_id: int) -> None:
    transaction.on_commit(lambda: send(table_group(table_id), {"type": "table.chat", "id": message_id}))


def lobby_changed_on_commit() -> None:
    transaction.on_commit(lambda: send(LOBBY_GROUP, {"type": "lobby.changed"}))


@contextlib.contextmanager
def held():
    """Hold this thread's sends until the block ends, then send them in order (even if the block raises).

    A consumer applies an action and builds its own viewer's view of the new version in one trip to the
    database thread; holding the announcement until then means the other viewers, told of the version, find
    its shared part already kept instead of each reading it again. Nested, the sends wait for the outer
    block."""
    if getattr(_held, "pending", None) is not None:
        yield
        return
    pending: list[tuple[str, dict]] = []
    _held.pending = pending
    try:
        yield
    finally:
        _held.pending = None
        for group, message in pending:
            _send_now(group, message)


def send(group: str, message: dict) -> None:
    """Send `message` to `group` from synchronous code in any thread; never raises (a lost message is repaired
    by the next one, since every message makes the receivers reload the current state)."""
    pending = getattr(_held, "pending", None)
    if pending is None:
        _send_now(group, message)
    else:
        pending.append((group, message))


def _send_now(group: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if (
        "table" in message
        and message["type"] == "table.changed"
        and not isinstance(layer, InMemoryChannelLayer)
    ):
        # For the other processes: the version's shared part, if this process has built it (it has, after an
        # action through a consumer), so that they need not read it from the database.
        exported = export_shared(message["table"], message["v"])
        if exported is not None:
            message = {**message, "shared": exported}
    with _lock:
        loop = _loop
    if loop is not None and (loop.is_closed() or not loop.is_running()):
        loop = None
    try:
        if loop is not None and group == LOBBY_GROUP:
            loop.call_soon_threadsafe(_lobby_pacer(loop).changed, message)
        elif loop is not None and not _runs_on(loop):
            future = asyncio.run_coroutine_threadsafe(fanout.publish(group, message), loop)
            future.add_done_callback(_log_failure)
        elif loop is None and not isinstance(layer, InMemoryChannelLayer):
            # In a loop of our own: when the server's loop has stopped (shutting down) while a worker thread
            # still commits, handing the send to that loop would wait for it forever. Nobody listens here
            # then: only the other processes are told.
            _publish_elsewhere_now(group, message)
        elif loop is not None:
            loop.create_task(fanout.publish(group, message))
    except Exception:
        logger.exception("broadcast to %s failed", group)


class _LobbyPacer:
    """The lobby's announcements of one event loop, at most one every `LOBBY_SECONDS`: the first change after
    a quiet spell goes at once, the ones that follow it within the interval go as one at its end. Every
    phase change of every table changes the lobby, and every lobby viewer reads and renders the whole lobby
    when told (100 busy tables: some 40 announcements a second); the announcement carries nothing, so one
    stands for any number. Runs on its loop only."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.last = -LOBBY_SECONDS  # loop time of the last announcement
        self.waiting: asyncio.TimerHandle | None = None

    def changed(self, message: dict) -> None:
        if self.waiting is not None:
            return  # an announcement is already due: it will tell of this change too
        delay = self.last + LOBBY_SECONDS - self.loop.time()
        if delay <= 0:
            self._announce(message)
        else:
            self.waiting = self.loop.call_later(delay, self._announce, message)

    def _announce(self, message: dict) -> None:
        self.waiting = None
        self.last = self.loop.time()
        task = self.loop.create_task(fanout.publish(LOBBY_GROUP, message))
        task.add_done_callback(_log_failure)


_pacers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LobbyPacer]" = weakref.WeakKeyDictionary()


def _lobby_pacer(loop: asyncio.AbstractEventLoop) -> _LobbyPacer:
    with _lock:
        pacer = _pacers.get(loop)
        if pacer is None:
            pacer = _pacers[loop] = _LobbyPacer(loop)
        return pacer


def _publish_elsewhere_now(group: str, message: dict) -> None:
    """Tell the other processes and wait until it is done: in an event loop of this thread's own, or, from
    synchronous code called inside a running event loop (where `async_to_sync` refuses to run), of a helper
    thread's."""
    publish = async_to_sync(fanout.publish_elsewhere, force_new_loop=True)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        publish(group, message)
        return
    failure = []

    def run() -> None:
        try:
            publish(group, message)
        except Exception as exc:
            failure.append(exc)

    helper = threading.Thread(target=run, name="broadcast-elsewhere")
    helper.start()
    helper.join()
    if failure:
        raise failure[0]


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
        logger.error("broadcast failed: %r", future.exception())
