"""The load tester: its bots' decisions, its figures, its loopback-only rule, and a short real run against a
Daphne process (the CI version of the benchmark; `tools/benchmarks/load.py` runs the long ones)."""

import asyncio
import json
import statistics
import time

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from blackjack.engine.rules import PRESETS
from blackjack.engine.strategy import basic_strategy
from tools.loadtest.bot import RATE_WINDOW, Bot, InFlight, TableLedger, ThinkTime, next_action
from tools.loadtest.command import Command as LoadTest
from tools.loadtest.fixtures import LoopbackOnly, check_loopback
from tools.loadtest.stats import Recorder, percentiles

STRATEGY = basic_strategy(PRESETS["Vegas Strip"])


def seat(number, player=None, *, bet=0, ready=False, sitting_out=False, hands=()):
    return {
        "seat": number,
        "player": player,
        "bet": bet,
        "ready": ready,
        "sitting_out": sitting_out,
        "in_round": bool(hands),
        "hands": [{"cards": cards} for cards in hands],
    }


def state(phase, seats, *, mine=(), allowed=(), by_seat=None, turn=None, dealer=(), v=7):
    return {
        "type": "state",
        "v": v,
        "table": {"phase": phase, "seats": seats, "turn": turn, "dealer": {"cards": list(dealer)}},
        "you": {"seats": list(mine), "allowed": list(allowed), "allowed_by_seat": by_seat or {}},
    }


def decide(message, number, *, stopping=False, ordered=True):
    return next_action(message, number, STRATEGY, min_bet=10, stopping=stopping, ordered=ordered)


def test_bots_sit_in_seat_order():
    empty = state("waiting", [seat(1), seat(2)], allowed=["sit", "chat"])
    sit = decide(empty, 1)
    assert (sit["action"], sit["seat"], len(sit["seed"])) == ("sit", 1, 32)  # a bot draws its own seed
    assert decide(empty, 1)["seed"] != sit["seed"]
    assert decide(empty, 2) is None  # seat 1 first
    assert decide(empty, 2, ordered=False)["seat"] == 2
    assert decide(empty, 1, stopping=True) is None
    taken = state("betting", [seat(1, "a"), seat(2, "b")], allowed=["chat"])
    assert decide(taken, 2) is None


def test_bots_bet_the_minimum_in_seat_order_and_only_once():
    seats = [seat(1, "a"), seat(2, "b")]
    betting = {"1": ["bet"], "2": ["bet"]}
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2) is None
    seats[0]["bet"] = 10
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2) == {
        "action": "bet",
        "amount": 10,
        "seat": 2,
    }
    assert decide(state("betting", seats, mine=[1], by_seat=betting), 1) is None  # has bet already
    seats[0]["bet"], seats[0]["sitting_out"] = 0, True  # nobody waits for a player sitting out
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2)["action"] == "bet"
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2, stopping=True) is None


def test_a_bot_sitting_out_bets_at_once_to_come_back():
    """It missed a betting window (a lost update, say): the table deals as soon as the others have bet, so a
    bot waiting for them in seat order would never play again."""
    seats = [seat(1, "a"), seat(2, "b", sitting_out=True)]
    betting = {"2": ["ready", "bet"]}
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2) == {
        "action": "bet",
        "amount": 10,
        "seat": 2,
    }
    seats[1]["sitting_out"] = False
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2) is None  # back in turn: seat 1 first


