"""Websocket consumers of the table protocol (shared/PROTOCOL.md): `/ws/tables/<id>/` and `/ws/lobby/`.

Thin by design: check who may connect, rate-limit and parse each frame (`tables.protocol`), make ONE service
call in a worker thread (services run in transactions, which the async ORM cannot do), and send this viewer's
own view (`tables.viewmodel`). Broadcasts only say "table N is at version v" (or "chat message m arrived",
"the lobby changed"); each consumer then builds its viewer's view of that version, from the part all viewers
share that this process keeps per version (read from the database once, by whichever viewer comes first), and
sends it unless it has already sent that version, so one connection never receives an older state after a
newer one.

Each connection's frames are counted against the rate limit as they arrive and handled one at a time, in
order, by the connection's worker task; broadcasts are handled meanwhile, one at a time in order, by the
connection's mailbox (`tables.fanout`: delivered in process, not through the channel layer), and every send
of a view checks the version last sent, so the two never send an older state after a newer one.

Formats: `?format=json` sends the view as JSON (with `&log=off`, without the table's log and chat lists);
otherwise the view is rendered to HTML fragments
(`tables/partials/live.html`, `tables/partials/lobby_rows.html`) whose top-level elements htmx swaps by id.
Private tables are watched through their link: the page passes `?token=<private token>` on the websocket URL
(players holding a seat and the creator need none).
"""

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.db import DatabaseSyncToAsync, database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.core.cache import cache
from django.db import Error as DatabaseFailure
from django.template.loader import render_to_string
from django.utils.functional import LazyObject, empty

from accounts import sockets
from tables import actors, broadcast, fanout, liveness, services
from tables.broadcast import LOBBY_GROUP, register_loop, table_group
from tables.models import ChatMessage, Table
from tables.protocol import (
    BAD_MESSAGE,
    MAX_FRAME_BYTES,
    NOT_AUTHENTICATED,
    RATE_LIMITED,
    ProtocolError,
    parse_message,
)
from tables.rendering import LIVE_TEMPLATE, live_html
from tables.viewmodel import (
    TableUnavailable,
    ViewerView,
    adopt_shared,
    build_lobby_view,
    cached_viewer_view,
    chat_entry,
    forget_table_views,
    lobby_page,
    recent_chat,
    viewer_view,
    visible_table,
)

LOBBY_TEMPLATE = "tables/partials/lobby_rows.html"
# Close codes. Daphne's websocket library sends only 1000 and 3000-4999 from an application (1008 or 1011
# would raise inside the handler and skip its clean-up), so the RFC 6455 meanings get 4000 + their number.
#: Flooding: the policy-violation close.
POLICY_VIOLATION = 4008
#: A frame larger than `MAX_OPEN_FRAME_BYTES`: the message-too-big close.
FRAME_TOO_LARGE = 4009
#: The server failed to handle a frame or a broadcast: reconnect.
INTERNAL_ERROR = 4011
#: Frames up to `MAX_FRAME_BYTES` are read; larger ones up to this size are refused as `bad_message` and the
#: connection stays open; larger still (Daphne accepts up to 1 MiB) closes it: no client of the protocol
#: sends one.
MAX_OPEN_FRAME_BYTES = 16384
#: Frames waiting for the worker beyond this many are refused as `rate_limited` (a second's worth).
MAX_PENDING_FRAMES = 20
#: Chat lines one user may post in a window of CHAT_WINDOW_SECONDS, over all their connections and (with
#: Redis) all server processes.
CHAT_LINES = 5
CHAT_WINDOW_SECONDS = 5
#: Error code when the database cannot be reached: the action was not applied and may be retried.
UNAVAILABLE = "unavailable"

logger = logging.getLogger(__name__)


