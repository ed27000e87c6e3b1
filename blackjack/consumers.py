"""Websocket consumers of the table protocol (shared/PROTOCOL.md): `/ws/tables/<id>/` and `/ws/lobby/`.

Thin by design: check who may connect, rate-limit and parse each frame (`blackjack.protocol`), hand the
command to the table's owner (`blackjack.remote`: its actor in this process, or the owning process over the
channel layer), and send this viewer's own view (`blackjack.viewmodel`). Each version's shared view part
reaches the consumer from `blackjack.broadcast` (built by the table's actor here from its memory, or read once
for this process's viewers from the database when the version was made elsewhere); the consumer adds its
viewer's own part and sends it unless it has already sent that version, so one connection never receives an
older state after a newer one. The acting player's view comes the same way.

Each connection's frames are counted against the rate limit as they arrive and handled one at a time, in
order, by the connection's worker task; views and notices are handled meanwhile, one at a time in order, by
the connection's mailbox (`blackjack.broadcast`: delivered in process), and every send of a view checks the
version last sent, so the two never send an older state after a newer one.

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
import time
from datetime import datetime
from typing import Any

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from django.core.cache import cache
from django.db import Error as DatabaseFailure
from django.template.loader import render_to_string
from django.utils import timezone

from blackjack import actors, broadcast, remote, services
from blackjack.broadcast import LOBBY_GROUP, register_loop, table_group
from blackjack.models import ChatMessage, Table
from blackjack.protocol import BAD_MESSAGE, MAX_FRAME_BYTES, NOT_AUTHENTICATED, RATE_LIMITED, parse_message
from blackjack.rendering import LIVE_TEMPLATE, live_html
from blackjack.viewmodel import (
    Frame,
    TableUnavailable,
    ViewerView,
    _Shared,
    build_lobby_view,
    chat_entry,
    frame_at,
    lobby_page,
    own_balance,
    read_shared,
    recent_chat,
    view_of,
    visible_table,
)
from cards.errors import Refused
from durak import services as durak_services
from live import forward, process
from live.consumer import POLICY_VIOLATION, FloodGuard, LiveConsumer
from live.consumer import query as _query
from live.consumer import unwrapped as _unwrapped

LOBBY_TEMPLATE = "blackjack/partials/lobby_rows.html"
DURAK_LOBBY_TEMPLATE = "durak/partials/lobby_rows.html"
# Close codes. Daphne's websocket library sends only 1000 and 3000-4999 from an application (1008 or 1011
# would raise inside the handler and skip its clean-up), so the RFC 6455 meanings get 4000 + their number.
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


def _frame_size(text_data: str | None, bytes_data: bytes | None) -> int:
    """A frame's size in bytes (text as UTF-8; unpaired surrogates, which the parser refuses, count too)."""
    if text_data is not None:
        return len(text_data.encode("utf-8", "surrogatepass"))
    return len(bytes_data or b"")


class _Consumer(LiveConsumer):
    """The live socket (`live.consumer`) as the table pages use it: a balance read after chips moved outside
    a table is shown in the next views of the tables here."""

    balance_template = LIVE_TEMPLATE

    def balance_seen(self, user_id: int, balance: int) -> None:
        actors.balance_seen(user_id, balance)  # the next views of the tables here show it
        self.balance = balance


