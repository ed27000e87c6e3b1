"""The Durak table's websocket, `/ws/durak/<id>/`: JSON (`?format=json`, for bots and tools) or HTML fragments
(the page, swapped by htmx by id).

Thin (`live.consumer.LiveConsumer`: authentication, the session's end, the balance, the table's viewers):
rate-limit, check a frame, hand it to the table's owner (`durak.remote`: its actor here, or the owning process
over the channel layer), and send this viewer its own view (`durak.view.table_view`) of each version the owner
announces, built from the actor's memory here or from the table as read once in this process
(`durak.actor.seen`); never an older version after a newer one. A refused or malformed frame is answered
with `{"type": "error", "code", "message"}` and changes nothing; `unavailable` when the owner did not answer
(the action may have been applied: resent with the same `v`, it is applied once).

Messages: `{"action": "sit" | "leave" | "add_bot" | "ready" | "start"}`, or an engine action
`{"action": "attack" | "beat" | "transfer", "card": "7s"[, "target": "6s"]}`, `{"action": "take" | "done"}`;
each may carry `"v"`, the version the sender saw (then a resent frame is applied once). `ready` and `start`
may carry `"seed"`, the player's contribution to the deck's client seed (the deal mixes the seeds of every
playing player's ready or start; a random one when none is sent).
Each socket of a logged-in user tells the table's owner when it opens and closes, with its channel name and
process (`op` "presence": the owner counts the sockets, `DurakActor.presence`, for the reconnect grace), and
tells it again when a view shows its player marked gone (`_reannounce`: a new owner counts nobody).
"""

import asyncio
import contextlib
import json
import logging
import secrets
import time

from django.db import Error as DatabaseFailure
from django.template.loader import render_to_string

from blackjack.rendering import LIVE_TEMPLATE as BALANCE_TEMPLATE
from cards.errors import Refused
from durak.actor import actor_for, group_name, seen, watched_on
from durak.models import DurakTable
from durak.remote import ENGINE_ACTIONS, DurakRoute
from durak.view import table_view
from live import forward, process
from live.consumer import POLICY_VIOLATION, FloodGuard, LiveConsumer, query, unwrapped
from live.lease import OwnedElsewhere

LIVE_TEMPLATE = "durak/partials/live.html"
MAX_FRAME_CHARS = 1024
KEYS = {"action", "v", "card", "target", "seed", "HEADERS"}
TABLE_ACTIONS = ("sit", "leave", "add_bot", "ready", "start")
UNAVAILABLE = Refused(
    "unavailable",
    "The server running this table did not answer; the action may have been applied. "
    "Retry it as it was (the same v): if it was applied, the retry is refused as stale_version.",
)
DATABASE_DOWN = Refused("unavailable", "The server cannot reach its database; nothing was changed. Retry.")

logger = logging.getLogger(__name__)