def test_bots_decline_insurance_and_play_basic_strategy():
    seats = [seat(1, "a", bet=10, hands=[["Th", "6c"]])]
    offer = state("insurance", seats, mine=[1], by_seat={"1": ["insurance"]}, dealer=["As", None])
    assert decide(offer, 1) == {"action": "insurance", "accept": False, "seat": 1}
    even = state("insurance", seats, mine=[1], by_seat={"1": ["even_money"]}, dealer=["As", None])
    assert decide(even, 1) == {"action": "even_money", "accept": False, "seat": 1}

    def play(cards, up, allowed=("hit", "stand", "double", "split", "surrender")):
        table = [seat(1, "a", bet=10, hands=[cards])]
        turn = {"seat": 1, "hand": 0}
        return decide(
            state("playing", table, mine=[1], by_seat={"1": list(allowed)}, turn=turn, dealer=[up, None]), 1
        )

    assert play(["6h", "5c"], "6d") == {"action": "double", "seat": 1, "hand": 0}
    assert play(["Th", "6c"], "Td") == {"action": "surrender", "seat": 1, "hand": 0}  # late surrender 16 v 10
    assert play(["Th", "6c"], "Td", ("hit", "stand")) == {"action": "hit", "seat": 1, "hand": 0}
    assert play(["8h", "8c"], "9d")["action"] == "split"
    assert play(["Th", "7c"], "Ad", ("hit", "stand"))["action"] == "stand"
    # Not this seat's turn: wait.
    waiting = state(
        "playing", seats, mine=[1], by_seat={"1": []}, turn={"seat": 2, "hand": 0}, dealer=["9d", None]
    )
    assert decide(waiting, 1) is None


def test_bots_get_ready_in_seat_order():
    seats = [seat(1, "a"), seat(2, "b")]
    settled = state("settled", seats, mine=[2], by_seat={"2": ["ready"]})
    assert decide(settled, 2) is None
    seats[0]["ready"] = True
    assert decide(state("settled", seats, mine=[2], by_seat={"2": ["ready"]}), 2) == {"action": "ready"}
    assert decide(state("settled", seats, mine=[2], by_seat={"2": ["ready"]}), 2, stopping=True) is None


def test_think_times_are_seeded_and_spread_around_the_mean():
    draws = [ThinkTime(1000, seed=3).draw() for _ in range(3)]
    assert draws[0] == draws[1] == draws[2]  # the same seed, the same pauses
    think = ThinkTime(1000, seed=3)
    pauses = [think.draw() for _ in range(5000)]
    assert pauses[0] == draws[0]
    assert all(0.5 <= pause <= 1.5 for pause in pauses)
    assert statistics.fmean(pauses) == pytest.approx(1.0, abs=0.02)
    assert min(pauses) < 0.55
    assert max(pauses) > 1.45
    assert ThinkTime(1000, seed=4).draw() != draws[0]  # each bot its own sequence
    assert {ThinkTime(0, seed=3).draw() for _ in range(10)} == {0.0}


class FakeSocket:
    """Delivers the given messages, then nothing; keeps what the bot sends with the time it was sent."""

    def __init__(self, *messages):
        self.incoming = asyncio.Queue()
        for message in messages:
            self.incoming.put_nowait(json.dumps(message))
        self.sent = []
        self.got = asyncio.Event()

    async def recv(self):
        return await self.incoming.get()

    async def send(self, text):
        self.sent.append((time.monotonic(), json.loads(text)))
        self.got.set()


async def serve_until_sent(socket, *, think, playing=True, sent_just_now=0):
    """Run one bot (seat 1) on `socket` until it sends a frame; returns it with the bot and the start time.
    `sent_just_now`: frames the bot is to have sent at the start."""
    events = asyncio.Event(), asyncio.Event()
    if playing:
        events[0].set()
    bot = Bot(
        urls=["ws://127.0.0.1:1/"],
        session_key="k",
        seat=1,
        strategy=STRATEGY,
        min_bet=10,
        recorder=Recorder(),
        shared=TableLedger(),
        playing=events[0],
        stopping=events[1],
        think=think,
    )
    bot.socket = socket
    started = time.monotonic()
    bot.sent_at.extend([started] * sent_just_now)
    task = asyncio.create_task(bot._serve([float("inf")]))
    try:
        await asyncio.wait_for(socket.got.wait(), 5)
    finally:
        task.cancel()
    return socket.sent, bot, started


def playing_state(cards, up, *, v):
    table = [seat(1, "a", bet=10, hands=[cards])]
    by_seat = {"1": ["hit", "stand"]}
    return state(
        "playing", table, mine=[1], by_seat=by_seat, turn={"seat": 1, "hand": 0}, dealer=[up, None], v=v
    )