class FloodGuard:
    """Per-connection rate limit: over `limit` messages in any `window` seconds is refused (`rate_limited`);
    over `close_limit` in `close_window` seconds closes the connection."""

    OK, LIMITED, CLOSE = "ok", "limited", "close"

    def __init__(
        self, *, limit: int = 20, window: float = 1.0, close_limit: int = 60, close_window: float = 3.0
    ):
        self.limit, self.window = limit, window
        self.close_limit, self.close_window = close_limit, close_window
        self._arrivals: deque[float] = deque()

    def hit(self, now: float) -> str:
        """Record one message arriving at `now` (monotonic seconds) and say what to do with it."""
        arrivals = self._arrivals
        arrivals.append(now)
        while arrivals and arrivals[0] <= now - self.close_window:
            arrivals.popleft()
        if len(arrivals) > self.close_limit:
            return self.CLOSE
        recent = 0
        for moment in reversed(arrivals):
            if moment <= now - self.window:
                break
            recent += 1
        return self.LIMITED if recent > self.limit else self.OK


def chat_allowed(user_id: int, *, now: float) -> bool:
    """Count one chat line of the user; False beyond CHAT_LINES in the current window. The counter is in the
    cache (Redis when REDIS_URL is set), so ten sockets of one user share one limit."""
    key = f"chat-lines:{user_id}:{int(now // CHAT_WINDOW_SECONDS)}"
    cache.add(key, 0, timeout=2 * CHAT_WINDOW_SECONDS)
    try:
        return cache.incr(key) <= CHAT_LINES
    except ValueError:  # the counter expired between add and incr: a new window
        cache.add(key, 1, timeout=2 * CHAT_WINDOW_SECONDS)
        return True


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def on_database(function):
    """`function` as a coroutine that runs on a database thread, its connection cleaned up around it as
    Channels does. With `DATABASE_THREADS` at 1 that is the one thread Django's thread-sensitive calls share;
    above 1, a pool of that many threads with a connection each, so that the actions of different tables
    overlap their round trips to the database (a connection's frames are still handled one at a time, and
    actions at one table queue on its row lock)."""
    if settings.DATABASE_THREADS <= 1:
        return database_sync_to_async(function)
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(settings.DATABASE_THREADS, thread_name_prefix="database")
    return DatabaseSyncToAsync(function, thread_sensitive=False, executor=_pool)


# (table id, announced version) -> a read of that version this process has under way; the viewers that
# miss the kept shared part while it runs wait for it instead of each reading the table themselves.
_reading: dict[tuple[int, int | None], asyncio.Future] = {}


def _frame_size(text_data: str | None, bytes_data: bytes | None) -> int:
    """A frame's size in bytes (text as UTF-8; unpaired surrogates, which the parser refuses, count too)."""
    if text_data is not None:
        return len(text_data.encode("utf-8", "surrogatepass"))
    return len(bytes_data or b"")


def _query(scope) -> dict[str, str]:
    pairs = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return {key: values[-1] for key, values in pairs.items()}


class _Consumer(AsyncWebsocketConsumer):
    #: The partials of `LIVE_TEMPLATE` that carry the user's balance on this kind of page.
    balance_partials = ("nav_balance",)

    async def websocket_connect(self, message):
        """Join the group that closes this socket when its session ends (`accounts.sockets`) before anything
        else, so that the end of a session cannot slip between the check of the session and the join."""
        user = _unwrapped(self.scope.get("user"))
        if user is not None and user.is_authenticated:
            self.groups = [sockets.user_group(user.pk)]
            self.session_id = sockets.session_id(getattr(self.scope.get("session"), "session_key", None))
        await super().websocket_connect(message)

    async def session_ended(self, event):
        """The user logged out, changed their password or was suspended: close (`accounts.sockets`)."""
        if sockets.ended_for(event, getattr(self, "session_id", None)):
            await self.close(code=sockets.SESSION_ENDED)

    async def balance_changed(self, event):
        """Chips moved outside a table (the daily grant, a staff adjustment; `accounts.sockets`): push the
        balance, read afresh, to this page: `{"type": "balance", "balance": N}`, or out-of-band fragments for
        the header's figure and, on a table page, the status strip's "Your chips"."""
        text = await on_database(self._balance_message)()
        if text is not None:
            await self.send(text_data=text)

    def _balance_message(self) -> str | None:
        balance = sockets.current_balance(_unwrapped(self.scope["user"]).pk)
        if balance is None:
            return None
        if self.json_format:
            return json.dumps({"type": "balance", "balance": balance})
        context = {"view": {"you": {"balance": balance}}, "oob": True}
        return "".join(render_to_string(f"{LIVE_TEMPLATE}#{part}", context) for part in self.balance_partials)

    async def send(self, text_data=None, bytes_data=None, close=False):
        """Send a frame; one to a client that has just closed its connection is dropped. The server (Daphne)
        learns of a close a moment before it tells the consumer (`disconnect` follows), and a view sent in
        between is no error: without this, the handler that sent it failed with a logged traceback."""
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except Disconnected:
            logger.debug("a frame to a client that had just left was dropped")