class DurakConsumer(LiveConsumer):
    balance_template = BALANCE_TEMPLATE

    async def connect(self):
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.user = unwrapped(self.scope["user"])
        self.user_id = self.user.pk if self.user is not None and self.user.is_authenticated else None
        self.json_format = query(self.scope).get("format") == "json"
        self.sent = -1
        self.flood = FloodGuard()
        self.route = DurakRoute(self.table_id, self.channel_name)
        # Whether the owner was told this socket is open (`tell_presence`), the task telling it again
        # (`_reannounce`) and the version that made it.
        self.told = False
        self.reannouncing: asyncio.Task | None = None
        self.reannounced = -1
        watched_on(asyncio.get_running_loop())
        try:
            await self._own_if_free()
            await seen(self.table_id)
        except DurakTable.DoesNotExist:
            await self.close()
            return
        await self.join_viewers()
        await self.accept()
        await self.send_view()  # first: telling a dead owner of the presence waits for its reply
        await self.tell_presence(connected=True)
        self.told = True

    async def _own_if_free(self) -> None:
        """A table no live process owns is taken by this process (its actor loads it and takes the lease),
        so that its turn timers run here; a table owned elsewhere is only watched from here."""
        if await self.route.resolved() is not None:
            return
        try:
            await actor_for(self.table_id).current()
        except OwnedElsewhere as taken:
            self.route.owner = taken.owner

    def viewers_group(self) -> str:
        return group_name(self.table_id)

    async def disconnect(self, code):
        if getattr(self, "viewers", None) is None:
            return  # closed before it joined: no such table
        await self.leave_viewers()
        if self.reannouncing is not None:  # its "open" must reach the owner before this "closed"
            self.reannouncing.cancel()
            await asyncio.gather(self.reannouncing, return_exceptions=True)
        await self.tell_presence(connected=False)

    async def tell_presence(self, *, connected: bool) -> None:
        """Tell the table's owner that this socket opened or closed (through `durak.remote`, as actions go):
        it counts each user's sockets by channel name and process, so a player's grace starts when their last
        socket, on any process, closes. An owner that does not answer is gone: its successor marks the
        player gone, and `_reannounce` tells it again."""
        if self.user_id is None:
            return
        body = {
            "op": "presence",
            "connected": connected,
            "channel": self.channel_name,
            "process": process.name(),
        }
        try:
            with contextlib.suppress(Refused, DatabaseFailure, DurakTable.DoesNotExist):
                await self.route.send(body, user=self.user, in_handler=True)
        except forward.Unreachable:
            logger.warning("durak table %s: presence not told, its owner did not answer", self.table_id)

    def _reannounce(self, table) -> None:
        """This socket is open, yet the version shows its player marked gone: the owner that counted it died
        or dropped its count (a new owner counts nobody). Tell it again, once per version that shows the mark,
        without holding up this connection's views."""
        if not self.told or table.version <= self.reannounced:
            return
        if self.reannouncing is not None and not self.reannouncing.done():
            return
        mine = table.seat_of(self.user_id)
        if mine is not None and mine.gone is not None and not mine.away:
            self.reannounced = table.version
            self.reannouncing = asyncio.create_task(self.tell_presence(connected=True))

    async def receive(self, text_data=None, bytes_data=None):
        verdict = self.flood.hit(time.monotonic())
        if verdict == FloodGuard.CLOSE:
            await self.close(code=POLICY_VIOLATION)
            return
        if verdict == FloodGuard.LIMITED:
            await self.send_error(Refused("rate_limited", "Too many messages: slow down."))
            return
        try:
            message = self.parse(text_data)
            body = {"op": "act", "message": message, "name": self.user.public_name}
            # A handler of this connection's messages: the owner's answer comes on a channel of its own.
            version = await self.route.send(body, user=self.user, in_handler=True)
        except Refused as refusal:
            await self.send_error(refusal)
            if refusal.code == "stale_version":
                await self.send_view(force=True)
            return
        except forward.Unreachable:
            await self.send_error(UNAVAILABLE)
            return
        except DatabaseFailure:
            await self.send_error(DATABASE_DOWN)
            return
        except DurakTable.DoesNotExist:
            await self.close()
            return
        if version is not None:
            await self.send_view(at_least=version)

    def parse(self, text: str | None) -> dict:
        """The frame as a checked message (`durak.remote.command_of` makes the table's command of it)."""
        if text is None or len(text) > MAX_FRAME_CHARS:
            raise Refused(
                "bad_message", f"A message is a JSON object of at most {MAX_FRAME_CHARS} characters."
            )
        try:
            data = json.loads(text)
        except ValueError:
            raise Refused("bad_message", "A message is a JSON object.") from None
        if not isinstance(data, dict) or not set(data) <= KEYS:
            raise Refused(
                "bad_message", f"A message is an object with some of {', '.join(sorted(KEYS - {'HEADERS'}))}."
            )
        if self.user_id is None:
            raise Refused("not_authenticated", "Log in to play.")
        name = data.get("action")
        message = {"action": name, "v": _version(data.get("v"))}
        if name in ("ready", "start"):
            seed = data.get("seed") or secrets.token_hex(16)
            if not isinstance(seed, str) or len(seed) > 64:
                raise Refused("bad_message", "A seed is text of at most 64 characters.")
            message["seed"] = seed
        elif name in ENGINE_ACTIONS:
            for key in ("card", "target"):
                value = data.get(key)
                if value not in (None, ""):
                    if not isinstance(value, str) or len(value) != 2:
                        raise Refused("bad_message", f"A {key} is a card such as 7s or Th.")
                    message[key] = value
        elif name not in TABLE_ACTIONS:
            raise Refused(
                "bad_message",
                f"The action is one of {', '.join(TABLE_ACTIONS)}, {', '.join(ENGINE_ACTIONS)}.",
            )
        return message

    async def durak_version(self, event):
        if event["v"] > self.sent:
            await self.send_view(at_least=event["v"])

    async def send_view(self, *, at_least: int = -1, force: bool = False):
        """Send this viewer's view of the table at version `at_least` or later, unless it has that version
        already (`force`: read the table afresh and send it again, after a stale action)."""
        try:
            table = await seen(self.table_id, at_least, fresh=force)
        except DurakTable.DoesNotExist:
            await self.close()
            return
        if table.version <= self.sent and not force:
            return
        self.sent = table.version
        view = table_view(table, self.user_id)
        if self.json_format:
            await self.send(text_data=json.dumps(view))
        else:
            await self.send(text_data=render_to_string(LIVE_TEMPLATE, {"view": view, "oob": True}))
        self._reannounce(table)

    async def send_error(self, refusal: Refused):
        error = {"type": "error", "code": refusal.code, "message": refusal.message}
        if self.json_format:
            await self.send(text_data=json.dumps(error))
        else:
            await self.send(text_data=render_to_string(f"{LIVE_TEMPLATE}#error", {"error": error}))


def _version(value) -> int | None:
    """The `v` of a message: an int, or the digits a form sends; absent is None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not (
        isinstance(value, int) or (isinstance(value, str) and value.isdigit())
    ):
        raise Refused("bad_message", "v is the table's version, a whole number.")
    return int(value)
