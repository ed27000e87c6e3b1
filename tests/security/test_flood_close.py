"""A flooder is closed with a code Daphne sends (4008; 1008 raised inside Daphne, the client got 1011 and the
consumer's clean-up never ran), and the clean-up runs: the player counts as gone and enters the grace period
like anyone who leaves."""

import asyncio
import time

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from blackjack.models import Seat
from live.consumer import POLICY_VIOLATION
from tests.blackjack.wsclient import session_cookie


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_a_flooder_is_closed_cleanly_and_its_clean_up_runs(servers, table, alice, act):
    act(table, alice, "sit", seat=1)
    server = servers()
    cookie = session_cookie(alice)

    async def flood() -> int:
        socket = await connect(
            server.ws(f"/ws/tables/{table.pk}/?format=json"),
            additional_headers={"Cookie": f"sessionid={cookie}"},
            origin=server.url,
        )
        await socket.recv()
        try:
            for _ in range(100):
                await socket.send("{}")
            while True:
                await asyncio.wait_for(socket.recv(), 10)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd is not None else 1006

    assert asyncio.run(flood()) == POLICY_VIOLATION
    ends = time.monotonic() + 10
    seat = Seat.objects.filter(table=table, number=1)
    while seat.get().disconnected_at is None and time.monotonic() < ends:
        time.sleep(0.1)
    assert seat.get().disconnected_at is not None  # her socket closing was counted: the grace period runs
    assert "Traceback" not in server.output()
