"""Websocket test clients for the table protocol: one over `WebsocketCommunicator` (in process) and one over a
real socket (`websockets`, against Daphne). Both keep every payload they receive, so tests can scan them all.

Not a test module: `test_consumers*.py`, `test_hidden_info.py` and `test_daphne_e2e.py` import it.
"""

import asyncio
import json
import time
from collections import deque
from html.parser import HTMLParser
from typing import Any

from channels.testing import WebsocketCommunicator
from django.test import Client

from tools.loadtest.page import Page

#: The server's limit: at most this many messages in any second (live.consumer.FloodGuard).
RATE_LIMIT = 20
ORIGIN_HEADERS = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
TIMEOUT = 5


def session_cookie(user) -> str:
    """A logged-in session for `user` (sync code only): the `sessionid` cookie value."""
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


class ProtocolClient:
    """One connection. `payloads` holds every text frame received, in order; `state` is the latest JSON state
    (JSON format only)."""

    json_format = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.payloads: list[str] = []
        self.state: dict[str, Any] | None = None
        self.pending: list[dict[str, Any]] = []
        self.sent_at: deque[float] = deque(maxlen=RATE_LIMIT)

    async def _send_text(self, text: str) -> None:
        raise NotImplementedError

    async def _receive_text(self, timeout: float) -> str:
        raise NotImplementedError

    @property
    def version(self) -> int:
        assert self.state is not None, f"{self.name} has no state yet"
        return self.state["v"]

    async def send(self, message: dict[str, Any] | str, *, paced: bool = False) -> None:
        """Send a frame; `paced` first waits if needed to stay within the server's rate limit, as a polite
        client does (a bot answering a fast server would otherwise exceed it)."""
        if paced and len(self.sent_at) == RATE_LIMIT:
            wait = self.sent_at[0] + 1.05 - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        self.sent_at.append(time.monotonic())
        await self._send_text(message if isinstance(message, str) else json.dumps(message))

    async def act(self, action: str, **args) -> None:
        """Send an action with the version of the last state received (paced)."""
        await self.send({"action": action, **args, "v": self.version}, paced=True)

    async def receive(self, timeout: float = TIMEOUT) -> dict[str, Any] | str:
        """The next message (parsed JSON in JSON format, the HTML text otherwise)."""
        text = await self._receive_text(timeout)
        self.payloads.append(text)
        if not self.json_format:
            return text
        message = json.loads(text)
        if message.get("type") == "state":
            if self.state is not None:
                assert message["v"] >= self.state["v"], f"{self.name}: version went back"
            self.state = message
        return message

    async def next_of(self, kind: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message of type `kind`; messages of other types are kept in `pending`."""
        while True:
            message = await self.receive(timeout)
            if message["type"] == kind:
                return message
            self.pending.append(message)

    async def until_version(self, version: int, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Read until a state of at least `version` has arrived (JSON format); an error on the way fails. The
        dealer frames of a settled round (phase `dealer`, paced by the server) are read through to its
        settled state."""
        while self.state is None or self.state["v"] < version or self.state["table"].get("phase") == "dealer":
            message = await self.receive(timeout)
            if message["type"] == "error":
                raise AssertionError(f"{self.name}: unexpected error {message}")
            if message["type"] != "state":
                self.pending.append(message)
        return self.state

    async def error(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        return await self.next_of("error", timeout)

    async def quiet(self, wait: float = 0.3) -> None:
        """Read until no message arrives within `wait` seconds (a connection's first view may be followed by
        the state that marks its player present)."""
        while True:
            try:
                await self.receive(wait)
            except TimeoutError:
                return

    async def nothing_more(self, wait: float = 0.2) -> None:
        """Assert that no message arrives within `wait` seconds."""
        try:
            text = await self._receive_text(wait)
        except TimeoutError:
            return
        raise AssertionError(f"{self.name}: unexpected message {text[:200]}")


class CommunicatorClient(ProtocolClient):
    """In-process client over `channels.testing.WebsocketCommunicator`."""

    def __init__(self, name: str, path: str, *, cookie: str | None = None, headers=None) -> None:
        super().__init__(name)
        from cardroom.asgi import application

        self.json_format = "format=json" in path
        self.page = Page()  # an HTML connection's page, as the browser puts it together from the messages
        all_headers = list(ORIGIN_HEADERS if headers is None else headers)
        if cookie:
            all_headers.append((b"cookie", f"sessionid={cookie}".encode()))
        self.communicator = WebsocketCommunicator(application, path, headers=all_headers)

    async def connect(self) -> bool:
        connected, _ = await self.communicator.connect(timeout=TIMEOUT)
        return connected

    async def close(self) -> None:
        await self.communicator.disconnect()

    async def _send_text(self, text: str) -> None:
        await self.communicator.send_to(text_data=text)

    async def _receive_text(self, timeout: float) -> str:
        # receive_output() cancels the application when it times out: wait with receive_nothing() instead.
        if await self.communicator.receive_nothing(timeout, interval=0.005):
            raise TimeoutError(f"{self.name}: nothing received within {timeout} s")
        message = await self.communicator.receive_output()
        if message["type"] == "websocket.close":
            raise ConnectionClosed(message.get("code"))
        assert message["type"] == "websocket.send", message
        return message["text"]

    async def closed_with(self, timeout: float = TIMEOUT) -> int | None:
        """Read until the server closes the connection; the close code."""
        while True:
            try:
                await self._receive_text(timeout)
            except ConnectionClosed as closed:
                return closed.code


async def move(actor: ProtocolClient, action: str, *, others=(), **args) -> dict[str, Any]:
    """`actor` sends `action` at its current version; wait until it and `others` have the resulting state."""
    await actor.act(action, **args)
    state = await actor.until_version(actor.version + 1)
    for other in others:
        await other.until_version(state["v"])
    return state


def next_move(client) -> dict | None:
    """What this player does now according to its own view, or None."""
    state = client.state
    you, table = state["you"], state["table"]
    for seat in you["seats"]:
        allowed = you["allowed_by_seat"][str(seat)]
        if "bet" in allowed and table["seats"][seat - 1]["bet"] == 0:
            return {"action": "bet", "amount": table["min_bet"] * seat, "seat": seat}
        for offer in ("insurance", "even_money"):
            if offer in allowed:
                return {"action": offer, "accept": seat % 2 == 1, "seat": seat}
        if "ready" in allowed:
            return {"action": "ready"}
        hint = you["hint"]
        if hint is not None and hint["seat"] == seat:
            assert hint["action"] in allowed, (hint, allowed)
            return {"action": hint["action"], "seat": seat, "hand": hint["hand"]}
    return None


async def play_until(clients, *, rounds: int) -> list[dict]:
    """Let the players act (one move at a time, everyone in sync) until `rounds` rounds have settled;
    returns the last state of each settled round."""
    settled = {}
    while len(settled) < rounds:
        moves = [(client, next_move(client)) for client in clients]
        moves = [(client, message) for client, message in moves if message is not None]
        assert moves, f"nobody may act in {clients[0].state['table']['phase']}"
        client, message = moves[0]
        others = [other for other in clients if other is not client]
        state = await move(client, message.pop("action"), others=others, **message)
        if state["table"]["phase"] == "settled":
            settled[state["table"]["round_id"]] = state
    return list(settled.values())


class ConnectionClosed(Exception):
    def __init__(self, code) -> None:
        super().__init__(f"closed with {code}")
        self.code = code


class SocketClient(ProtocolClient):
    """A real websocket client (the `websockets` library) for a live server."""

    def __init__(self, name: str, url: str, *, cookie: str | None = None, origin: str | None = None) -> None:
        super().__init__(name)
        self.url = url
        self.json_format = "format=json" in url
        self.cookie = cookie
        self.origin = origin
        self.socket = None

    async def connect(self) -> None:
        from websockets.asyncio.client import connect

        headers = {"Cookie": f"sessionid={self.cookie}"} if self.cookie else {}
        self.socket = await connect(
            self.url, additional_headers=headers, origin=self.origin, open_timeout=TIMEOUT
        )

    async def close(self) -> None:
        await self.socket.close()

    async def _send_text(self, text: str) -> None:
        await self.socket.send(text)

    async def _receive_text(self, timeout: float) -> str:
        return await asyncio.wait_for(self.socket.recv(), timeout)


class TopLevel(HTMLParser):
    """Collects the attributes of every top-level element of a fragment."""

    VOID = {"input", "img", "br", "hr", "meta", "link", "source", "wbr", "area", "col", "embed", "track"}

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.top: list[tuple[str, dict]] = []
        self.stray_text = ""

    def handle_starttag(self, tag, attrs):
        if self.depth == 0:
            self.top.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.depth += 1

    def handle_startendtag(self, tag, attrs):
        if self.depth == 0:
            self.top.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag not in self.VOID:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth == 0:
            self.stray_text += data.strip()


def top_level(fragment: str) -> list[tuple[str, dict]]:
    parser = TopLevel()
    parser.feed(fragment)
    parser.close()
    assert parser.depth == 0, "unbalanced fragment"
    assert parser.stray_text == "", f"text outside any element: {parser.stray_text[:80]!r}"
    return parser.top


def assert_oob_fragment(fragment: str) -> list[str]:
    elements = top_level(fragment)
    assert elements, "empty message"
    for tag, attrs in elements:
        assert attrs.get("id"), f"<{tag}> without an id"
        assert "hx-swap-oob" in attrs, f"<{tag} id={attrs['id']}> without hx-swap-oob"
    return [attrs["id"] for _, attrs in elements]
