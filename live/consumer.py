"""Every live websocket of the site, whatever the game: the consumer pipeline.

`LiveConsumer` (Channels' `AsyncWebsocketConsumer`), the base of every socket (tables and the lobby):
- starts this process's receiver of forwarded commands with its first socket (`live.forward.listen`) and
  takes the answers an owner sends to this connection's channel (`live_reply`);
- authenticates: joins the user's group before anything else, so that the end of the session closes the
  socket (`session_ended`; `accounts.sockets`), and pushes the user's balance when chips move elsewhere
  (`balance_changed`: the header's figure);
- drops a frame sent to a client that has just closed its connection (`send`).

`TableConsumer`, a game's table socket (`/ws/<game's path>/<id>/`, JSON with `?format=json`, else HTML
fragments htmx swaps by id), does for every game:
- at connect: the game's visibility check (a private table needs its link), joins the table's viewers in this
  process (`live.fanout`: its mailbox handles their messages one at a time, in order), accepts, tells the
  table's owner the socket is open (presence: the owner counts each player's sockets by channel and
  process), sends the first view (the page shows the chat's last lines; each new line sends them again);
- each frame: counted against the per-connection rate limit on arrival (`FloodGuard`; flooding closes the
  socket with `POLICY_VIOLATION`), a frame over `MAX_OPEN_FRAME_BYTES` closes it (`FRAME_TOO_LARGE`), one
  over `live.protocol.MAX_FRAME_BYTES` is refused, more than `MAX_PENDING_FRAMES` waiting are refused; then
  handled one at a time in order by the connection's worker: parsed by the game's fields (`live.protocol`),
  the site's own `chat` and `emote` posted (`live.chat`), anything else handed to the table's owner
  (`live.route`: its actor here, or the owning process over the channel layer);
- every refusal, whoever refused, is one message: `{"type": "error", "code", "message"}` (or the game's
  HTML error fragment) and changes nothing; `stale_version` is followed by a fresh view; an owner that did
  not answer gives `unavailable` (the action may have been applied: resent with the same `v`, it is applied
  once); a database that cannot be reached gives `unavailable` with nothing changed;
- any other failure of a frame or a message is logged and the socket closed with `INTERNAL_ERROR` (the client
  reconnects), and the clean-up (leaving the viewers, telling the owner the socket closed) runs whatever
  happened before (`_leave`), so no player counts as connected for good;
- each version reaches the viewer as the game presents it (`show`: never an older version after a newer
  one), and a version that shows the viewer marked gone makes the socket tell the owner again that it is
  open (`_reannounce`: a new owner counts nobody).

A game's consumer says: `game` (its registry name), `route` (its `live.route.Route`), `fields` (its
protocol), `error_template` (or `error_html`), and `visible`, `encode` and `marked_gone`; a game whose views
need more than one frame per version (blackjack's dealer) overrides `show`, and one whose page shows more of
the balance than the header's figure `balance_html`.
"""

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from typing import Any, ClassVar
from urllib.parse import parse_qs

from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.core.exceptions import ObjectDoesNotExist
from django.db import Error as DatabaseFailure
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.functional import LazyObject, empty

from accounts import language, sockets
from cards.errors import Refused
from live import chat, fanout, forward, games, process, refusals
from live.protocol import BAD_MESSAGE, MAX_FRAME_BYTES, RATE_LIMITED, Fields, frame_size, parse

