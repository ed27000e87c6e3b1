"""The blackjack table's socket (`/ws/tables/<id>/`, the table protocol of shared/PROTOCOL.md) and the lobby's
(`/ws/lobby/`).

The table's socket is the site's consumer pipeline (`live.consumer.TableConsumer`: connect, rate limits, frame
limits, the worker, the owner's route, presence, chat and reactions, one refusal message, a clean close) with
blackjack's hooks: who may watch (`viewmodel.visible_table`: a private table needs its link, `?token=`), the
protocol's fields (`blackjack.protocol`), and the viewer's view of each version (`viewmodel.view_of`: JSON,
`?format=json`, with `&log=off` without the table's log; or the HTML regions of
`blackjack/partials/live.html`). Each version's shared view part reaches the consumer from `live.fanout`
(built by the table's actor here from its memory, or read once for this process's viewers from the database
when the version was made elsewhere). A settled round's dealer's turn is shown frame by frame: each
connection paces its own frames (`show`, `_pace`; `viewmodel.frame_at`).
"""

import asyncio
import json
from datetime import datetime

from channels.db import database_sync_to_async
from django.template.loader import render_to_string
from django.utils import timezone

from blackjack import actors, protocol, remote
from blackjack.models import GAME, Table
from blackjack.rendering import LIVE_TEMPLATE, live_html
from blackjack.viewmodel import (
    Frame,
    TableUnavailable,
    ViewerView,
    _Shared,
    build_lobby_view,
    frame_at,
    lobby_page,
    own_balance,
    read_shared,
    view_of,
    visible_table,
)
from durak import services as durak_services
from live import fanout
from live.consumer import INTERNAL_ERROR, LiveConsumer, TableConsumer, Unavailable
from live.consumer import query as live_query

LOBBY_TEMPLATE = "blackjack/partials/lobby_rows.html"
DURAK_LOBBY_TEMPLATE = "durak/partials/lobby_rows.html"


class BlackjackConsumer(TableConsumer):
    game = GAME
    route = remote.Route
    fields = protocol.FIELDS
    error_template = f"{LIVE_TEMPLATE}#flash"
    balance_template = LIVE_TEMPLATE
    balance_partials = ("nav_balance", "your_chips")

    def setup(self, options: dict[str, str]) -> None:
        self.lean = self.json_format and options.get("log") == "off"  # JSON states without the log
        self.frame_timer: asyncio.TimerHandle | None = None  # the next dealer frame's (`_pace`)
        # The settled round whose dealer frames this connection shows, and when they began here (None: from
        # the moment the round settled, for a connection that opened during them).
        self.settled_at: datetime | None = None
        self.frames_from: datetime | None = None
        self.balance: int | None = None  # the viewer's as last shown (a view without their seat shows it)
        self.shared: _Shared | None = None  # the latest version's shared part this connection was handed

    def visible(self, table_id: int, user, token: str | None) -> None:
        try:
            visible_table(table_id=table_id, user=user, private_token=token)
        except TableUnavailable:
            raise Unavailable from None

    def balance_seen(self, user_id: int, balance: int) -> None:
        actors.balance_seen(user_id, balance)  # the next views of the tables here show it
        self.balance = balance

    def marked_gone(self, shared: _Shared) -> bool:
        mine = [row for row in shared.seat_rows.values() if row.user_id == self.user.pk]
        return bool(mine) and not all(row.connected for row in mine)

    def left(self) -> None:
        if self.frame_timer is not None:
            self.frame_timer.cancel()

    async def show(
        self, shared: _Shared, *, force: bool = False, error: dict[str, str] | None = None
    ) -> None:
        """A version's shared view part: add this viewer's own part and send the frame of the moment."""
        now = timezone.now()
        if self.shared is None or shared.version >= self.shared.version:
            self.shared = shared
        if shared.reveal is not None and shared.reveal[0] != self.settled_at:
            # Watching when the round settled: its dealer frames start when its version arrives, all of them
            # (a slow delivery delays the dealer's turn for this viewer rather than skipping its first cards).
            self.settled_at, self.frames_from = shared.reveal[0], now
        frame = frame_at(shared, now, start=self.frames_from)
        if (shared.version, frame.index) > (self.sent_version, self.sent_frame) or force:
            found = view_of(frame.shared, self.user, balance=self.balance)
            self.balance = found.balance  # kept for when they hold no seat (after leaving)
            await self._deliver(found.version, self._encode(found, error), frame=frame.index, force=force)
        self._pace(shared, frame)

    def _pace(self, shared: _Shared, frame: Frame) -> None:
        """While a version's dealer frames are shown (`viewmodel.frame_at`), hand the version to this
        connection's mailbox again when its next frame is due; a newer version supersedes it."""
        if frame.next_at is None or shared.version != self.sent_version:
            return
        if self.frame_timer is not None:
            self.frame_timer.cancel()
        delay = max(0.0, (frame.next_at - timezone.now()).total_seconds())
        message = {"type": "live.shared", "shared": shared}
        self.frame_timer = asyncio.get_running_loop().call_later(delay, self.mailbox.deliver, message)

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

    async def resend(self, error: dict[str, str] | None) -> None:
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


class LobbyConsumer(LiveConsumer):
    """Streams one page of the list of public open tables (`?page=N`, the first by default): on connect and
    after every `lobby.changed`."""

    async def connect(self):
        query = live_query(self.scope)
        self.json_format = query.get("format") == "json"
        self.page = lobby_page(query.get("page"))
        self.game = durak_services.lobby_game(query.get("game"))
        fanout.register_loop(asyncio.get_running_loop())
        self.mailbox = fanout.Mailbox(self.dispatch, failed=self._failed)
        try:
            await fanout.join(fanout.LOBBY_GROUP, self.mailbox)
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
            await fanout.leave(fanout.LOBBY_GROUP, mailbox)

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
