"""Run the bots of a load test: connect them (a few at a time), play for the configured time, let the hands
under way finish, make every bot leave, and return what was measured."""

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from blackjack.engine.rules import RuleSet
from blackjack.engine.strategy import basic_strategy
from tools.loadtest.bot import RECONNECT_DELAYS, Bot, TableLedger, ThinkTime
from tools.loadtest.fixtures import Fixture
from tools.loadtest.page import HtmlFormat, JsonFormat
from tools.loadtest.stats import Recorder

CONNECTING_AT_ONCE = 20
SEATING_SECONDS = 60


@dataclass(frozen=True)
class RunConfig:
    ws_urls: list[str]  # ws://host:port bases, in the order `server_order` gives each bot
    duration: float
    drain: float = 15.0
    warmup: float = 0.0  # seconds of play before measuring, after the last table started
    stagger: float = 0.0  # the tables start their first rounds spread evenly over this many seconds
    progress_every: float = 5.0
    ordered: bool = True
    think_ms: int = (
        0  # mean pause before each action during play (`ThinkTime`); 0: as fast as the flow allows
    )
    route: str = "player"  # which server a bot connects to first: "player" or "table" (`server_order`)
    wire: str = "json"  # the bots' format: "json" or "html" (the browser's: `tools.loadtest.page`)


ROUTES = ("player", "table")
WIRES = {"json": JsonFormat, "html": HtmlFormat}


def server_order(urls: list[str], *, route: str, player: int, table: int) -> list[str]:
    """The servers a bot tries, in turn: first the one its route picks, then the next ones (as a load balancer
    would pick another process after one went away). `route` "player" spreads the players of every table over
    the servers (player i on server i mod N: every table is played across processes, and every broadcast
    crosses between them); "table" puts all of a table's players on one server (table t on server t mod N), as
    a load balancer hashing the table's websocket path does (`docs/deployment.md`)."""
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}")
    first = (player if route == "player" else table) % len(urls)
    return urls[first:] + urls[:first]


async def start_tables(playing: dict[int, asyncio.Event], stagger: float, progress) -> None:
    """Let the tables play, one after another at even intervals over `stagger` seconds (all at once without).
    Started together, every table deals, settles and opens its betting in the same moments, a burst that
    comes back round after round until their players' pauses have drifted them apart: a site's tables fill
    as players arrive."""
    if stagger > 0:
        progress(f"starting the {len(playing)} tables over {stagger:g} s")
    began = time.monotonic()
    for index, event in enumerate(playing.values()):
        if (delay := began + stagger * index / len(playing) - time.monotonic()) > 0:
            await asyncio.sleep(delay)
        event.set()


async def first_connection(bot: Bot, recorder: Recorder, pauses=RECONNECT_DELAYS) -> None:
    """Open the bot's first connection. A handshake that fails (the server did not accept it in time, say) is
    counted as `connect_failed`, an error of the run, and tried again after the next of `pauses`, as the
    page's socket does; after the last one the failure is raised."""
    from websockets.exceptions import WebSocketException

    for pause in (*pauses, None):
        try:
            await bot.connect()
            return
        except (OSError, TimeoutError, WebSocketException):
            recorder.error("connect_failed")
            if pause is None:
                raise
        await asyncio.sleep(pause)


async def run(config: RunConfig, fixture: Fixture, *, progress: Callable[[str], None]) -> Recorder:
    recorder = Recorder()
    # Each table's bots start playing when their table's event is set (`stagger`); all stop together.
    playing = {table_id: asyncio.Event() for table_id in fixture.table_ids}
    stopping = asyncio.Event()
    strategy = basic_strategy(RuleSet.from_dict(fixture.rules))
    ledgers = {table_id: TableLedger() for table_id in fixture.table_ids}
    bots = []
    for index, player in enumerate(fixture.players):
        bases = server_order(
            config.ws_urls,
            route=config.route,
            player=index,
            table=fixture.table_ids.index(player.table_id),
        )
        # JSON: lean states (`log=off`), a bot never reads the table's log or chat, half of every state's
        # bytes. HTML: the page's own socket, which gets every region.
        wire = WIRES[config.wire]()  # one per connection: the HTML page is kept message by message
        query = "&".join(part for part in (wire.query, f"token={player.token}") if part)
        path = f"/ws/tables/{player.table_id}/?{query}"
        bots.append(
            Bot(
                urls=[base + path for base in bases],
                session_key=player.session_key,
                seat=player.seat,
                strategy=strategy,
                min_bet=fixture.min_bet,
                recorder=recorder,
                shared=ledgers[player.table_id],
                playing=playing[player.table_id],
                stopping=stopping,
                ordered=config.ordered,
                think=ThinkTime(config.think_ms, seed=index),
                wire=wire,
            )
        )
    gate = asyncio.Semaphore(CONNECTING_AT_ONCE)

    async def connect(bot: Bot) -> None:
        async with gate:
            await first_connection(bot, recorder)

    started = time.monotonic()
    await asyncio.gather(*(connect(bot) for bot in bots))
    progress(f"{len(bots)} bots connected in {time.monotonic() - started:.1f} s; taking seats")
    drain_until = [float("inf")]
    tasks = [asyncio.create_task(bot.play(drain_until)) for bot in bots]
    seating_ends = time.monotonic() + SEATING_SECONDS
    while not all(bot.seated for bot in bots) and time.monotonic() < seating_ends:
        await asyncio.sleep(0.1)
    seated = sum(bot.seated for bot in bots)
    pace = f" with a mean think time of {config.think_ms:g} ms" if config.think_ms else " as fast as possible"
    progress(f"{seated} of {len(bots)} bots seated in {time.monotonic() - started:.1f} s; playing{pace}")
    await start_tables(playing, config.stagger, progress)
    if config.warmup > 0:
        progress(f"warming up for {config.warmup:g} s before measuring")
        await asyncio.sleep(config.warmup)
    recorder.measuring = True
    began = time.monotonic()
    began_at = time.time()
    try:
        # (A sleep may wake a millisecond early: what is left of the run after that is no new interval.)
        while (left := config.duration - (time.monotonic() - began)) > 0.01:
            await asyncio.sleep(min(config.progress_every, left))
            recorder.elapsed = time.monotonic() - began
            progress(recorder.progress_line())
    finally:
        recorder.elapsed = time.monotonic() - began
        recorder.measuring = False
        recorder.window = (began_at, began_at + recorder.elapsed)
        drain_until[0] = time.monotonic() + config.drain
        stopping.set()
    progress(f"stopping: finishing the hands under way (at most {config.drain:.0f} s), then leaving")
    await asyncio.gather(*tasks)
    return recorder
