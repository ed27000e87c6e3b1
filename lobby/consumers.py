"""The lobby's socket, `/ws/lobby/`: one page (`?page=N`) of every game's open tables (or of one game's,
`?game=<name>`), sent on connect and again after every `lobby.changed` (paced: `live.fanout`). HTML: each
game's section as an out-of-band element; JSON (`?format=json`): the `lobby` message (`lobby.sections.data`).
Read-only: anything a client sends is ignored."""

import asyncio
import json

from channels.db import database_sync_to_async

from live import fanout
from live.consumer import INTERNAL_ERROR, LiveConsumer, query
from lobby import sections
from lobby.views import page_of


class LobbyConsumer(LiveConsumer):
    async def connect(self):
        options = query(self.scope)
        self.json_format = options.get("format") == "json"
        self.page = page_of(options.get("page"))
        self.game = sections.chosen(options.get("game"))
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
        return

    async def lobby_changed(self, event):
        await self.send_lobby()

    async def send_lobby(self) -> None:
        await self.send(text_data=await database_sync_to_async(self._render)())

    def _render(self) -> str:
        if self.json_format:
            return json.dumps(sections.data(game=self.game, page=self.page))
        return sections.html(game=self.game, page=self.page, user=self.scope["user"])