@pytest.mark.asyncio
async def test_a_thinking_bot_pauses_then_decides_on_the_newest_state():
    pause = ThinkTime(200, seed=5).draw()
    hit = playing_state(["Th", "6c"], "Td", v=7)  # 16 v 10: hit
    stand = playing_state(["Th", "7c"], "6d", v=8)  # arrives during the pause; 17 v 6: stand
    assert decide(hit, 1)["action"] == "hit"
    assert decide(stand, 1)["action"] == "stand"
    sent, bot, started = await serve_until_sent(FakeSocket(hit, stand), think=ThinkTime(200, seed=5))
    [(sent_at, frame)] = sent
    assert frame == {"action": "stand", "seat": 1, "hand": 0, "v": 8}  # not the hit decided on version 7
    assert sent_at - started >= pause
    # The action's clock starts at the send.
    assert bot.in_flight == InFlight(8, pytest.approx(sent_at, abs=0.01), "stand", turn=True)


def idle_bot(recorder: Recorder) -> Bot:
    return Bot(
        urls=["ws://127.0.0.1:1/"],
        session_key="k",
        seat=1,
        strategy=STRATEGY,
        min_bet=10,
        recorder=recorder,
        shared=TableLedger(),
        playing=asyncio.Event(),
        stopping=asyncio.Event(),
    )


def test_a_lost_race_is_counted_by_the_action_that_lost_it():
    recorder = Recorder()
    bot = idle_bot(recorder)
    for action, code in (("bet", "stale_version"), ("ready", "stale_version"), ("bet", "stale_version")):
        bot.in_flight = InFlight(7, 0.0, action, turn=False)
        bot._receive(json.dumps({"type": "error", "code": code, "message": "?"}))
        assert bot.in_flight is None
    bot.in_flight = InFlight(8, 0.0, "hit", turn=True)
    bot._receive(json.dumps({"type": "error", "code": "not_your_turn", "message": "?"}))
    summary = recorder.summary()
    assert summary["races"] == 3
    assert summary["races_by_action"] == {"bet": 2, "ready": 1}
    assert summary["errors"] == {"not_your_turn": 1, "stale_version": 3}


def test_an_insurance_answer_is_timed_to_the_state_that_includes_it():
    """The other players answer in the same window: their states arrive first and do not end the action."""
    recorder = Recorder(measuring=True)
    bot = idle_bot(recorder)
    bot.in_flight = InFlight(7, time.monotonic(), "insurance", turn=False)
    table = [seat(1, "a", bet=10, hands=[["Th", "6c"]]), seat(2, "b", bet=10, hands=[["9h", "9c"]])]
    offered = state("insurance", table, mine=[1], by_seat={"1": ["insurance"]}, dealer=["As", None], v=8)
    bot._receive(json.dumps(offered))  # seat 2 answered
    assert bot.in_flight is not None
    assert recorder.actor == []
    answered = state("insurance", table, mine=[1], by_seat={"1": []}, dealer=["As", None], v=9)
    bot._receive(json.dumps(answered))
    assert bot.in_flight is None
    assert len(recorder.actor) == 1


def test_during_its_turn_any_newer_state_answers_the_bots_play():
    recorder = Recorder(measuring=True)
    bot = idle_bot(recorder)
    bot.in_flight = InFlight(7, time.monotonic(), "hit", turn=True)
    bot._receive(json.dumps(playing_state(["Th", "2c", "3d"], "Td", v=8)))  # still 15 v 10: would hit again
    assert bot.in_flight is None
    assert len(recorder.actor) == 1


@pytest.mark.asyncio
async def test_bots_take_their_seats_without_thinking():
    empty = state("waiting", [seat(1), seat(2)], allowed=["sit", "chat"])
    sent, _, _ = await serve_until_sent(FakeSocket(empty), think=ThinkTime(60_000, seed=1), playing=False)
    frames = [{**frame, "seed": "its own"} for _, frame in sent]
    assert frames == [{"action": "sit", "seat": 1, "seed": "its own", "v": 7}]


@pytest.mark.asyncio
async def test_a_bot_keeps_within_the_servers_rate_limit():
    """Twenty frames sent in the last instant: the twenty-first waits until the first is a second old (the
    server refuses a 21st frame within a second as `rate_limited`)."""
    hit = playing_state(["Th", "6c"], "Td", v=7)
    sent, _, started = await serve_until_sent(FakeSocket(hit), think=None, sent_just_now=20)
    [(sent_at, frame)] = sent
    assert frame["action"] == "hit"
    assert sent_at - started >= 1.0


