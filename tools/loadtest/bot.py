"""One load-test bot: a websocket client of the table protocol that plays one seat with basic strategy, in the
JSON format or as the browser does (the page's HTML fragments and forms: `tools.loadtest.page`).

`next_action` is the whole policy, a pure function of the last `state` message; `Bot` handles the socket,
keeps at most one action in flight (until a state includes it or the server refuses it), times every action
and reconnects when the server goes away.

Taking turns without a turn order: bets, ready checks and insurance answers are open to every seat at once,
and every action carries the version it was made against. The server accepts such a decision even when only
other players' decisions in the same window made its version stale, but sitting down, repeats and anything
crossing a phase change still race (`stale_version`). With `ordered` (the default) a bot waits until every
seat below its own is taken (to sit), and every occupied seat below its own has bet (or is ready): the answers
follow one another, each as soon as the previous one is seen, and races are rare. Without it (`--eager`) every
bot answers at once: more throughput, and more refusals that are retried. Sitting down would lose every race
against a player who acts on every new state, so all bots take their seats first (`playing` not yet set) and
only then start to play. A lost race is retried on the fresh state the server sends with the refusal.

Human pace (`ThinkTime`, `--think MS`): during play a bot pauses before each action, as a player reads the
table and decides. The pause starts as soon as the action is open to its seat, whatever the seat order
(players think at the same time; only their answers follow one another), and when it ends the bot decides
again on the newest state it has: it never sends a decision made on a state that has changed since. The clock
of an action still starts when its frame is sent, so the latencies never include the pause. Seats are taken,
and the hands under way at the stop finished, without pauses.
"""

import asyncio
import contextlib
import random
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from blackjack.engine.strategy import PLAYING_ACTIONS, Strategy
from tools.loadtest.page import JsonFormat
from tools.loadtest.stats import Recorder

CONNECT_TIMEOUT = 30.0  # as long as the cluster gives a handshake (scripts/run-cluster.sh)
#: The server's per-connection limit: at most this many frames in any second (`live.consumer.FloodGuard`).
RATE_LIMIT = 20
RATE_WINDOW = 1.05  # seconds, with a margin for the two clocks
#: Refusals after which the action was not applied and no newer state follows: the bot sends it again.
RETRIED = ("rate_limited", "unavailable")
RECONNECT_DELAYS = (0.2, 0.5, 1.0, 2.0, 3.0)


def next_action(
    state: dict[str, Any],
    seat: int,
    strategy: Strategy,
    *,
    min_bet: int,
    stopping: bool,
    ordered: bool = True,
) -> dict[str, Any] | None:
    """What the bot seated (or to be seated) at `seat` sends now, or None to wait for the next state.
    `stopping`: take no new seat, bet or ready check; finish the hands already dealt."""
    table, you = state["table"], state["you"]
    seats = table["seats"]
    if seat not in you["seats"]:
        if stopping or seats[seat - 1]["player"] is not None or "sit" not in you["allowed"]:
            return None
        if ordered and any(other["player"] is None for other in seats[: seat - 1]):
            return None
        return {"action": "sit", "seat": seat, "seed": secrets.token_hex(16)}  # its own part of the shuffle
    allowed = you["allowed_by_seat"].get(str(seat), [])
    phase = table["phase"]
    mine = seats[seat - 1]
    if phase == "betting" and "bet" in allowed and mine["bet"] == 0:
        # A seat sitting out (it missed a betting window) comes back at once: the table deals without waiting
        # for it, so waiting for the seats before it would keep it out for good.
        waits = (
            ordered and not mine["sitting_out"] and any(_waits_for_bet(other) for other in seats[: seat - 1])
        )
        if stopping or waits:
            return None
        return {"action": "bet", "amount": min_bet, "seat": seat}
    if phase == "insurance":
        for offer in ("even_money", "insurance"):
            if offer in allowed:  # basic strategy never insures
                return {"action": offer, "accept": False, "seat": seat}
        if "surrender" in allowed and strategy.surrenders_early(mine["hands"][0]["cards"], _upcard(table)):
            return {"action": "surrender", "seat": seat}
        return None
    turn = table["turn"]
    if phase == "playing" and turn is not None and turn["seat"] == seat:
        playable = [name for name in allowed if name in PLAYING_ACTIONS]
        if not playable:
            return None
        hand = turn["hand"]
        choice = strategy.decide(mine["hands"][hand]["cards"], _upcard(table), playable)
        return {"action": choice, "seat": seat, "hand": hand}
    if "ready" in allowed and not stopping:
        if ordered and phase == "settled" and any(_waits_for_ready(other) for other in seats[: seat - 1]):
            return None
        return {"action": "ready"}
    return None


