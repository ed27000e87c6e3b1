"""Chips that move outside a table (the daily grant, a staff adjustment) reach every open page of that player
at once: each of their sockets pushes the balance read afresh (`accounts.sockets.tell_balance`,
`_Consumer.balance_changed`), as `{"type": "balance", ...}` in JSON and as out-of-band fragments in HTML.
Other users' sockets hear nothing, and a refused movement sends nothing."""

import asyncio
import re

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from accounts import services as accounts_services
from accounts.models import Wallet
from accounts.sockets import BALANCE_CHANGED, user_group
from tests.blackjack.wsclient import CommunicatorClient, assert_oob_fragment, session_cookie, top_level

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

QUIET = 0.4


@pytest.fixture
def staff(make_user):
    return make_user("pitboss", is_staff=True)


@pytest.fixture
def poor_alice(alice, staff):
    """Alice at 400 chips: under the daily grant's floor (1,000), so she may claim it."""
    accounts_services.adjust(user=alice, amount=400 - alice.wallet.balance, staff=staff, reason="test setup")
    return alice


def paths(table) -> dict[str, str]:
    return {
        "table-json": f"/ws/tables/{table.pk}/?format=json",
        "table-html": f"/ws/tables/{table.pk}/",
        "lobby-json": "/ws/lobby/?format=json",
        "lobby-html": "/ws/lobby/",
    }


async def open_sockets(user, table) -> dict[str, CommunicatorClient]:
    cookie = await database_sync_to_async(session_cookie)(user)
    clients = {}
    for kind, path in paths(table).items():
        client = CommunicatorClient(f"{user.username}-{kind}", path, cookie=cookie)
        assert await client.connect()
        await client.receive()
        clients[kind] = client
    await drain_all(clients)
    return clients


async def drain(client: CommunicatorClient) -> list:
    """Every message the client receives until the connection is quiet for QUIET seconds."""
    received = []
    while not await client.communicator.receive_nothing(QUIET, interval=0.01):
        received.append(await client.receive())
    return received


async def drain_all(clients: dict[str, CommunicatorClient]) -> dict[str, list]:
    """`drain` of every client, all at once (the quiet spells overlap): what each received, by name."""
    received = await asyncio.gather(*(drain(client) for client in clients.values()))
    return dict(zip(clients, received, strict=True))


def is_balance_message(message) -> bool:
    if isinstance(message, dict):
        return message.get("type") == "balance"
    # A table view carries the header's balance too, but always with the whole status strip.
    return 'id="nav-balance"' in message and 'id="table-status"' not in message


async def balance_shown(client: CommunicatorClient) -> int:
    """Wait for the client's next balance message: the balance it shows (the same in every place)."""
    while True:
        message = await client.receive()
        if is_balance_message(message):
            break
    if client.json_format:
        assert set(message) == {"type", "balance"}, message
        return message["balance"]
    assert_oob_fragment(message)
    ids = [attrs["id"] for _, attrs in top_level(message)]
    shown = {
        element_id: figure.replace(",", "")
        for element_id, figure in re.findall(r'<\w+ id="([\w-]+)"[^>]*>([\d,]+)</\w+>', message)
    }
    data = re.search(r'data-balance="(\d+)"', message).group(1)
    if "table" in client.name:
        assert ids == ["nav-balance", "your-chips"], message
    else:
        assert ids == ["nav-balance"], message
    assert set(shown) == set(ids), message
    assert len({data, *shown.values()}) == 1, message
    return int(data)


async def close_all(*groups: dict[str, CommunicatorClient]) -> None:
    for clients in groups:
        for client in clients.values():
            await client.close()


async def test_the_daily_grant_reaches_every_open_page_of_the_player_only(table, poor_alice, bob):
    mine = await open_sockets(poor_alice, table)
    bobs = await open_sockets(bob, table)

    await database_sync_to_async(accounts_services.claim_daily_grant)(user=poor_alice)

    for client in mine.values():
        assert await balance_shown(client) == 1_000, client.name
    for name, messages in (await drain_all(bobs)).items():
        assert not any(is_balance_message(message) for message in messages), name
    await close_all(mine, bobs)


async def test_a_staff_adjustment_reaches_every_open_page_of_the_player_only(table, alice, bob, staff):
    mine = await open_sockets(alice, table)
    bobs = await open_sockets(bob, table)

    await database_sync_to_async(accounts_services.adjust)(
        user=alice, amount=-2_345, staff=staff, reason="fix"
    )

    for client in mine.values():
        assert await balance_shown(client) == 7_655, client.name
    for name, messages in (await drain_all(bobs)).items():
        assert not any(is_balance_message(message) for message in messages), name
    await close_all(mine, bobs)


async def test_a_refused_adjustment_or_grant_sends_nothing(table, alice, staff):
    mine = await open_sockets(alice, table)

    with pytest.raises(accounts_services.InsufficientChips):
        await database_sync_to_async(accounts_services.adjust)(
            user=alice, amount=-20_000, staff=staff, reason="too much"
        )
    with pytest.raises(accounts_services.DailyGrantRefused):
        await database_sync_to_async(accounts_services.claim_daily_grant)(user=alice)

    for name, messages in (await drain_all(mine)).items():
        assert not any(is_balance_message(message) for message in messages), name
    await close_all(mine)


async def test_the_balance_sent_is_read_from_the_database_not_the_message(table, alice):
    mine = await open_sockets(alice, table)
    await database_sync_to_async(Wallet.objects.filter(user=alice).update)(balance=4_321)

    await get_channel_layer().group_send(user_group(alice.pk), {"type": BALANCE_CHANGED, "balance": 99})

    for client in mine.values():
        assert await balance_shown(client) == 4_321, client.name
    await close_all(mine)
