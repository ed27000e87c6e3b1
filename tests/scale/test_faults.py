"""Faults while tables play: a server process killed with SIGKILL mid-round and started again, Redis restarted
mid-play, and the database unreachable. After each the rounds go on (or are voided with refunds), clients
reconnect and resync, and the ledger audit is clean.

The short versions run in CI; `SCALE_FAULT_ROUNDS` (default 2) sets how many rounds are played after each
fault.
"""

import asyncio
import json
import os
import subprocess
from urllib.parse import urlsplit

import pytest
from django.db import connection

from accounts.audit import audit_ledger
from accounts.models import Wallet
from blackjack.models import Round, Seat, Table
from live import presence
from tests.scale.play import Crew
from tests.scale.servers import PrivateRedis
from tests.threads import in_a_thread
from tools.loadtest.fixtures import prepare

ROUNDS_AFTER = int(os.environ.get("SCALE_FAULT_ROUNDS", "2"))


def in_play(state) -> bool:
    return state["table"]["phase"] == "playing"


def current_round(table_id: int) -> Round:
    return Round.objects.get(pk=Table.objects.get(pk=table_id).current_round_id)


@pytest.mark.slow
def test_sigkill_mid_round_then_restart_resumes_the_round(servers):
    server = servers()
    fixture = prepare(run_id="kill", tables=1, players=2)
    table_id = fixture.table_ids[0]
    crew = Crew(fixture, [server.url])

    async def scenario():
        await crew.start()
        await crew.play_rounds(1, timeout=60)
        # Stop in the middle of the next round, cards dealt, a turn open.
        await crew.hold_at(in_play, timeout=30, what="a deal")
        before = await in_a_thread(current_round, table_id)
        assert before.settled_at is None  # the kill comes mid-round
        server.kill()
        server.start()
        await crew.wait_for(lambda: crew.recorder.reconnects >= 2, 60, "both bots reconnected")
        for bot in crew.bots:  # resynced: the round in play, as it was
            assert bot.state["table"]["round_id"] == before.pk
            assert bot.state["table"]["phase"] == "playing"
        crew.hold(None)
        await crew.play_rounds(ROUNDS_AFTER, timeout=60)
        await crew.finish()
        return before

    killed_round = asyncio.run(scenario())
    killed_round.refresh_from_db()
    assert killed_round.settled_at is not None
    assert not killed_round.voided  # resumed from the database and played to the end
    assert crew.recorder.errors["reconnect_failed"] == 0
    report = audit_ledger()
    assert report.ok, report.discrepancies


@pytest.mark.postgres
@pytest.mark.redis
def test_sigkill_of_one_of_two_processes_players_fail_over_to_the_other(servers):
    first, second = servers(), servers()
    fixture = prepare(run_id="failover", tables=1, players=2)
    table_id = fixture.table_ids[0]
    crew = Crew(fixture, [first.url, second.url])  # seat 1 on the first process, seat 2 on the second

    async def scenario():
        await crew.start()
        await crew.play_rounds(1, timeout=60)
        await crew.hold_at(in_play, timeout=30, what="a deal")
        before = await in_a_thread(current_round, table_id)
        first.kill()  # and it stays dead
        await crew.wait_for(lambda: crew.recorder.reconnects >= 1, 60, "the first process's player back")
        moved = crew.bots[0]
        assert moved.url.startswith(second.ws(""))
        assert moved.state["table"]["round_id"] == before.pk
        crew.hold(None)
        await crew.play_rounds(ROUNDS_AFTER, timeout=60)
        await crew.finish()
        return before

    killed_round = asyncio.run(scenario())
    killed_round.refresh_from_db()
    assert killed_round.settled_at is not None
    assert not killed_round.voided
    # The killed process's player lost its connection; the other player's command in flight to the dead owner
    # (forwarded: the table was owned there) may have been answered `unavailable`, which the bot retried.
    errors = crew.recorder.errors
    assert errors["connection_lost"] == 1, errors
    assert errors["unavailable"] <= 1, errors
    assert crew.recorder.unexpected_errors == errors["connection_lost"] + errors["unavailable"], errors
    report = audit_ledger()
    assert report.ok, report.discrepancies