#: Flooding: the policy-violation close (4000 + RFC 6455's 1008: Daphne sends only 1000 and 3000-4999).
POLICY_VIOLATION = 4008
#: A frame larger than `MAX_OPEN_FRAME_BYTES`: the message-too-big close.
FRAME_TOO_LARGE = 4009
#: The server failed to handle a frame or a message: reconnect.
INTERNAL_ERROR = 4011
#: Frames up to `MAX_FRAME_BYTES` are read; larger ones up to this size are refused as `bad_message` and the
#: connection stays open; larger still (Daphne accepts up to 1 MiB) closes it: no client sends one.
MAX_OPEN_FRAME_BYTES = 16384
#: Frames waiting for the worker beyond this many are refused as `rate_limited` (a second's worth).
MAX_PENDING_FRAMES = 20
UNAVAILABLE = "unavailable"
NOT_AUTHENTICATED = "not_authenticated"
#: What a player is told when the table's owner did not answer.
OWNER_AWAY = (
    "The server running this table did not answer; the action may have been applied. "
    "Retry it as it was (the same v): if it was applied, the retry is refused as stale_version."
)
DATABASE_DOWN = "The server cannot reach its database; nothing was changed. Retry."
#: The site's chat partials (`live/templates/live/chat.html`), and the stable forms of its panel that send.
CHAT_TEMPLATE = "live/chat.html"
CHAT_FORMS = ("form-chat", "form-emote")

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


class Unavailable(Exception):
    """No such table, or one this viewer may not watch (private without access, or closed): the socket is
    refused."""


def query(scope) -> dict[str, str]:
    """The websocket URL's query string as a dict (the last value of a repeated key)."""
    pairs = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return {key: values[-1] for key, values in pairs.items()}


def unwrapped(user):
    """The user Channels' auth middleware found, out of its lazy wrapper: every attribute read through the
    wrapper costs a call (the views read the user's id and name for each broadcast)."""
    if isinstance(user, LazyObject):
        if user._wrapped is empty:
            user._setup()
        return user._wrapped
    return user


class LiveConsumer(AsyncWebsocketConsumer):
    json_format = False
    #: The language this connection's fragments are rendered in (`accounts.language.of_scope`), found once
    #: when it opens: every handler runs in it (`dispatch`, and a table's worker).
    language: str | None = None

    async def dispatch(self, message):
        with translation.override(self.language):
            await super().dispatch(message)

    async def websocket_connect(self, message):
        """Join the group that closes this socket when its session ends (`accounts.sockets`) before anything
        else, so that the end of a session cannot slip between the check of the session and the join. The
        process's receiver of forwarded commands (`live.forward`) starts with its first socket. The
        connection's language is found first, so that everything it is sent is in that language."""
        forward.listen()
        user = unwrapped(self.scope.get("user"))
        self.language = language.of_scope({**self.scope, "user": user})
        if user is not None and user.is_authenticated:
            self.groups = [sockets.user_group(user.pk)]
            self.session_id = sockets.session_id(getattr(self.scope.get("session"), "session_key", None))
        with translation.override(self.language):
            await super().websocket_connect(message)

    def balance_seen(self, user_id: int, balance: int) -> None:
        """The user's balance, read afresh after a `balance_changed`: what the page keeps of it."""

    async def live_reply(self, event):
        """The answer of an owner to a command this connection forwarded (`live.route`)."""
        forward.answered(event)

    async def session_ended(self, event):
        """The user logged out, changed their password or was suspended: close (`accounts.sockets`)."""
        if sockets.ended_for(event, getattr(self, "session_id", None)):
            await self.close(code=sockets.SESSION_ENDED)

    async def balance_changed(self, event):
        """Chips moved (at a table, the daily grant, a staff adjustment; `accounts.sockets`): push the
        balance, read afresh, to this page: `{"type": "balance", "balance": N}`, or out-of-band fragments for
        the header's figure (and what else `balance_partials` names)."""
        user_id = unwrapped(self.scope["user"]).pk
        balance = await database_sync_to_async(sockets.current_balance)(user_id)
        if balance is None:
            return
        self.balance_seen(user_id, balance)
        await self.send(text_data=self._balance_message(balance))

    def _balance_message(self, balance: int) -> str:
        if self.json_format:
            return json.dumps({"type": "balance", "balance": balance})
        return self.balance_html(balance)

    def balance_html(self, balance: int) -> str:
        """The out-of-band fragments that show `balance` on this kind of page (the header's figure)."""
        context = {"view": {"you": {"balance": balance}}, "oob": True}
        return render_to_string("live/balance.html#nav_balance", context)

    async def send(self, text_data=None, bytes_data=None, close=False):
        """Send a frame; one to a client that has just closed its connection is dropped. The server (Daphne)
        learns of a close a moment before it tells the consumer (`disconnect` follows), and a view sent in
        between is no error: without this, the handler that sent it failed with a logged traceback."""
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except Disconnected:
            logger.debug("a frame to a client that had just left was dropped")


