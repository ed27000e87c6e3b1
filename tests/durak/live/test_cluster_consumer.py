"""The Durak socket is a `live.consumer.LiveConsumer`, as the blackjack table's is: the end of its session
closes it, and chips moved outside the table push the balance to it."""

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from accounts.sockets import BALANCE_CHANGED, MESSAGE_TYPE, SESSION_ENDED, current_balance, user_group
from tests.blackjack.wsclient import CommunicatorClient, session_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def joined(table, user) -> CommunicatorClient:
    cookie = await database_sync_to_async(session_cookie)(user)
    client = CommunicatorClient(user.username, f"/ws/durak/{table.pk}/?format=json", cookie=cookie)
    assert await client.connect()
    await client.receive()
    return client


async def test_the_end_of_the_session_closes_the_durak_socket(open_durak, alice):
    table = await database_sync_to_async(open_durak)()
    client = await joined(table, alice)
    await get_channel_layer().group_send(user_group(alice.pk), {"type": MESSAGE_TYPE})
    assert await client.closed_with() == SESSION_ENDED


async def test_a_balance_moved_elsewhere_is_pushed_to_the_durak_socket(open_durak, alice):
    table = await database_sync_to_async(open_durak)()
    client = await joined(table, alice)
    await get_channel_layer().group_send(user_group(alice.pk), {"type": BALANCE_CHANGED})
    pushed = await client.next_of("balance")
    assert pushed["balance"] == await database_sync_to_async(current_balance)(alice.pk)
    await client.close()
