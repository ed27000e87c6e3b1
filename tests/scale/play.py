"""Drive the load tester's bots (`tools.loadtest.bot.Bot`) from tests: a few bots on given servers, every
payload kept, until a number of rounds has been settled at their table. Not a test module."""

import asyncio
import json
import time
from typing import Any

from blackjack.engine.rules import RuleSet
from blackjack.engine.strategy import basic_strategy
from tools.loadtest.bot import Bot, TableLedger
from tools.loadtest.fixtures import Fixture
from tools.loadtest.stats import Recorder


class RecordingBot(Bot):
    """A bot that keeps every message it receives (parsed), in order."""

    idle_timeout = 0.3

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.received: list[dict[str, Any]] = []
        self.raw: list[tuple[float, str]] = []  # (wall-clock time received, text)
        self.hold = None  # a predicate on the last state: while it holds, the bot does not act
        self.answers: set[int] = set()  # versions of the states that answered this bot's moves

    async def _maybe_act(self) -> None:
        if self.hold is not None and self.state is not None and self.hold(self.state):
            return
        await super()._maybe_act()

    def _receive(self, text: str) -> None:
        self.raw.append((time.time(), text))
        message = json.loads(text)
        self.received.append(message)
        waiting = self.in_flight
        super()._receive(text)
        if waiting is not None and self.in_flight is None and message.get("type") == "state":
            self.answers.add(message["v"])  # the version this bot's own move made

    async def connect(self) -> None:
        await super().connect()
        self.raw.append((time.time(), json.dumps(self.state)))
        self.received.append(self.state)

    def states(self) -> list[dict[str, Any]]:
        return [message for message in self.received if message.get("type") == "state"]


class Crew:
    """Bots for every player of `fixture`; player i connects to `bases[i % len(bases)]` (http://host:port) and
    fails over to the next ones."""

    def __init__(self, fixture: Fixture, bases: list[str]) -> None:
        self.recorder = Recorder()
        self.playing, self.stopping = asyncio.Event(), asyncio.Event()
        self.ledgers = {table_id: TableLedger() for table_id in fixture.table_ids}
        strategy = basic_strategy(RuleSet.from_dict(fixture.rules))
        self.bots: list[RecordingBot] = []
        for index, player in enumerate(fixture.players):
            first = index % len(bases)
            path = f"/ws/tables/{player.table_id}/?format=json&token={player.token}"
            self.bots.append(
                RecordingBot(
                    urls=[base.replace("http", "ws", 1) + path for base in bases[first:] + bases[:first]],
                    session_key=player.session_key,
                    seat=player.seat,
                    strategy=strategy,
                    min_bet=fixture.min_bet,
                    recorder=self.recorder,
                    shared=self.ledgers[player.table_id],
                    playing=self.playing,
                    stopping=self.stopping,
                )
            )
        self.drain_until = [float("inf")]
        self.tasks: list[asyncio.Task] = []

    async def start(self, *, timeout: float = 20.0) -> None:
        """Connect every bot, let them sit down, then let them play."""
        for bot in self.bots:
            await bot.connect()
        self.tasks = [asyncio.create_task(bot.play(self.drain_until)) for bot in self.bots]
        await self.wait_for(lambda: all(bot.seated for bot in self.bots), timeout, "every bot seated")
        self.recorder.measuring = True
        self.playing.set()

    def hold(self, predicate) -> None:
        """Bots stop acting while `predicate(state)` holds (None: play on)."""
        for bot in self.bots:
            bot.hold = predicate

    async def hold_at(self, predicate, *, timeout: float, what: str) -> None:
        """Hold the bots (as `hold`) and wait until every bot's last state satisfies `predicate` with no
        action of its own in flight: an action sent just before the hold may still change the table, and a
        bot's last state is then older than the table's."""
        self.hold(predicate)
        await self.wait_for(
            lambda: all(bot.state and predicate(bot.state) and bot.in_flight is None for bot in self.bots),
            timeout,
            what,
        )

    def settled(self) -> int:
        """Rounds settled so far, over all tables (as the bots saw them)."""
        return sum(len(ledger.settled) for ledger in self.ledgers.values())

    async def play_rounds(self, rounds: int, *, timeout: float) -> None:
        target = self.settled() + rounds
        await self.wait_for(lambda: self.settled() >= target, timeout, f"{rounds} more settled round(s)")

    async def finish(self, *, drain: float = 10.0) -> None:
        self.drain_until[0] = time.monotonic() + drain
        self.stopping.set()
        await asyncio.gather(*self.tasks)

    async def wait_for(self, condition, timeout: float, what: str) -> None:
        ends = time.monotonic() + timeout
        while not condition():
            failed = [task for task in self.tasks if task.done() and task.exception() is not None]
            if failed:
                raise failed[0].exception()
            if time.monotonic() > ends:
                summary = self.recorder.summary()
                raise AssertionError(f"timed out after {timeout} s waiting for {what}: {summary}")
            await asyncio.sleep(0.05)