def test_percentiles_use_the_nearest_rank():
    values = [n / 1000 for n in range(1, 101)]  # 1..100 ms
    assert percentiles(values) == {"count": 100, "p50": 50.0, "p95": 95.0, "p99": 99.0, "max": 100.0}
    assert percentiles([0.25]) == {"count": 1, "p50": 250.0, "p95": 250.0, "p99": 250.0, "max": 250.0}
    assert percentiles([])["p99"] is None


@pytest.mark.parametrize(
    "url",
    ["http://8.8.8.8:8000", "http://10.0.0.1", "ftp://127.0.0.1:21", "127.0.0.1:8000", "http://127.0.0.1/x"],
)
def test_only_loopback_base_urls_are_load_tested(url):
    with pytest.raises(LoopbackOnly):
        check_loopback(url)


def test_loopback_urls_become_websocket_bases():
    assert check_loopback("http://127.0.0.1:8000") == "ws://127.0.0.1:8000"
    assert check_loopback("https://localhost:8443/") == "wss://localhost:8443"
    assert check_loopback("http://[::1]:9000") == "ws://[::1]:9000"


@pytest.mark.django_db
def test_the_command_refuses_unbounded_or_foreign_runs():
    for options in (
        {"url": ["http://8.8.8.8"]},
        {"url": ["http://127.0.0.1:1"], "tables": 0},
        {"url": ["http://127.0.0.1:1"], "players": 8},
        {"url": ["http://127.0.0.1:1"], "duration": 100_000},
        {"url": ["http://127.0.0.1:1"], "think": -1},
        {"url": ["http://127.0.0.1:1"], "think": 60_000},
        {"url": ["http://127.0.0.1:1"], "warmup": -1},
    ):
        with pytest.raises(CommandError):
            call_command(LoadTest(), **options)


@pytest.mark.django_db
def test_the_think_time_reaches_the_bots_and_the_results(monkeypatch, tmp_path, capsys):
    configs = []

    async def run(config, fixture, *, progress):
        configs.append(config)
        return Recorder()

    monkeypatch.setattr("tools.loadtest.command.run", run)
    out = tmp_path / "load.json"
    call_command(
        LoadTest(), url=["http://127.0.0.1:1"], tables=1, players=1, think=1500, warmup=8, json_path=str(out)
    )
    call_command(LoadTest(), url=["http://127.0.0.1:1"], tables=1, players=1)
    assert [config.think_ms for config in configs] == [1500, 0]  # as fast as possible by default
    assert [config.warmup for config in configs] == [8, 0]  # measured from the start by default
    assert json.loads(out.read_text())["think_ms"] == 1500
    assert json.loads(out.read_text())["warmup_s"] == 8
    assert '"think_ms": 0' in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize(("think", "wire"), [(0, "json"), (50, "json"), (50, "html")])
def test_a_short_load_run_reports_figures_and_a_clean_audit(servers, tmp_path, capsys, think, wire):
    server = servers()
    out = tmp_path / "load.json"
    call_command(
        LoadTest(),
        url=[server.url],
        tables=2,
        players=2,
        duration=6,
        drain=5,
        think=think,
        warmup=1,
        wire=wire,
        json_path=str(out),
    )
    result = json.loads(out.read_text())
    assert result["format"] == wire
    if connection.vendor == "postgresql":  # the server's pool and the load client's, at least one each
        assert result["postgres_connections"]["peak"] >= 2
    else:
        assert result["postgres_connections"] is None
    assert json.loads(capsys.readouterr().out) == result  # printed and written alike
    assert result["think_ms"] == think
    assert result["warmup_s"] == 1
    started, ended = result["window"]  # Unix times of the measured seconds, after the warm-up
    assert ended - started == pytest.approx(result["seconds"], abs=0.01)
    assert result["seconds"] == pytest.approx(6, abs=0.5)
    assert result["bots"] == 4
    assert result["actions"] > 0
    assert result["rounds"] > 0
    for who in ("actor", "others"):
        figures = result["latency_ms"][who]
        assert figures["count"] > 0
        assert 0 < figures["p50"] <= figures["p95"] <= figures["p99"] <= figures["max"]
    by_action = result["actor_latency_ms_by_action"]
    assert sum(figures["count"] for figures in by_action.values()) == result["actions"]
    assert {"bet", "ready"} <= set(by_action)
    assert any(key.endswith(" settling") for key in by_action)  # the actions that ended a round, apart
    assert result["unexpected_errors"] == 0, result["errors"]
    assert result["audit"]["ok"], result["audit"]
    assert result["audit"]["sum_of_balances"] == 0


