"""Rounds played to settlement through the JSON protocol only: on every rule preset, and with every action.

Players follow the view they are sent: its `allowed_by_seat` says what they may do and its `hint` (basic
strategy) what they do, so these tests also check that the view offers exactly what the server accepts.
"""

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async

from accounts.audit import audit_ledger
from blackjack.engine.rules import PRESETS
from blackjack.models import Round
from tests.blackjack.conftest import deal_cards
from tests.blackjack.wsclient import CommunicatorClient, move, play_until, session_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest_asyncio.fixture
async def players():
    """`await players(table, *users)`: one JSON client per user, connected, each with its first state."""
    opened = []

    async def connect(table, *users):
        clients = []
        for user in users:
            cookie = await database_sync_to_async(session_cookie)(user)
            client = CommunicatorClient(user.username, f"/ws/tables/{table.pk}/?format=json", cookie=cookie)
            assert await client.connect()
            await client.receive()
            opened.append(client)
            clients.append(client)
        return clients

    yield connect
    for client in opened:
        await client.close()


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.slow
async def test_two_players_play_rounds_on_every_preset(preset, make_table, alice, bob, players, balance):
    table = await database_sync_to_async(make_table)(preset)
    a, b = await players(table, alice, bob)
    await move(a, "sit", seat=1, others=[b])
    await move(b, "sit", seat=2, others=[a])
    await move(b, "sit", seat=3, others=[a])  # Bob plays two seats
    results = await play_until([a, b], rounds=4)

    for state in results:
        seats = state["table"]["seats"]
        assert all(hand["result"] is not None for seat in seats[:3] for hand in seat["hands"])
        assert state["table"]["dealer"]["hole_hidden"] is False
    assert a.state["you"]["balance"] == await database_sync_to_async(balance)(alice)
    assert b.state["you"]["balance"] == await database_sync_to_async(balance)(bob)
    settled = await database_sync_to_async(
        Round.objects.filter(table=table, settled_at__isnull=False).count
    )()
    assert settled >= 4
    report = await database_sync_to_async(audit_ledger)()
    assert report.ok, report.discrepancies
    assert report.total == 0


async def test_insurance_even_money_surrender_split_and_double(
    table, alice, bob, players, scripted_shoe, balance
):
    # Round 1: dealer A up. Alice (T 9) insures; Bob (A K, blackjack) takes even money. Dealer A 9: no
    # blackjack. Alice stands on 19 and loses the insurance; the dealer has 20.
    # Round 2: dealer T up. Alice (T 6) surrenders; Bob (8 8) splits, doubles the first hand (8 3 + T) and
    # stands on the second (8 7).
    scripted_shoe(
        table,
        deal_cards(["Ts", "9h"], ["As", "Kd"], dealer=["Ah", "9c"])
        + deal_cards(["Tc", "6h"], ["8c", "8d"], dealer=["Td", "7h"], then=["3s", "Th", "7s"]),
    )
    a, b = await players(table, alice, bob)
    await move(a, "sit", seat=1, others=[b])
    await move(b, "sit", seat=2, others=[a])
    await move(a, "bet", amount=100, others=[b])
    state = await move(b, "bet", amount=100, others=[a])
    assert state["table"]["phase"] == "insurance"
    assert a.state["you"]["allowed_by_seat"] == {"1": ["insurance"]}
    assert b.state["you"]["allowed_by_seat"] == {"2": ["even_money"]}
    await move(a, "insurance", accept=True, others=[b])
    state = await move(b, "even_money", accept=True, others=[a])
    assert state["table"]["phase"] == "playing"
    assert state["table"]["seats"][0]["insurance"] == 50
    await move(a, "stand", others=[b])
    final = a.state["table"]
    assert final["phase"] == "settled"
    assert final["dealer"]["cards"] == ["Ah", "9c"]
    assert [final["seats"][0]["hands"][0]["result"], final["seats"][1]["hands"][0]["result"]] == [
        "lose",
        "win",
    ]
    assert await database_sync_to_async(balance)(alice) == 10_000 - 100 - 50
    assert await database_sync_to_async(balance)(bob) == 10_000 + 100

    await move(a, "ready", others=[b])
    state = await move(b, "ready", others=[a])
    assert state["table"]["phase"] == "betting"
    await move(a, "bet", amount=100, others=[b])
    await move(b, "bet", amount=50, others=[a])
    assert "surrender" in a.state["you"]["allowed"]
    await move(a, "surrender", others=[b])
    await move(b, "split", others=[a])
    await move(b, "double", seat=2, hand=0, others=[a])
    state = await move(b, "stand", seat=2, hand=1, others=[a])
    table_view = state["table"]
    assert table_view["phase"] == "settled"
    assert table_view["seats"][0]["hands"][0]["result"] == "surrender"
    assert [hand["result"] for hand in table_view["seats"][1]["hands"]] == ["win", "lose"]
    assert [hand["bet"] for hand in table_view["seats"][1]["hands"]] == [100, 50]
    assert await database_sync_to_async(balance)(alice) == 10_000 - 150 - 50
    assert await database_sync_to_async(balance)(bob) == 10_000 + 100 + 100 - 50
    report = await database_sync_to_async(audit_ledger)()
    assert report.ok, report.discrepancies


async def test_leaving_during_your_own_turn_stands_your_hand_at_once(
    table, alice, bob, players, scripted_shoe
):
    # Alice (T 7) leaves on her turn: her hand stands at once and the turn passes to Bob (T 9), without
    # waiting for her clock; her seat is freed once the round is over.
    scripted_shoe(table, deal_cards(["Ts", "7h"], ["Tc", "9h"], dealer=["7c", "Kd"]))
    a, b = await players(table, alice, bob)
    await move(a, "sit", seat=1, others=[b])
    await move(b, "sit", seat=2, others=[a])
    await move(a, "bet", amount=100, others=[b])
    state = await move(b, "bet", amount=100, others=[a])
    assert state["table"]["turn"] == {"seat": 1, "hand": 0}
    state = await move(a, "leave", others=[b])
    seat = state["table"]["seats"][0]
    assert seat["hands"][0]["status"] == "stood"
    assert seat["leaving"] is True
    assert state["table"]["turn"] == {"seat": 2, "hand": 0}
    assert b.state["you"]["allowed_by_seat"]["2"][:2] == ["hit", "stand"]
    state = await move(b, "stand", others=[a])
    assert state["table"]["phase"] == "settled"
    assert state["table"]["seats"][0]["player"] is None
    assert [hand["result"] for hand in state["table"]["seats"][1]["hands"]] == ["win"]
    report = await database_sync_to_async(audit_ledger)()
    assert report.ok, report.discrepancies
