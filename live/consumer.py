"""What every live websocket does, whatever the game: the base of blackjack's and Durak's consumers.

`LiveConsumer` (Channels' `AsyncWebsocketConsumer`)
- starts this process's receiver of forwarded commands with its first socket (`live.forward.listen`) and
  takes the answers an owner sends to this connection's channel (`live_reply`);
- authenticates: joins the user's group before anything else, so that the end of the session closes the
  socket (`session_ended`; `accounts.sockets`), and pushes the user's balance when chips move outside the
  table (`balance_changed`);
- joins and leaves the table's viewers on the channel layer (`join_viewers`, `leave_viewers`, the group a
  game names with `viewers_group`; blackjack keeps its own in-process registry, `blackjack.broadcast`);
- drops a frame sent to a client that has just closed its connection (`send`).
A game's consumer adds its parsing, its commands (through `live.route`) and its views. The rate limit of a
connection is `FloodGuard`; `query` and `unwrapped` read the request's query string and user.
"""

import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from autobahn.exception import Disconnected
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string
from django.utils.functional import LazyObject, empty

from accounts import sockets
from live import forward

#: Flooding: the policy-violation close (4000 + RFC 6455's 1008: Daphne sends only 1000 and 3000-4999).
POLICY_VIOLATION = 4008

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
    #: The template whose partials carry the user's balance on this kind of page (`balance_partials`).
    balance_template: str
    balance_partials = ("nav_balance",)
    json_format = False

    async def websocket_connect(self, message):
        """Join the group that closes this socket when its session ends (`accounts.sockets`) before anything
        else, so that the end of a session cannot slip between the check of the session and the join. The
        process's receiver of forwarded commands (`live.forward`) starts with its first socket."""
        forward.listen()
        user = unwrapped(self.scope.get("user"))
        if user is not None and user.is_authenticated:
            self.groups = [sockets.user_group(user.pk)]
            self.session_id = sockets.session_id(getattr(self.scope.get("session"), "session_key", None))
        await super().websocket_connect(message)

    # --- hooks of a game ---

    def on_database(self, function: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
        """`function` as a coroutine on a database thread (Channels' by default)."""
        return database_sync_to_async(function)

    def balance_seen(self, user_id: int, balance: int) -> None:
        """The user's balance, read afresh after a `balance_changed`: what the game keeps of it."""

    def viewers_group(self) -> str:
        """The channel-layer group of the table's viewers (`join_viewers`)."""
        raise NotImplementedError

    # --- the table's viewers ---

    async def join_viewers(self) -> None:
        """Join the table's viewers: from now on this connection hears of each version committed."""
        self.viewers = self.viewers_group()
        await self.channel_layer.group_add(self.viewers, self.channel_name)

    async def leave_viewers(self) -> None:
        viewers = getattr(self, "viewers", None)
        if viewers is not None:
            self.viewers = None
            await self.channel_layer.group_discard(viewers, self.channel_name)

    # --- messages of every live socket ---

    async def live_reply(self, event):
        """The answer of an owner to a command this connection forwarded (`live.route`)."""
        forward.answered(event)

    async def session_ended(self, event):
        """The user logged out, changed their password or was suspended: close (`accounts.sockets`)."""
        if sockets.ended_for(event, getattr(self, "session_id", None)):
            await self.close(code=sockets.SESSION_ENDED)

    async def balance_changed(self, event):
        """Chips moved outside a table (the daily grant, a staff adjustment; `accounts.sockets`): push the
        balance, read afresh, to this page: `{"type": "balance", "balance": N}`, or out-of-band fragments for
        the header's figure and, on a table page, the status strip's "Your chips"."""
        user_id = unwrapped(self.scope["user"]).pk
        balance = await self.on_database(sockets.current_balance)(user_id)
        if balance is None:
            return
        self.balance_seen(user_id, balance)
        await self.send(text_data=self._balance_message(balance))

    def _balance_message(self, balance: int) -> str:
        if self.json_format:
            return json.dumps({"type": "balance", "balance": balance})
        context = {"view": {"you": {"balance": balance}}, "oob": True}
        return "".join(
            render_to_string(f"{self.balance_template}#{part}", context) for part in self.balance_partials
        )

    async def send(self, text_data=None, bytes_data=None, close=False):
        """Send a frame; one to a client that has just closed its connection is dropped. The server (Daphne)
        learns of a close a moment before it tells the consumer (`disconnect` follows), and a view sent in
        between is no error: without this, the handler that sent it failed with a logged traceback."""
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except Disconnected:
            logger.debug("a frame to a client that had just left was dropped")
