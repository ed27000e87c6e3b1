"""The blackjack table's socket (`/ws/tables/<id>/`, the table protocol of shared/PROTOCOL.md).

The table's socket is the site's consumer pipeline (`live.consumer.TableConsumer`: connect, rate limits, frame
limits, the worker, the owner's route, presence, chat and reactions, one refusal message, a clean close) with
blackjack's hooks: who may watch (`viewmodel.visible_table`: a private table needs its link, `?token=`), the
protocol's fields (`blackjack.protocol`), and the viewer's view of each version (`viewmodel.view_of`: JSON,
`?format=json`, with `&log=off` without the table's log; or the HTML regions of
`blackjack/live.jinja`). Each version's shared view part reaches the consumer from `live.fanout`
(built by the table's actor here from its memory, or read once for this process's viewers from the database
when the version was made elsewhere). A settled round's dealer's turn is shown frame by frame: each
connection paces its own frames (`show`, `_pace`; `viewmodel.frame_at`).
"""

import asyncio
from datetime import datetime

from channels.db import database_sync_to_async
from django.utils import timezone

from blackjack import actors, protocol, refusals, remote
from blackjack.models import GAME, Table
from blackjack.rendering import BALANCE_REGIONS, Page, live_html, region
from blackjack.viewmodel import (
    Frame,
    TableUnavailable,
    ViewerView,
    _Shared,
    frame_at,
    own_balance,
    read_shared,
    view_of,
    visible_table,
)
from live.consumer import TableConsumer, Unavailable


class BlackjackConsumer(TableConsumer):
    game = GAME
    route = remote.Route
    fields = protocol.FIELDS

    def error_html(self, error: dict[str, str]) -> str:
        return str(region("flash", {"error": error}))

    def balance_html(self, balance: int) -> str:
        context = {"view": {"you": {"balance": balance}}, "oob": True}
        return "".join(str(region(part, context)) for part in BALANCE_REGIONS)

    def setup(self, options: dict[str, str]) -> None:
        self.lean = self.json_format and options.get("log") == "off"  # JSON states without the log
        self.frame_timer: asyncio.TimerHandle | None = None  # the next dealer frame's (`_pace`)
        # The settled round whose dealer frames this connection shows, and when they began here (None: from
        # the moment the round settled, for a connection that opened during them).
        self.settled_at: datetime | None = None
        self.frames_from: datetime | None = None
        self.balance: int | None = None  # the viewer's as last shown (a view without their seat shows it)
        self.shared: _Shared | None = None  # the latest version's shared part this connection was handed
        self.page = Page()  # what the browser's page holds of what this connection sent (HTML only)

    def refusal_text(self, code: str, message: str) -> str:
        return refusals.translated(code, message)

    def visible(self, table_id: int, user, token: str | None) -> None:
        try:
            visible_table(table_id=table_id, user=user, private_token=token)
        except TableUnavailable:
            raise Unavailable from None

    def balance_seen(self, user_id: int, balance: int) -> None:
        actors.balance_seen(user_id, balance)  # the next views of the tables here show it
        self.balance = balance
        self.page.forget(*BALANCE_REGIONS)  # the notice rewrites them on the page

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
        built, sent = (shared.version, frame.index), (self.sent_version, self.sent_frame)
        if built > sent or (force and built == sent):
            found = view_of(frame.shared, self.user, balance=self.balance)
            self.balance = found.balance  # kept for when they hold no seat (after leaving)
            page = self.page.copy()
            text = self._encode(found, error, page)
            if self._claim(found.version, frame.index, force=force):
                self.page = page
                await self.send(text_data=text)
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
            shared, frame, text, page = await database_sync_to_async(self._build)(error)
        except Table.DoesNotExist:
            await self.close()
            return
        if self.shared is None or shared.version >= self.shared.version:
            self.shared = shared
        if self._claim(shared.version, frame.index, force=force):
            self.page = page  # a whole page: what the browser holds now
            await self.send(text_data=text)
        self._pace(shared, frame)
        self._reannounce(shared)

    async def resend(self, error: dict[str, str] | None) -> None:
        """The current view again (after a stale-version refusal): from the latest shared part this
        connection was handed when that is the version this process's actor holds (the table as it is), else
        read from the database (the owner is elsewhere, or the actor reloaded a version no viewer was shown:
        another writer's). The page gets what it lacks, and the version its forms send in any case."""
        self.page.forget("table_version")
        shared = self.shared
        if shared is None or shared.version != actors.version_in_memory(self.table_id):
            await self.send_view(force=True, error=error)
            return
        frame = frame_at(shared, timezone.now(), start=self.frames_from)
        found = view_of(frame.shared, self.user, balance=self.balance)
        page = self.page.copy()
        text = self._encode(found, error, page)
        if self._claim(shared.version, frame.index, force=True):
            self.page = page
            await self.send(text_data=text)

    def _build(self, error: dict[str, str] | None) -> tuple[_Shared, Frame, str, Page]:
        shared = read_shared(self.table_id)
        if shared.reveal is not None and shared.reveal[0] != self.settled_at:
            self.settled_at, self.frames_from = shared.reveal[0], None  # connecting: the frame of the moment
        frame = frame_at(shared, timezone.now(), start=self.frames_from)
        found = view_of(frame.shared, self.user, balance=own_balance(shared, self.user))
        self.balance = found.balance
        page = Page()
        return shared, frame, self._encode(found, error, page), page

    def _encode(self, found: ViewerView, error: dict[str, str] | None, page: Page) -> str:
        """The viewer's message: JSON, or the HTML regions `page` lacks (all of them for an empty one), which
        `page` then records."""
        if self.json_format:
            return found.json(lean=self.lean)
        return live_html(found, user=self.user, error=error, page=page)