@pytest.mark.asyncio
@pytest.mark.parametrize("code", ["rate_limited", "unavailable"])
async def test_a_refused_action_that_applied_nothing_is_sent_again_after_a_pause(code):
    """No newer state follows such a refusal: a bot waiting for one would stall its table for good."""
    hit = playing_state(["Th", "6c"], "Td", v=7)  # 16 v 10: hit
    socket = FakeSocket(hit)
    sent, bot, _ = await serve_until_sent(socket, think=None)
    assert [frame for _, frame in sent] == [{"action": "hit", "seat": 1, "hand": 0, "v": 7}]
    refused_at = time.monotonic()
    socket.got.clear()
    socket.incoming.put_nowait(json.dumps({"type": "error", "code": code, "message": "?"}))
    task = asyncio.create_task(bot._serve([float("inf")]))
    try:
        await asyncio.wait_for(socket.got.wait(), 5)
    finally:
        task.cancel()
    (_, first), (again_at, again) = sent
    assert again == first
    assert again_at - refused_at >= RATE_WINDOW - 0.01
    assert bot.recorder.summary()["errors"] == {code: 1}


def test_the_progress_line_shows_the_p99_of_the_actions_since_the_last_line():
    recorder = Recorder(measuring=True)
    for _ in range(100):
        recorder.action_done(0.5)  # a slow start
    assert "recent actor p99 500.0 ms" in recorder.progress_line()
    for _ in range(100):
        recorder.action_done(0.02)
    assert "recent actor p99 20.0 ms" in recorder.progress_line()  # the slow start is not in it any more
    assert "recent actor p99 - ms" in recorder.progress_line()  # nothing answered since
    assert (
        recorder.summary()["latency_ms"]["actor"]["p99"] == 500.0
    )  # the run's own figures keep every action


def test_bots_reach_the_servers_their_route_picks_and_fail_over_in_turn():
    from tools.loadtest.runner import server_order

    urls = ["ws://a", "ws://b", "ws://c"]
    # Spread: each table's players over the servers.
    assert [server_order(urls, route="player", player=p, table=0)[0] for p in range(4)] == [
        "ws://a",
        "ws://b",
        "ws://c",
        "ws://a",
    ]
    # By table: all of a table's players on one server, the tables over the servers.
    assert {server_order(urls, route="table", player=p, table=4)[0] for p in range(5)} == {"ws://b"}
    assert server_order(urls, route="table", player=0, table=2) == ["ws://c", "ws://a", "ws://b"]
    with pytest.raises(ValueError, match="route"):
        server_order(urls, route="seat", player=0, table=0)


@pytest.mark.asyncio
async def test_a_failed_first_handshake_is_counted_and_tried_again():
    from websockets.exceptions import InvalidMessage

    from tools.loadtest.runner import first_connection

    class Flaky:
        def __init__(self, failures):
            self.failures, self.tries = failures, 0

        async def connect(self):
            self.tries += 1
            if self.tries <= len(self.failures):
                raise self.failures[self.tries - 1]

    recorder = Recorder()
    bot = Flaky([InvalidMessage("no HTTP response"), ConnectionResetError()])
    await first_connection(bot, recorder, pauses=(0, 0, 0))
    assert bot.tries == 3
    assert recorder.summary()["errors"] == {"connect_failed": 2}
    assert recorder.unexpected_errors == 2  # an error of the run, not hidden by the retry
    hopeless = Flaky([TimeoutError()] * 3)
    with pytest.raises(TimeoutError):
        await first_connection(hopeless, Recorder(), pauses=(0, 0))
    assert hopeless.tries == 3