@pytest.mark.postgres
@pytest.mark.redis
def test_a_player_lost_with_a_killed_process_is_seen_gone_by_the_other(servers):
    """The killed process never closes its websockets. Its player does not come back; the other process sees
    the seat marked disconnected (then the grace period and standing up follow as after any disconnect),
    while the player it serves ends up present: if the killed process owned the table, the other takes it
    over once its lease lapses, marks everyone gone and hears again from the socket it holds; if the other
    owned it, it stops counting the sockets of the process that no longer answers its probe."""
    first, second = servers(), servers()
    fixture = prepare(run_id="gone", tables=1, players=2)
    table_id = fixture.table_ids[0]
    crew = Crew(fixture, [first.url, second.url])  # seat 1 on the first process, seat 2 on the second
    crew.bots[0].urls = crew.bots[0].urls[:1]  # seat 1's player tries the first process only

    def seat_marks():
        return dict(Seat.objects.filter(table_id=table_id).values_list("number", "disconnected_at"))

    async def scenario():
        await crew.start()
        await crew.play_rounds(1, timeout=60)
        crew.hold(lambda state: True)
        # Longer than a probe and its wait: a live process's sockets stay counted.
        await asyncio.sleep(2 * presence.PROBE_SECONDS)
        assert await in_a_thread(seat_marks) == {1: None, 2: None}
        first.kill()
        ends = asyncio.get_running_loop().time() + 30
        while not ((marks := await in_a_thread(seat_marks))[1] is not None and marks[2] is None):
            assert asyncio.get_running_loop().time() < ends, f"the seats never settled: {marks}"
            await asyncio.sleep(0.25)
        crew.hold(None)
        await crew.finish()
        return marks

    marks = asyncio.run(scenario())
    assert marks[2] is None  # the second process's player is still there
    assert crew.recorder.errors["connection_lost"] == 1  # seat 1's player, who never got back
    assert crew.recorder.reconnects == 0
    report = audit_ledger()
    assert report.ok, report.discrepancies


@pytest.mark.redis
@pytest.mark.skipif(not PrivateRedis.available(), reason="needs redis-server to run a private Redis")
def test_redis_restart_mid_play_clients_recover(servers):
    redis = PrivateRedis().start()
    try:
        first, second = servers(redis_url=redis.url), servers(redis_url=redis.url)
        fixture = prepare(run_id="redis", tables=1, players=2)
        crew = Crew(fixture, [first.url, second.url])

        async def scenario():
            await crew.start()
            await crew.play_rounds(1, timeout=60)
            restarted_in = crew.bots[0].state["table"]["round_id"]
            redis.stop()  # every group membership and queued message is lost with it
            await asyncio.sleep(1)
            redis.start()
            await crew.play_rounds(ROUNDS_AFTER, timeout=90)
            # One more round: each player is sent the other's moves, through the other process and Redis. The
            # failovers during the outage may have left both on one server: part them first.
            first, second = crew.bots
            if server(first) == server(second):
                moved = crew.recorder.reconnects + 1
                await second.socket.close()  # it reconnects to the next server in its list
                await crew.wait_for(lambda: crew.recorder.reconnects >= moved, 30, "a reconnect")
            assert server(first) != server(second)
            reconnects, since = crew.recorder.reconnects, [len(bot.received) for bot in crew.bots]
            await crew.play_rounds(1, timeout=60)
            for (me, other), start in zip((crew.bots, crew.bots[::-1]), since, strict=True):
                assert heard_from_the_other_process(me, other, start), (me.seat, other.answers)
            assert crew.recorder.reconnects == reconnects
            await crew.finish()
            return restarted_in

        restarted_in = asyncio.run(scenario())
    finally:
        redis.stop()
    # In the rounds after the restart each player still saw the other's bets through the other process.
    for me, other in (crew.bots, crew.bots[::-1]):
        later = {
            state["table"]["round_id"]
            for state in me.states()
            if (state["table"]["round_id"] or 0) > restarted_in
            and state["table"]["seats"][other.seat - 1]["bet"]
        }
        assert len(later) >= ROUNDS_AFTER - 1, (me.seat, later)
    report = audit_ledger()
    assert report.ok, report.discrepancies


def server(bot) -> str:
    return urlsplit(bot.url).netloc