def _unwrapped(user):
    """The user Channels' auth middleware found, out of its lazy wrapper: every attribute read through the
    wrapper costs a call (the views read the user's id and name for each broadcast)."""
    if isinstance(user, LazyObject):
        if user._wrapped is empty:
            user._setup()
        return user._wrapped
    return user


class TableConsumer(_Consumer):
    balance_partials = ("nav_balance", "your_chips")
    lean = False  # JSON states without the log and chat lists (`?format=json&log=off`)

    async def connect(self):
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.user = _unwrapped(self.scope["user"])
        query = _query(self.scope)
        self.json_format = query.get("format") == "json"
        self.lean = self.json_format and query.get("log") == "off"
        self.sent_version = -1
        self.flood = FloodGuard()
        self.inbox: asyncio.Queue[str | bytes] = asyncio.Queue()
        self.worker: asyncio.Task | None = None
        self.joined = False
        try:
            await on_database(visible_table)(
                table_id=self.table_id, user=self.user, private_token=query.get("token")
            )
        except TableUnavailable:
            await self.close()
            return
        register_loop(asyncio.get_running_loop())
        self.group = table_group(self.table_id)
        # Join before reading the state: a change committed in between is then announced, not missed.
        self.mailbox = fanout.Mailbox(self.dispatch, failed=self._failed)
        try:
            await fanout.join(self.group, self.mailbox)
        except Exception:
            self.mailbox.close()
            raise
        self.joined = True
        try:
            await self.accept()
            await on_database(self._note_presence)(True)
            if self.user.is_authenticated:
                liveness.opened(self)
            await self.send_view(force=True)
        except Exception:
            logger.exception("table %s: a connection could not be set up", self.table_id)
            await self._leave()
            await self.close(code=INTERNAL_ERROR)
            return
        self.mailbox.start()
        self.worker = asyncio.create_task(self._work())

    async def disconnect(self, code):
        if self.worker is not None:
            self.worker.cancel()
        await self._leave()

    async def _leave(self) -> None:
        """Leave the table's broadcasts and record the connection gone, once, whatever fails on the way: a
        player whose clean-up did not run would count as connected for good."""
        if not self.joined:
            return
        self.joined = False
        self.mailbox.close()
        try:
            await fanout.leave(self.group, self.mailbox)
        finally:
            liveness.closed(self)
            await on_database(self._note_presence)(False)

    async def _failed(self) -> None:
        """A broadcast could not be handled (the database is down, say): close, the client reconnects."""
        await self.close(code=INTERNAL_ERROR)

    def _note_presence(self, connected: bool) -> None:
        if not self.user.is_authenticated:
            return
        # A table deleted meanwhile has no seat to keep (and send_view then closes the connection).
        with contextlib.suppress(services.ActionRefused):
            services.note_presence(
                table_id=self.table_id, user=self.user, connected=connected, channel_name=self.channel_name
            )

    async def dispatch(self, message):
        # Without the connection clean-up Channels runs before each handler: it waits its turn on the database
        # thread (behind a service call, so frames would be counted only as fast as the server works), and
        # every handler here reaches the database only through `on_database`, whose calls clean up
        # their connections themselves. Most broadcasts touch no database at all (`cached_viewer_view`).
        # Broadcasts come through the mailbox (`tables.fanout`), frames and the handshake from Channels.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def receive(self, text_data=None, bytes_data=None):
        """A frame arrives. It is counted here, on arrival (the limit is on what the client sends, however
        slowly the server works through it), and handed to this connection's worker, which handles frames
        one at a time in order."""
        verdict = self.flood.hit(time.monotonic())
        if verdict == FloodGuard.CLOSE:
            await self.close(code=POLICY_VIOLATION)
            return
        if _frame_size(text_data, bytes_data) > MAX_OPEN_FRAME_BYTES:
            await self.send_error(
                BAD_MESSAGE,
                f"message too large (over {MAX_OPEN_FRAME_BYTES} bytes; the limit is {MAX_FRAME_BYTES}); "
                "closing the connection",
            )
            await self.close(code=FRAME_TOO_LARGE)
            return
        if verdict == FloodGuard.LIMITED or self.inbox.qsize() >= MAX_PENDING_FRAMES:
            await self.send_error(RATE_LIMITED, "Too many messages: at most 20 a second.")
            return
        if not self.user.is_authenticated:
            await self.send_error(NOT_AUTHENTICATED, "Log in to play; spectators can only watch.")
            return
        self.inbox.put_nowait(text_data if text_data is not None else bytes_data)

    async def _work(self) -> None:
        while True:
            frame = await self.inbox.get()
            try:
                await self.handle_frame(frame)
            except Exception:
                logger.exception("table %s: a frame could not be handled", self.table_id)
                await self.close(code=INTERNAL_ERROR)
                return

    async def handle_frame(self, frame: str | bytes) -> None:
        """Parse one frame, make its one service call, answer."""
        try:
            action = parse_message(frame, html=not self.json_format)
        except ProtocolError as error:
            await self.send_error(error.code, error.message)
            return
        try:
            if settings.TABLE_ACTORS and action["action"] != "chat":
                answer = await actors.perform(
                    table_id=self.table_id,
                    user=self.user,
                    action=action,
                    expected_version=action["v"],
                    then=lambda version: self._build(None, version),
                    run=on_database,
                )
            else:
                answer = await on_database(self._perform)(action)
        except Table.DoesNotExist:  # deleted once the action was applied
            await self.close()
            return
        except services.ActionRefused as refusal:
            await self.send_error(refusal.code, refusal.message, fresh=refusal.code == "stale_version")
            return
        except DatabaseFailure:
            # The transaction rolled back (or never began): nothing was applied. Say so instead of crashing.
            logger.exception("table %s: the database failed during %r", self.table_id, action["action"])
            await self.send_error(
                UNAVAILABLE, "The server cannot reach its database; nothing was changed. Retry."
            )
            return
        if answer is not None:
            await self._deliver(*answer)

    def _perform(self, action: dict[str, Any]) -> tuple[int, str] | None:
        """Apply the action, then build this viewer's view of the new version in the same trip to the database
        thread (usually the first build of that version in this process, which the other viewers then find
        kept); None for a chat line, which changes no version."""
        if action["action"] == "chat":
            if not chat_allowed(self.user.pk, now=time.time()):
                raise services.ActionRefused(
                    RATE_LIMITED,
                    f"Too many chat lines: at most {CHAT_LINES} every {CHAT_WINDOW_SECONDS} seconds.",
                )
            services.post_chat(table_id=self.table_id, user=self.user, text=action["text"])
            return None
        with broadcast.held():
            version = services.perform(
                table_id=self.table_id, user=self.user, action=action, expected_version=action["v"]
            )
            return self._build(None, version)

    # --- group messages ---

    async def table_changed(self, event):
        if event["v"] > self.sent_version:
            exported = event.get("shared")
            if exported is not None:  # from another process: its shared part of that version, kept here too
                adopt_shared(self.table_id, event["v"], exported)
            await self.send_view(version=event["v"])

    async def fanout_rejoined(self, event):
        # Broadcasts from the other processes may have been lost while Redis was away: catch up.
        await self.send_view()

    async def table_chat(self, event):
        # The shared part this process keeps lists the chat: the next view reads it afresh.
        forget_table_views(self.table_id, chat_id=event["id"])
        text = await on_database(self._render_chat)(event["id"])
        if text is not None:
            await self.send(text_data=text)

    def _render_chat(self, message_id: int) -> str | None:
        if not self.json_format:
            chat = {"table": {"chat": recent_chat(table_id=self.table_id)}}
            return render_to_string(f"{LIVE_TEMPLATE}#chat_log", {"view": chat, "user": self.user})
        message = (
            ChatMessage.objects.select_related("user").filter(pk=message_id, table_id=self.table_id).first()
        )
        return None if message is None else json.dumps({"type": "chat", **chat_entry(message)})

    # --- sending ---

    async def send_view(
        self, *, force: bool = False, error: dict[str, str] | None = None, version: int | None = None
    ) -> None:
        """Send the viewer's current view unless this connection already has that version (or a newer one);
        `force` sends it again at the same version. With `version` (announced by a broadcast) the view comes
        from the shared part this process keeps for that version when it can, built right here without the
        database thread; otherwise it is read from the database."""
        found = None
        key = (self.table_id, version)
        if version is not None:
            found = cached_viewer_view(table_id=self.table_id, user=self.user, version=version)
            reading = _reading.get(key)
            if found is None and reading is not None:
                # Another viewer here is reading this version: its read keeps the shared part for us too.
                await asyncio.shield(reading)
                found = cached_viewer_view(table_id=self.table_id, user=self.user, version=version)
        if found is not None:
            built, text = found.version, self._encode(found, error)
        else:
            mine = None
            if version is not None and key not in _reading:
                mine = _reading[key] = asyncio.get_running_loop().create_future()
            try:
                built, text = await on_database(self._build)(error, version)
            except Table.DoesNotExist:
                await self.close()
                return
            finally:
                if mine is not None:
                    del _reading[key]
                    mine.set_result(None)
        await self._deliver(built, text, force=force)

    async def _deliver(self, built: int, text: str, *, force: bool = False) -> None:
        """Send a view of version `built` unless this connection has a newer one (or this one, unless
        `force`): a connection never receives an older state after a newer one."""
        if built < self.sent_version or (built == self.sent_version and not force):
            return
        self.sent_version = built
        await self.send(text_data=text)

    async def send_error(self, code: str, message: str, *, fresh: bool = False) -> None:
        """Refusal: a JSON `error` or the `#flash` fragment, then the fresh state if asked (stale version)."""
        error = {"code": code, "message": message}
        if self.json_format:
            await self.send(text_data=json.dumps({"type": "error", **error}))
            if fresh:
                await self.send_view(force=True)
        elif fresh:
            await self.send_view(force=True, error=error)
        else:
            await self.send(text_data=render_to_string(f"{LIVE_TEMPLATE}#flash", {"error": error}))

    def _build(self, error: dict[str, str] | None, version: int | None) -> tuple[int, str]:
        found = viewer_view(table_id=self.table_id, user=self.user, version=version)
        return found.version, self._encode(found, error)

    def _encode(self, found: ViewerView, error: dict[str, str] | None) -> str:
        if self.json_format:
            return found.json(lean=self.lean)
        return live_html(found, user=self.user, error=error)


