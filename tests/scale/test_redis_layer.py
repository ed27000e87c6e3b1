"""The Redis channel layer as the servers configure it (settings.CHANNEL_LAYERS with REDIS_URL).

Regression: redis-py 8 reads with a 5-second socket timeout by default, shorter than channels-redis's blocking
pop, so every consumer idle for 5 seconds crashed ("Timeout reading from ...") and its websocket closed.
"""

import asyncio

import pytest
from channels.layers import get_channel_layer

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


async def test_an_idle_consumer_keeps_waiting_then_receives():
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add("scale-idle", channel)
    try:
        # Idle for longer than redis-py's default read timeout: still waiting, no error from the layer.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(layer.receive(channel), timeout=6.5)
        await layer.group_send("scale-idle", {"type": "table.changed", "v": 7})
        message = await asyncio.wait_for(layer.receive(channel), timeout=5)
        assert message == {"type": "table.changed", "v": 7}
    finally:
        await layer.group_discard("scale-idle", channel)
