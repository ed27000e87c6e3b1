"""Frames too large for the server, over a real Daphne started as scripts/run-cluster.sh starts it."""

import asyncio
import json

import pytest

from live.consumer import FRAME_TOO_LARGE
from tests.scale.play import Crew
from tools.loadtest.fixtures import prepare


@pytest.mark.slow
def test_a_huge_frame_closes_only_that_connection(servers):
    """A frame over 16 KiB is refused as `bad_message` and ends the sender's connection with a clean close
    (4009, message too big); one between 4 and 16 KiB is refused and the connection stays. The table plays
    on."""
    server = servers()
    fixture = prepare(run_id="huge", tables=1, players=2)
    crew = Crew(fixture, [server.url])

    async def scenario():
        await crew.start()
        await crew.play_rounds(1, timeout=60)
        hostile = crew.bots[0]
        hostile.hold = lambda state: True  # the hostile bot only sends what the test sends
        seen = len(hostile.received)
        await hostile.socket.send(json.dumps({"action": "chat", "text": "x" * 5000, "v": 0}))

        def refusals():
            return [m for m in hostile.received[seen:] if m.get("type") == "error"]

        await crew.wait_for(refusals, 10, "the refusal")
        refusal = refusals()[0]
        socket = hostile.socket
        await socket.send(json.dumps({"action": "chat", "text": "x" * 40_000, "v": 0}))
        await crew.wait_for(lambda: socket.close_code is not None, 10, "the close")
        crew.hold(None)
        await crew.play_rounds(1, timeout=60)  # play goes on (the closed bot reconnected)
        await crew.finish()
        return refusal, socket.close_code

    refusal, close_code = asyncio.run(scenario())
    assert refusal["code"] == "bad_message"
    assert close_code == FRAME_TOO_LARGE