class TableConsumer(_Consumer):
    balance_partials = ("nav_balance", "your_chips")
    lean = False  # JSON states without the log and chat lists (`?format=json&log=off`)

    async def connect(self):
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.user = _unwrapped(self.scope["user"])
        query = _query(self.scope)
        self.json_format = query.get("format") == "json"
        self.lean = self.json_format and query.get("log") == "off"
        self.sent_version, self.sent_frame = -1, 0
        self.frame_timer: asyncio.TimerHandle | None = None  # the next dealer frame's (`_pace`)
        # The settled round whose dealer frames this connection shows, and when they began here (None: from
        # the moment the round settled, for a connection that opened during them).
        self.settled_at: datetime | None = None
        self.frames_from: datetime | None = None
        self.balance: int | None = None  # the viewer's as last shown (a view without their seat shows it)
        self.shared: _Shared | None = None  # the latest version's shared part this connection was handed
        self.flood = FloodGuard()
        self.inbox: asyncio.Queue[str | bytes] = asyncio.Queue()
        self.worker: asyncio.Task | None = None
        self.joined = False
        self.route = remote.Route(self.table_id, self.channel_name)
        # Telling the owner again that this socket is open (`_reannounce`), and the version that made it.
        self.reannouncing: asyncio.Task | None = None
        self.reannounced = -1
        try:
            await database_sync_to_async(visible_table)(
                table_id=self.table_id, user=self.user, private_token=query.get("token")
            )
        except TableUnavailable:
            await self.close()
            return
        register_loop(asyncio.get_running_loop())
        self.group = table_group(self.table_id)
        # Join before reading the state: a change committed in between is then announced, not missed.
        self.mailbox = broadcast.Mailbox(self.dispatch, failed=self._failed)
        try:
            await broadcast.join(self.group, self.mailbox)
        except Exception:
            self.mailbox.close()
            raise
        self.joined = True
        try:
            await self.accept()
            await self._note_presence(True)
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
        if self.frame_timer is not None:
            self.frame_timer.cancel()
        self.mailbox.close()
        try:
            await broadcast.leave(self.group, self.mailbox)
        finally:
            if self.reannouncing is not None:  # its "open" must reach the owner before this "closed"
                self.reannouncing.cancel()
                await asyncio.gather(self.reannouncing, return_exceptions=True)
            await self._note_presence(False)

    async def _failed(self) -> None:
        """A broadcast could not be handled (the database is down, say): close, the client reconnects."""
        await self.close(code=INTERNAL_ERROR)

    async def _note_presence(self, connected: bool) -> None:
        """Tell the table's owner that this connection opened or closed (it counts the sockets of each
        player: `TableActor.presence`)."""
        if not self.user.is_authenticated:
            return
        # A table deleted meanwhile has no seat to keep (and send_view then closes the connection).
        with contextlib.suppress(Refused, Table.DoesNotExist):
            command = {
                "op": "presence",
                "connected": connected,
                "channel": self.channel_name,
                "process": process.name(),
            }
            try:
                await self.route.send(command, user=self.user, in_handler=True)
            except forward.Unreachable:
                # The owner is gone: its successor marks this player gone, and `_reannounce` then tells it.
                logger.warning("table %s: presence not told, its owner did not answer", self.table_id)

    def _reannounce(self, shared: _Shared) -> None:
        """This connection is open, yet the version shows its player's seat marked gone: the owner that
        counted this socket died or dropped its count (a new owner starts with nobody connected). Tell it
        again, once per version that shows the mark, without holding up this connection's views."""
        if not self.joined or not self.user.is_authenticated or shared.version <= self.reannounced:
            return
        if self.reannouncing is not None and not self.reannouncing.done():
            return
        mine = [row for row in shared.seat_rows.values() if row.user_id == self.user.pk]
        if mine and not all(row.connected for row in mine):
            self.reannounced = shared.version
            self.reannouncing = asyncio.create_task(self._note_presence(True))

    async def dispatch(self, message):
        # Without the connection clean-up Channels runs before each handler: it waits its turn on the database
        # thread (behind a service call, so frames would be counted only as fast as the server works), and
        # every handler here reaches the database only through `database_sync_to_async`, whose calls clean up
        # their connections themselves. A version's view touches no database at all (`table_shared`).
        # Views and notices come through the mailbox (`blackjack.broadcast`), frames and the handshake from
        # Channels.
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
        """Parse one frame, hand its command to the table's owner, answer a refusal."""
        try:
            action = parse_message(frame, html=not self.json_format)
        except Refused as error:
            await self.send_error(error.code, error.message)
            return
        try:
            await self._command(action)
        except Table.DoesNotExist:  # deleted once the action was applied
            await self.close()
            return
        except Refused as refusal:
            await self.send_error(refusal.code, refusal.message, fresh=refusal.code == "stale_version")
            return
        except forward.Unreachable:
            # The table's owner did not answer (it died, or is stuck): the next frame finds its owner again.
            await self.send_error(
                UNAVAILABLE,
                "The server running this table did not answer; the action may have been applied. "
                "Retry it as it was (the same v): if it was applied, the retry is refused as stale_version.",
            )
            return
        except DatabaseFailure:
            # The transaction rolled back (or never began): nothing was applied. Say so instead of crashing.
            logger.exception("table %s: the database failed during %r", self.table_id, action["action"])
            await self.send_error(
                UNAVAILABLE, "The server cannot reach its database; nothing was changed. Retry."
            )
            return

    async def _command(self, action: dict[str, Any]) -> None:
        """Hand the action (or chat line) to the table's owner (`blackjack.remote`: the table's actor here, or
        the owning process's). The new version's view comes through the mailbox, as every viewer's here does
        (from the actor's memory, or read once when the owner is another process)."""
        if action["action"] == "chat":
            await database_sync_to_async(self._check_chat_rate)()
            await self.route.send({"op": "chat", "text": action["text"]}, user=self.user)
            return
        if action["action"] == "emote":  # not stored and no version: shown from here, not the owner's
            await database_sync_to_async(self._check_chat_rate)()
            await database_sync_to_async(services.post_emote)(
                table_id=self.table_id, user=self.user, emote=action["emote"]
            )
            return
        command = {"op": "act", "action": action, "v": action["v"]}
        await self.route.send(command, user=self.user)

    def _check_chat_rate(self) -> None:
        if not chat_allowed(self.user.pk, now=time.time()):
            raise Refused(
                RATE_LIMITED,
                f"Too many chat lines and emotes: at most {CHAT_LINES} every {CHAT_WINDOW_SECONDS} seconds.",
            )

    # --- from the mailbox ---

    async def table_shared(self, event):
        """A version's shared view part (`blackjack.broadcast`): add this viewer's own part and send it."""
        shared, now = event["shared"], timezone.now()
        if self.shared is None or shared.version >= self.shared.version:
            self.shared = shared
        if shared.reveal is not None and shared.reveal[0] != self.settled_at:
            # Watching when the round settled: its dealer frames start when its version arrives, all of them
            # (a slow delivery delays the dealer's turn for this viewer rather than skipping its first cards).
            self.settled_at, self.frames_from = shared.reveal[0], now
        frame = frame_at(shared, now, start=self.frames_from)
        if (shared.version, frame.index) > (self.sent_version, self.sent_frame):
            found = view_of(frame.shared, self.user, balance=self.balance)
            self.balance = found.balance  # kept for when they hold no seat (after leaving)
            await self._deliver(found.version, self._encode(found, None), frame=frame.index)
        self._pace(shared, frame)
        self._reannounce(shared)

    def _pace(self, shared, frame) -> None:
        """While a version's dealer frames are shown (`viewmodel.frame_at`), hand the version to this
        connection's mailbox again when its next frame is due; a newer version supersedes it."""
        if frame.next_at is None or shared.version != self.sent_version:
            return
        if self.frame_timer is not None:
            self.frame_timer.cancel()
        delay = max(0.0, (frame.next_at - timezone.now()).total_seconds())
        message = {"type": "table.shared", "shared": shared}
        self.frame_timer = asyncio.get_running_loop().call_later(delay, self.mailbox.deliver, message)

    async def table_gone(self, event):
        await self.close()

    async def table_chat(self, event):
        text = await database_sync_to_async(self._render_chat)(event["id"])
        if text is not None:
            await self.send(text_data=text)

    async def table_emote(self, event):
        """A quick reaction (`services.post_emote`): a JSON `emote` message, or the line htmx adds to the
        page's reactions log (table.js shows it at the sender's seat for a few seconds)."""
        entry = {key: event[key] for key in ("emote", "text", "from", "display_name", "at")}
        if self.json_format:
            await self.send(text_data=json.dumps({"type": "emote", **entry}))
        else:
            await self.send(text_data=render_to_string(f"{LIVE_TEMPLATE}#emote", {"emote": entry}))

    def _render_chat(self, message_id: int) -> str | None:
        if not self.json_format:
            chat = {"table": {"chat": recent_chat(table_id=self.table_id)}}
            return render_to_string(f"{LIVE_TEMPLATE}#chat_log", {"view": chat, "user": self.user})
        message = (
            ChatMessage.objects.select_related("user").filter(pk=message_id, table_id=self.table_id).first()
        )
        return None if message is None else json.dumps({"type": "chat", **chat_entry(message)})

    # --- sending ---

    async def send_view(self, *, force: bool = False, error: dict[str, str] | None = None) -> None:
        """Send the viewer's current view, read from the database, unless this connection already has that
        version (or a newer one); `force` sends it again at the same version."""
        try:
            shared, frame, text = await database_sync_to_async(self._build)(error)
        except Table.DoesNotExist:
            await self.close()
            return
        if self.shared is None or shared.version >= self.shared.version:
            self.shared = shared
        await self._deliver(shared.version, text, frame=frame.index, force=force)
        self._pace(shared, frame)
        self._reannounce(shared)

    async def _deliver(self, built: int, text: str, *, frame: int = 0, force: bool = False) -> None:
        """Send frame `frame` of version `built` unless this connection has a later one (or this one, unless
        `force`): a connection never receives an older state after a newer one, nor an earlier dealer frame
        after a later one."""
        sent = (self.sent_version, self.sent_frame)
        if (built, frame) < sent or ((built, frame) == sent and not force):
            return
        self.sent_version, self.sent_frame = built, frame
        await self.send(text_data=text)

    async def send_error(self, code: str, message: str, *, fresh: bool = False) -> None:
        """Refusal: a JSON `error` or the `#flash` fragment, then the fresh state if asked (stale version)."""
        error = {"code": code, "message": message}
        if self.json_format:
            await self.send(text_data=json.dumps({"type": "error", **error}))
            if fresh:
                await self._resend(None)
        elif fresh:
            await self._resend(error)
        else:
            await self.send(text_data=render_to_string(f"{LIVE_TEMPLATE}#flash", {"error": error}))

    async def _resend(self, error: dict[str, str] | None) -> None:
        """The current view again (after a stale-version refusal): from the latest shared part this
        connection was handed when that is the version this process's actor holds (the table as it is), else
        read from the database (the owner is elsewhere, or the actor reloaded a version no viewer was shown:
        another writer's)."""
        shared = self.shared
        if shared is None or shared.version != actors.version_in_memory(self.table_id):
            await self.send_view(force=True, error=error)
            return
        frame = frame_at(shared, timezone.now(), start=self.frames_from)
        found = view_of(frame.shared, self.user, balance=self.balance)
        await self._deliver(shared.version, self._encode(found, error), frame=frame.index, force=True)

    def _build(self, error: dict[str, str] | None) -> tuple[_Shared, Frame, str]:
        shared = read_shared(self.table_id)
        if shared.reveal is not None and shared.reveal[0] != self.settled_at:
            self.settled_at, self.frames_from = shared.reveal[0], None  # connecting: the frame of the moment
        frame = frame_at(shared, timezone.now(), start=self.frames_from)
        found = view_of(frame.shared, self.user, balance=own_balance(shared, self.user))
        self.balance = found.balance
        return shared, frame, self._encode(found, error)

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
        self.game = durak_services.lobby_game(query.get("game"))
        register_loop(asyncio.get_running_loop())
        self.mailbox = broadcast.Mailbox(self.dispatch, failed=self._failed)
        try:
            await broadcast.join(LOBBY_GROUP, self.mailbox)
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
            await broadcast.leave(LOBBY_GROUP, mailbox)

    async def _failed(self) -> None:
        await self.close(code=INTERNAL_ERROR)

    async def receive(self, text_data=None, bytes_data=None):
        # The lobby is read-only; anything a client sends is ignored.
        return

    async def lobby_changed(self, event):
        await self.send_lobby()

    async def send_lobby(self) -> None:
        await self.send(text_data=await database_sync_to_async(self._render)())

    def _render(self) -> str:
        view = build_lobby_view(page=self.page)
        durak = durak_services.lobby_rows() if self.game != "blackjack" else None
        if self.json_format:
            return json.dumps({**view, "durak_tables": durak or []})
        html = ""
        if self.game != "durak":
            html = render_to_string(
                LOBBY_TEMPLATE, {"lobby": view, "tables": view["tables"], "user": self.scope["user"]}
            )
        if durak is not None:
            context = {"durak_tables": durak, "user": self.scope["user"]}
            html += render_to_string(DURAK_LOBBY_TEMPLATE, context)
        return html