def _waits_for_bet(seat_view: dict[str, Any]) -> bool:
    return seat_view["player"] is not None and not seat_view["sitting_out"] and seat_view["bet"] == 0


def _waits_for_ready(seat_view: dict[str, Any]) -> bool:
    return seat_view["player"] is not None and not seat_view["ready"]


def _upcard(table: dict[str, Any]) -> str:
    return table["dealer"]["cards"][0]


class ThinkTime:
    """A player's pause before each action: uniform between half and one and a half times `mean_ms`, from a
    generator seeded per bot (every run draws the same pauses in the same order). Uniform, not long-tailed:
    the mean is exact, no pause is near zero, the longest is bounded (the command's cap keeps it under the
    shortest decision window of a table), and the spread keeps the bots of a table from acting in lockstep."""

    def __init__(self, mean_ms: float, *, seed: int) -> None:
        self.mean = mean_ms / 1000
        self.random = random.Random(seed)

    def draw(self) -> float:
        """Seconds to wait before the next action (always 0 without a mean)."""
        return self.random.uniform(0.5, 1.5) * self.mean if self.mean > 0 else 0.0


class InFlight(NamedTuple):
    """The bot's action that the server has not answered yet."""

    version: int  # the state version it was sent against
    sent_at: float
    action: str
    turn: bool  # a play in the bot's turn, when nobody else acts


class NotLoggedIn(RuntimeError):
    """The server saw the bot as anonymous."""


@dataclass
class TableLedger:
    """What the bots of one table share: actions sent, by the version they were sent against (to time how
    long the other players take to see them), and the rounds already counted."""

    sent: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    settled: set[int] = field(default_factory=set)

    def record(self, version: int, seat: int, at: float) -> None:
        self.sent.setdefault(version, []).append((seat, at))
        if len(self.sent) > 256:
            for old in sorted(self.sent)[:128]:
                del self.sent[old]

    def withdraw(self, version: int, seat: int) -> None:
        entries = self.sent.get(version)
        if entries:
            self.sent[version] = [entry for entry in entries if entry[0] != seat]

    def first_sent(self, version: int, *, not_by: int) -> float | None:
        times = [at for seat, at in self.sent.get(version, ()) if seat != not_by]
        return min(times) if times else None