class TableConsumer(LiveConsumer):
    """A game's table socket (see the module docstring)."""

    #: The game's name in the registry, its way to a table's owner and its protocol.
    game: ClassVar[str]
    route: ClassVar[type]
    fields: ClassVar[Fields]
    #: The game's HTML fragment of a refusal (`error`: code and message), unless it overrides `error_html`.
    error_template: ClassVar[str]

    # --- what a game defines ---

    def visible(self, table_id: int, user, token: str | None) -> None:
        """Raise `Unavailable` unless `user` may watch the table (on a database thread)."""
        raise NotImplementedError

    def encode(self, shared: Any, error: dict[str, str] | None = None) -> str:
        """This viewer's message of a version's shared part: JSON, or the HTML regions (with `error`)."""
        raise NotImplementedError

    def marked_gone(self, shared: Any) -> bool:
        """Whether the version shows this viewer's player marked gone (their socket is open: tell the
        owner)."""
        return False

    def command(self, message: dict[str, Any]) -> dict[str, Any]:
        """The command sent to the table's owner for a player's parsed message."""
        return {"op": "act", "message": message}

    def refusal_text(self, code: str, message: str) -> str:
        """A refusal's message in the connection's language (the game's pure code words it in English; here,
        the site's own refusals: `live.refusals.COMMON`)."""
        return refusals.translated(message, refusals.COMMON) or message

    # --- connecting ---

    async def connect(self):
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.user = unwrapped(self.scope["user"])
        options = query(self.scope)
        self.json_format = options.get("format") == "json"
        self.sent_version, self.sent_frame = -1, 0
        self.flood = FloodGuard()
        self.inbox: asyncio.Queue[str | bytes] = asyncio.Queue()
        self.worker: asyncio.Task | None = None
        self.joined = False
        self.route_to_owner = self.route(self.table_id, self.channel_name)
        # Telling the owner again that this socket is open (`_reannounce`), and the version that made it.
        self.reannouncing: asyncio.Task | None = None
        self.reannounced = -1
        self.setup(options)
        try:
            await database_sync_to_async(self.visible)(self.table_id, self.user, options.get("token"))
        except (Unavailable, ObjectDoesNotExist):
            await self.close()
            return
        fanout.register_loop(asyncio.get_running_loop())
        self.group = fanout.group_of(self.game, self.table_id)
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
            # The view first: telling a dead owner of the presence waits for its answer (`forward`).
            await self.send_view(force=True)
            await self._note_presence(True)
        except Exception:
            logger.exception("%s table %s: a connection could not be set up", self.game, self.table_id)
            await self._leave()
            await self.close(code=INTERNAL_ERROR)
            return
        self.mailbox.start()
        self.worker = asyncio.create_task(self._work())

    def setup(self, options: dict[str, str]) -> None:
        """A game's own state of the connection, from the URL's query (`?format=json&...`)."""

    async def disconnect(self, code):
        worker = getattr(self, "worker", None)  # unset if the socket closed before `connect` set it
        if worker is not None:
            worker.cancel()
        await self._leave()

    async def _leave(self) -> None:
        """Leave the table's viewers and record the connection gone, once, whatever fails on the way: a
        player whose clean-up did not run would count as connected for good."""
        if not getattr(self, "joined", False):
            return
        self.joined = False
        self.left()
        self.mailbox.close()
        try:
            await fanout.leave(self.group, self.mailbox)
        finally:
            if self.reannouncing is not None:  # its "open" must reach the owner before this "closed"
                self.reannouncing.cancel()
                await asyncio.gather(self.reannouncing, return_exceptions=True)
            await self._note_presence(False)

    def left(self) -> None:
        """The connection is closing: a game's own timers stop."""

    async def _failed(self) -> None:
        """A message could not be handled (the database is down, say): close, the client reconnects."""
        await self.close(code=INTERNAL_ERROR)

    async def _note_presence(self, connected: bool) -> None:
        """Tell the table's owner that this connection opened or closed (it counts the sockets of each
        player). An owner that does not answer is gone: its successor marks the player gone, and
        `_reannounce` then tells it."""
        if not self.user.is_authenticated:
            return
        body = {"op": "presence", "connected": connected, "channel": self.channel_name}
        body["process"] = process.name()
        with contextlib.suppress(Refused, ObjectDoesNotExist, DatabaseFailure):
            try:
                await self.route_to_owner.send(body, user=self.user, in_handler=True)
            except forward.Unreachable:
                told = "%s table %s: presence not told, its owner did not answer"
                logger.warning(told, self.game, self.table_id)

    def _reannounce(self, shared: Any) -> None:
        """This connection is open, yet the version shows its player marked gone: the owner that counted this
        socket died or dropped its count (a new owner starts with nobody connected). Tell it again, once per
        version that shows the mark, without holding up this connection's views."""
        if not self.joined or not self.user.is_authenticated or shared.version <= self.reannounced:
            return
        if self.reannouncing is not None and not self.reannouncing.done():
            return
        if self.marked_gone(shared):
            self.reannounced = shared.version
            self.reannouncing = asyncio.create_task(self._note_presence(True))

    # --- frames ---

    async def dispatch(self, message):
        # Without the connection clean-up Channels runs before each handler: it waits its turn on the database
        # thread (behind a command, so frames would be counted only as fast as the server works), and every
        # handler here reaches the database only through `database_sync_to_async`, whose calls clean up their
        # connections themselves. Views and notices come through the mailbox (`live.fanout`), frames and the
        # handshake from Channels.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        with translation.override(self.language):
            await handler(message)

    async def receive(self, text_data=None, bytes_data=None):
        """A frame arrives. It is counted here, on arrival (the limit is on what the client sends, however
        slowly the server works through it), and handed to this connection's worker, which handles frames one
        at a time in order."""
        verdict = self.flood.hit(time.monotonic())
        if verdict == FloodGuard.CLOSE:
            await self.close(code=POLICY_VIOLATION)
            return
        size = frame_size(text_data) if text_data is not None else len(bytes_data or b"")
        if size > MAX_OPEN_FRAME_BYTES:
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
                with translation.override(self.language):
                    await self.handle_frame(frame)
            except Exception:
                logger.exception("%s table %s: a frame could not be handled", self.game, self.table_id)
                await self.close(code=INTERNAL_ERROR)
                return

    async def handle_frame(self, frame: str | bytes) -> None:
        """Parse one frame, post it (chat, a reaction) or hand its command to the table's owner; answer a
        refusal."""
        try:
            message = parse(frame, self.fields, html=not self.json_format)
            if message["action"] == "chat":
                await database_sync_to_async(self._chat)(message["text"])
            elif message["action"] == "emote":
                await database_sync_to_async(self._react)(message["emote"])
            else:
                await self.route_to_owner.send(self.command(message), user=self.user)
        except ObjectDoesNotExist:  # the table was deleted
            await self.close()
        except Refused as refusal:
            await self.send_error(refusal.code, refusal.message, fresh=refusal.code == "stale_version")
        except forward.Unreachable:
            # The table's owner did not answer (it died, or is stuck): the next frame finds its owner again.
            await self.send_error(UNAVAILABLE, OWNER_AWAY)
        except DatabaseFailure:
            # The transaction rolled back (or never began): nothing was applied. Say so instead of crashing.
            logger.exception("%s table %s: the database failed during a frame", self.game, self.table_id)
            await self.send_error(UNAVAILABLE, DATABASE_DOWN)

    def _chat(self, text: str) -> None:
        chat.check(self.user)
        chat.post(game=self.game, table_id=self.table_id, user=self.user, text=text)

    def _react(self, emote: str) -> None:
        chat.check(self.user)
        chat.react(game=self.game, table_id=self.table_id, user=self.user, emote=emote)

    # --- from the mailbox ---

    async def live_shared(self, event):
        """A version's shared part (`live.fanout`): show it to this viewer."""
        shared = event["shared"]
        await self.show(shared)
        self._reannounce(shared)

    async def live_gone(self, event):
        await self.close()

    async def live_chat(self, event):
        """A new chat line: a JSON `chat` message, or the page's chat log again (its last lines: a page that
        missed a line while it reconnected has it again)."""
        found = database_sync_to_async(chat.line)
        line = await found(game=self.game, table_id=self.table_id, line_id=event["id"])
        if line is None:
            return
        if self.json_format:
            await self.send(text_data=json.dumps({"type": "chat", **line}))
        else:
            lines = await database_sync_to_async(chat.recent)(game=self.game, table_id=self.table_id)
            await self.send(text_data=render_to_string(f"{CHAT_TEMPLATE}#chat_log", {"chat": lines}))

    async def live_emote(self, event):
        """A quick reaction: a JSON `emote` message, or the line htmx adds to the page's reactions log (the
        page shows it at the sender's seat for a few seconds)."""
        entry = {key: event[key] for key in fanout.EMOTE_FIELDS}
        if self.json_format:
            await self.send(text_data=json.dumps({"type": "emote", **entry}))
        else:
            await self.send(text_data=render_to_string(f"{CHAT_TEMPLATE}#emote", {"emote": entry}))

    # --- sending ---

    async def show(self, shared: Any, *, force: bool = False, error: dict[str, str] | None = None) -> None:
        """Send this viewer's message of `shared` unless it has that version already (or a newer one; `force`
        sends it again at the same version). Encoded only once it is to be sent (`encode` may record what the
        page then holds)."""
        if self._claim(shared.version, 0, force=force):
            await self.send(text_data=self.encode(shared, error))

    async def send_view(self, *, force: bool = False, error: dict[str, str] | None = None) -> None:
        """Send the viewer's current view, read from the database (`Game.read_view`), unless this connection
        has that version already (or a newer one); `force` sends it again at the same version."""
        try:
            shared = await database_sync_to_async(games.get(self.game).read_view)(self.table_id)
        except ObjectDoesNotExist:
            await self.close()
            return
        await self.show(shared, force=force, error=error)
        self._reannounce(shared)

    async def _deliver(self, built: int, text: str, *, frame: int = 0, force: bool = False) -> None:
        """Send frame `frame` of version `built` unless this connection has a later one (or this one, unless
        `force`): a connection never receives an older state after a newer one, nor an earlier frame of a
        version after a later one."""
        if self._claim(built, frame, force=force):
            await self.send(text_data=text)

    def _claim(self, built: int, frame: int, *, force: bool = False) -> bool:
        """Whether frame `frame` of version `built` is to be sent (see `_deliver`), recorded as sent if so."""
        sent = (self.sent_version, self.sent_frame)
        if (built, frame) < sent or ((built, frame) == sent and not force):
            return False
        self.sent_version, self.sent_frame = built, frame
        return True

    async def send_error(self, code: str, message: str, *, fresh: bool = False) -> None:
        """A refusal: a JSON `error`, or the game's error fragment; then the fresh state if asked (a stale
        version)."""
        error = {"code": code, "message": message if self.json_format else self.refusal_text(code, message)}
        if self.json_format:
            await self.send(text_data=json.dumps({"type": "error", **error}))
            if fresh:
                await self.resend(None)
        elif fresh:
            await self.resend(error)
        else:
            await self.send(text_data=self.error_html(error))

    def error_html(self, error: dict[str, str]) -> str:
        """The refusal `error` as the page shows it."""
        return render_to_string(self.error_template, {"error": error})

    async def resend(self, error: dict[str, str] | None) -> None:
        """The current view again, after a stale-version refusal (with `error`, for the HTML page)."""
        await self.send_view(force=True, error=error)
