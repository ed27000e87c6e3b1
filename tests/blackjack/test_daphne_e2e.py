"""Through a real Daphne server and real websockets (the `websockets` library): two players play a round to
settlement while a spectator watches, foreign origins are refused, and a deadline with nobody connected is
enforced by the server's own clock within 2 seconds."""

import time

import pytest
from channels.db import database_sync_to_async
from websockets.exceptions import InvalidStatus

from accounts.audit import audit_ledger
from blackjack.models import Table, TableEvent
from tests.blackjack.wsclient import SocketClient, move, play_until, session_cookie
from tests.daphne_server import start_daphne

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def ws_url(live_site: str, path: str) -> str:
    return live_site.replace("http://", "ws://", 1) + path


async def connect(live_site, path, user=None, name=None):
    cookie = await database_sync_to_async(session_cookie)(user) if user is not None else None
    client = SocketClient(
        name or getattr(user, "username", "spectator"), ws_url(live_site, path), cookie=cookie
    )
    client.origin = live_site
    await client.connect()
    await client.receive()
    return client


async def test_two_players_and_a_spectator_through_daphne(live_site, make_table, alice, bob):
    table = await database_sync_to_async(make_table)()
    path = f"/ws/tables/{table.pk}/?format=json"
    a = await connect(live_site, path, alice)
    b = await connect(live_site, path, bob)
    watcher = await connect(live_site, path, name="spectator")
    try:
        await move(a, "sit", seat=1, others=[b, watcher])
        await move(b, "sit", seat=2, others=[a, watcher])
        assert watcher.state["you"]["is_spectator"] is True
        assert [seat["player"] for seat in watcher.state["table"]["seats"][:2]] == ["alice", "bob"]

        await watcher.act("hit")
        assert (await watcher.error())["code"] == "not_authenticated"

        settled = await play_until([a, b], rounds=1)
        final = await watcher.until_version(settled[0]["v"])
        assert final["table"]["phase"] == "settled"
        assert final["table"]["round_id"] == settled[0]["table"]["round_id"]
        assert final["table"]["dealer"]["hole_hidden"] is False
        for seat in final["table"]["seats"][:2]:
            assert all(hand["result"] for hand in seat["hands"])
        report = await database_sync_to_async(audit_ledger)()
        assert report.ok, report.discrepancies
    finally:
        for client in (a, b, watcher):
            await client.close()


async def test_foreign_origin_is_refused_by_the_server(live_site, table):
    client = SocketClient("evil", ws_url(live_site, f"/ws/tables/{table.pk}/?format=json"))
    client.origin = "http://evil.example"
    with pytest.raises(InvalidStatus) as refused:
        await client.connect()
    assert refused.value.response.status_code == 403


async def test_lobby_through_daphne(live_site, table):
    lobby = SocketClient("lobby", ws_url(live_site, "/ws/lobby/?format=json"))
    lobby.origin = live_site
    await lobby.connect()
    message = await lobby.receive()
    await lobby.close()
    assert message["type"] == "lobby"
    assert table.pk in [row["id"] for row in message["tables"]]


# --- the deadline clock of a real server -----------------------------------------------------------------


@pytest.fixture
def clocked_site(transactional_db):
    """A second Daphne server on the test database whose deadline clock runs (live_site's does not)."""
    process = start_daphne(clock=True)
    yield f"http://127.0.0.1:{process.port.value}"
    process.terminate()
    process.join(timeout=10)


def _table_moment(table_id: int):
    return Table.objects.values_list("version", "deadline", "phase").get(pk=table_id)


def _deadline_lags(table_id: int, windows: int) -> list[tuple[str, float]]:
    """Wait for `windows` consecutive deadlines of the table to be applied; (phase, seconds late) of each."""
    lags = []
    version, deadline, phase = _table_moment(table_id)
    give_up = time.monotonic() + 60
    while len(lags) < windows and time.monotonic() < give_up:
        time.sleep(0.05)
        now_version, now_deadline, now_phase = _table_moment(table_id)
        if now_version != version:
            assert deadline is not None, "the table changed without a deadline"
            lags.append((phase, (_now() - deadline).total_seconds()))
            version, deadline, phase = now_version, now_deadline, now_phase
    return lags


def _now():
    from django.utils import timezone

    return timezone.now()


@pytest.mark.slow
async def test_deadlines_with_nobody_connected_are_enforced_by_the_server_clock(
    clocked_site, make_table, alice, act
):
    # One-second windows; Alice sits and bets through the services and never connects.
    table = await database_sync_to_async(make_table)(
        betting_seconds=1, insurance_seconds=1, turn_seconds=1, ready_seconds=1
    )
    await database_sync_to_async(act)(table, alice, "sit", seat=1)
    await database_sync_to_async(act)(table, alice, "bet", amount=10)
    lags = await database_sync_to_async(_deadline_lags)(table.pk, 4)
    assert len(lags) == 4, f"only {len(lags)} deadline(s) applied in a minute: {lags}"
    # Each lag is measured when this test's polling sees the change, so it includes the test's own delays on
    # a busy machine: the bound is the product's (a timer, or the sweep every second) plus that margin.
    for phase, lag in lags:
        assert lag <= 5.0, f"the {phase} deadline was applied {lag:.2f} s late"
    timeouts = await database_sync_to_async(
        TableEvent.objects.filter(table=table, kind=TableEvent.Kind.TIMEOUT).count
    )()
    assert timeouts >= 1
    print(f"deadline lags (s): {[round(lag, 2) for _, lag in lags]}")