def heard_from_the_other_process(me, other, since: int) -> list[int]:
    """The versions made by `other`'s moves that `me` was sent from its `since`-th message on. Bot `me`
    plays through another server than `other`, so its server learns of those versions only through Redis
    (or by reading the table when `me` reconnects, which the caller rules out)."""
    return [
        message["v"]
        for message in me.received[since:]
        if message.get("type") == "state" and message["v"] in other.answers
    ]


def lock_out(role: str, *, allowed: bool) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER ROLE {role} {'LOGIN' if allowed else 'NOLOGIN'}")
        if not allowed:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role]
            )


def snapshot(table_id: int) -> tuple:
    table = Table.objects.get(pk=table_id)
    balances = sorted(Wallet.objects.values_list("pk", "balance"))
    rnd = Round.objects.get(pk=table.current_round_id)
    return table.version, table.phase, rnd.state, balances


@pytest.mark.postgres
def test_database_outage_refuses_actions_clearly_and_changes_nothing(servers, fault_role):
    server = servers(db_user=fault_role, LIVE_TIMERS="0")  # no deadline may fire while the test looks
    fixture = prepare(run_id="dbdown", tables=1, players=2)
    table_id = fixture.table_ids[0]
    crew = Crew(fixture, [server.url])

    async def scenario():
        await crew.start()
        await crew.play_rounds(1, timeout=60)
        await crew.hold_at(in_play, timeout=30, what="a deal")
        before = await in_a_thread(snapshot, table_id)
        await in_a_thread(lambda: lock_out(fault_role, allowed=False))
        turn = crew.bots[0].state["table"]["turn"]
        actor = next(bot for bot in crew.bots if bot.seat == turn["seat"])
        seen = len(actor.received)
        await actor.socket.send(json.dumps({"action": "stand", "v": actor.state["v"]}))

        def refusals():
            return [m for m in actor.received[seen:] if m.get("type") == "error"]

        await crew.wait_for(refusals, 15, "the refusal")
        after = await in_a_thread(snapshot, table_id)
        await in_a_thread(lambda: lock_out(fault_role, allowed=True))
        crew.hold(None)
        await crew.play_rounds(ROUNDS_AFTER, timeout=60)
        await crew.finish()
        return refusals()[0], before, after

    refusal, before, after = asyncio.run(scenario())
    assert refusal["code"] == "unavailable"
    assert "database" in refusal["message"]
    assert after == before  # nothing applied, nothing half-applied
    report = audit_ledger()
    assert report.ok, report.discrepancies


@pytest.mark.postgres
def test_the_table_clock_survives_a_database_outage(servers, fault_role):
    server = servers(db_user=fault_role)  # with its deadline clock
    fixture = prepare(run_id="clock", tables=1, players=1)
    table_id = fixture.table_ids[0]
    Table.objects.filter(pk=table_id).update(betting_seconds=1, ready_seconds=1)
    crew = Crew(fixture, [server.url])
    crew.hold(lambda state: bool(state["you"]["seats"]))  # sit down, then never act: only the clock moves

    async def scenario():
        await crew.start()
        await in_a_thread(lambda: lock_out(fault_role, allowed=False))
        await asyncio.sleep(3)  # the betting deadline falls due while the clock cannot reach the database
        await in_a_thread(lambda: lock_out(fault_role, allowed=True))
        before = await in_a_thread(lambda: Table.objects.get(pk=table_id).version)
        await crew.wait_for(lambda: crew.bots[0].state["v"] > before, 20, "the clock to apply the deadline")
        await crew.finish()

    asyncio.run(scenario())
    assert "clock: the sweep of blackjack failed" in server.output()  # the outage did reach the clock
    report = audit_ledger()
    assert report.ok, report.discrepancies


@pytest.mark.redis
def test_sigterm_during_play_stops_the_server_promptly(servers):
    """An orderly stop (SIGTERM, as a rolling restart sends it) ends the process even while actions are being
    committed: a broadcast after the event loop has stopped must not wait for that loop forever."""
    server = servers()
    fixture = prepare(run_id="sigterm", tables=3, players=5)
    crew = Crew(fixture, [server.url])

    async def scenario():
        await crew.start()
        await crew.play_rounds(1, timeout=60)
        server.process.terminate()
        exited = await asyncio.to_thread(_exited_within, server.process, 20)
        await crew.finish(drain=0)
        return exited

    exited = asyncio.run(scenario())
    assert exited, "the server was still running 20 s after SIGTERM"


def _exited_within(process, seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True