class Bot:
    """Plays `seat` at one table through `urls[0]` (full ws:// URLs, with the query of its `wire` format)
    until told to stop. After losing its connection it reconnects to the next URL of the list, in turn (one
    server per URL, as a load balancer would pick another process). `wire` is `tools.loadtest.page`'s
    `JsonFormat` (the default) or `HtmlFormat` (the browser's socket: the bot plays from what the page
    shows)."""

    #: Seconds without any message after which the bot looks at its last state again.
    idle_timeout = 5.0

    def __init__(
        self,
        *,
        urls: list[str],
        session_key: str,
        seat: int,
        strategy: Strategy,
        min_bet: int,
        recorder: Recorder,
        shared: TableLedger,
        playing: asyncio.Event,
        stopping: asyncio.Event,
        ordered: bool = True,
        think: ThinkTime | None = None,
        wire=None,
    ) -> None:
        self.wire = wire if wire is not None else JsonFormat()
        self.urls, self.at, self.cookie = list(urls), 0, f"sessionid={session_key}"
        self.seat, self.strategy, self.min_bet = seat, strategy, min_bet
        self.recorder, self.shared, self.ordered = recorder, shared, ordered
        self.playing, self.stopping = playing, stopping
        self.think = think
        self.think_until: float | None = None  # when the pause before this bot's next action ends
        self.sent_at: deque[float] = deque(maxlen=RATE_LIMIT)  # the latest sends, to keep within the limit
        self.socket = None
        self.state: dict[str, Any] | None = None
        self.in_flight: InFlight | None = None
        self.acted_at = -1  # the newest version this bot has acted on
        self.resume_at = 0.0  # after a refusal that applied nothing, no action before this moment
        self.left = False

    @property
    def url(self) -> str:
        """The URL of the current (or last) connection."""
        return self.urls[self.at]

    async def connect(self) -> None:
        from websockets.asyncio.client import connect

        parts = urlsplit(self.url)
        self.socket = await connect(
            self.url,
            additional_headers={"Cookie": self.cookie},
            origin=f"{'https' if parts.scheme == 'wss' else 'http'}://{parts.netloc}",
            open_timeout=CONNECT_TIMEOUT,
            max_size=2**20,
        )
        messages = self.wire.decode(await asyncio.wait_for(self.socket.recv(), CONNECT_TIMEOUT))
        first = messages[-1] if messages else {}
        if first.get("type") != "state" or first["you"]["username"] is None:
            await self.socket.close()
            raise NotLoggedIn(
                "the server does not know the bot's session: run the load tester with the servers' "
                "DATABASE_URL and SECRET_KEY (sessions are signed with it)"
            )
        self.state = first

    async def play(self, drain_until: list[float]) -> None:
        """Play until stopped, then finish the hands under way (until `drain_until[0]`), leave and close."""
        from websockets.exceptions import ConnectionClosed

        self.recorder.connected += 1
        try:
            while not self.left:
                try:
                    await self._serve(drain_until)
                except (ConnectionClosed, OSError, TimeoutError):
                    self.recorder.connected -= 1
                    if not await self._reconnect(drain_until):
                        return
                    self.recorder.connected += 1
        finally:
            if self.socket is not None:
                with contextlib.suppress(Exception):
                    await self.socket.close()

    async def _serve(self, drain_until: list[float]) -> None:
        socket = self.socket
        while not self.left:
            timeout = 1.0 if self.stopping.is_set() or not self.playing.is_set() else self.idle_timeout
            if self.think_until is not None and (pause := self.think_until - time.monotonic()) > 0:
                timeout = min(timeout, pause)
            if (pause := self.resume_at - time.monotonic()) > 0:
                timeout = min(timeout, pause)
            try:
                text = await asyncio.wait_for(socket.recv(), timeout)
            except TimeoutError:
                if self.stopping.is_set() and time.monotonic() >= drain_until[0]:
                    await self._leave()
                    return
                await self._maybe_act()  # a pause ended, or nothing arrived: make sure the bot is not stuck
                continue
            self._receive(text)
            if self.stopping.is_set() and (self._done() or time.monotonic() >= drain_until[0]):
                await self._leave()
                return
            await self._maybe_act()

    def _receive(self, text: str) -> None:
        for message in self.wire.decode(text):
            self._take(message)

    def _take(self, message: dict[str, Any]) -> None:
        now = time.monotonic()
        kind = message.get("type")
        if kind == "error":
            code = message.get("code", "unknown")
            self.recorder.error(code, action=None if self.in_flight is None else self.in_flight.action)
            if self.in_flight is not None:
                self.shared.withdraw(self.in_flight.version, self.seat)
                if code in RETRIED:
                    # Nothing was applied and no newer state will follow: act on this version again, after
                    # a second (the server counts every frame, the ones it refuses too).
                    self.acted_at = min(self.acted_at, self.in_flight.version - 1)
                    self.resume_at = now + RATE_WINDOW
                self.in_flight = None
            # After a lost race the fresh state follows (a newer version): the bot acts again on that one.
            return
        if kind != "state":
            return
        version = message["v"]
        before = self.state["v"] if self.state is not None else version
        for seen in range(before, version):
            sent_at = self.shared.first_sent(seen, not_by=self.seat)
            if sent_at is not None:
                self.recorder.seen_by_other(now - sent_at)
        if self.in_flight is not None and version > self.in_flight.version and self._answered(message):
            # The answer to the action that ended a round is its first dealer frame (the dealer's turn, paced
            # by the server at the same version), or the settled round when the dealer did not play.
            over = ("dealer", "settled")
            settling = message["table"]["phase"] in over and (
                self.state is None or self.state["table"]["phase"] not in over
            )
            self.recorder.action_done(
                now - self.in_flight.sent_at, action=self.in_flight.action, settling=settling
            )
            self.in_flight = None
        self.state = message
        table = message["table"]
        if table["phase"] == "settled" and table["round_id"] not in self.shared.settled:
            self.shared.settled.add(table["round_id"])
            self.recorder.round_settled()

    async def _maybe_act(self) -> None:
        state = self.state
        if state is None or self.in_flight is not None or state["v"] <= self.acted_at:
            return
        if time.monotonic() < self.resume_at:
            return
        if self._paced():
            if self._decide(state, ordered=False) is None:  # nothing to think about (any more)
                self.think_until = None
                return
            now = time.monotonic()
            if self.think_until is None:
                self.think_until = now + self.think.draw()
            if now < self.think_until:
                return  # `_serve` wakes the bot when the pause ends; newer states may arrive meanwhile
        action = self._decide(state, ordered=self.ordered)  # on the newest state, after any pause
        if action is None or (action["action"] != "sit" and not self.playing.is_set()):
            return
        now = time.monotonic()
        if len(self.sent_at) == RATE_LIMIT and now - self.sent_at[0] < RATE_WINDOW:
            # The server refuses a 21st frame within a second (`rate_limited`): a polite client waits.
            await asyncio.sleep(RATE_WINDOW - (now - self.sent_at[0]))
            now = time.monotonic()
        self.sent_at.append(now)
        version = state["v"]
        self.acted_at = version
        self.in_flight = InFlight(version, now, action["action"], turn=state["table"]["phase"] == "playing")
        self.think_until = None
        self.shared.record(version, self.seat, now)
        await self.socket.send(self.wire.encode(action, version))

    def _answered(self, state: dict[str, Any]) -> bool:
        """Does `state`, newer than the action in flight, include it? During the bot's turn nobody else acts,
        so any newer state does. A decision players take side by side (sit, bet, ready, insurance, even money,
        early surrender) does once the bot would no longer take it: the states of the other players'
        decisions arrive meanwhile, taking one for the answer would time the action short and repeat it."""
        if self.in_flight.turn:
            return True
        again = next_action(
            state, self.seat, self.strategy, min_bet=self.min_bet, stopping=False, ordered=False
        )
        return again is None or again["action"] != self.in_flight.action

    def _decide(self, state: dict[str, Any], *, ordered: bool) -> dict[str, Any] | None:
        return next_action(
            state,
            self.seat,
            self.strategy,
            min_bet=self.min_bet,
            stopping=self.stopping.is_set(),
            ordered=ordered,
        )

    def _paced(self) -> bool:
        """Pause before acting: a think time is set and the measured play is under way."""
        return (
            self.think is not None
            and self.think.mean > 0
            and self.playing.is_set()
            and not self.stopping.is_set()
        )

    def _done(self) -> bool:
        """Stopping and nothing of this bot's is under way: no hand in play and no action in flight."""
        if self.in_flight is not None or self.state is None:
            return False
        table = self.state["table"]
        mine = table["seats"][self.seat - 1]
        return table["phase"] in ("waiting", "betting", "dealer", "settled") or not mine["in_round"]

    @property
    def seated(self) -> bool:
        return self.state is not None and self.seat in self.state["you"]["seats"]

    async def _leave(self) -> None:
        """Give up the seat (after the round if a stake is still in it) and stop."""
        self.left = True
        if self.seated:
            with contextlib.suppress(Exception):
                await self.socket.send(self.wire.encode({"action": "leave"}, self.state["v"]))
                await asyncio.wait_for(self.socket.recv(), 2.0)

    async def _reconnect(self, drain_until: list[float]) -> bool:
        """Open a new connection after the server dropped this one; the first state resyncs the bot."""
        from websockets.exceptions import WebSocketException

        self.recorder.error("connection_lost")
        if self.in_flight is not None:
            self.shared.withdraw(self.in_flight.version, self.seat)
            self.in_flight = None
        self.think_until = None
        for delay in (*RECONNECT_DELAYS, *[RECONNECT_DELAYS[-1]] * 20):
            if self.stopping.is_set() and time.monotonic() >= drain_until[0]:
                return False
            await asyncio.sleep(delay)
            self.at = (self.at + 1) % len(self.urls)
            try:
                await self.connect()
            except (OSError, TimeoutError, WebSocketException):  # refused, reset, or the handshake failed
                continue
            self.recorder.reconnects += 1
            self.acted_at = -1
            return True
        self.recorder.error("reconnect_failed")
        return False