class LobbyConsumer(_Consumer):
    """Streams one page of the list of public open tables (`?page=N`, the first by default): on connect and
    after every `lobby.changed`."""

    async def connect(self):
        query = _query(self.scope)
        self.json_format = query.get("format") == "json"
        self.page = lobby_page(query.get("page"))
        register_loop(asyncio.get_running_loop())
        self.mailbox = fanout.Mailbox(self.dispatch, failed=self._failed)
        try:
            await fanout.join(LOBBY_GROUP, self.mailbox)
        except Exception:
            self.mailbox.close()
            raise
        await self.accept()
        await self.send_lobby()
        self.mailbox.start()

    async def disconnect(self, code):
        mailbox = getattr(self, "mailbox", None)
        if mailbox is not None:
            self.mailbox = None
            mailbox.close()
            await fanout.leave(LOBBY_GROUP, mailbox)

    async def _failed(self) -> None:
        await self.close(code=INTERNAL_ERROR)

    async def receive(self, text_data=None, bytes_data=None):
        # The lobby is read-only; anything a client sends is ignored.
        return

    async def lobby_changed(self, event):
        await self.send_lobby()

    async def fanout_rejoined(self, event):
        await self.send_lobby()  # lobby changes may have been lost while Redis was away

    async def send_lobby(self) -> None:
        await self.send(text_data=await on_database(self._render)())

    def _render(self) -> str:
        view = build_lobby_view(page=self.page)
        if self.json_format:
            return json.dumps(view)
        return render_to_string(
            LOBBY_TEMPLATE, {"lobby": view, "tables": view["tables"], "user": self.scope["user"]}
        )
