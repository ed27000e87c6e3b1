"""Broadcasts reach the server's event loop from any thread (the clock, `sync_to_async` workers), carry only
"table N is at version v". (That a refused change sends nothing is tested in test_clock.py.)"""

import asyncio
import threading

import pytest
from channels.layers import get_channel_layer

from tables import broadcast


@pytest.fixture
def in_memory_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield get_channel_layer()
    channel_layers.backends.clear()


@pytest.mark.asyncio
async def test_a_send_from_a_foreign_thread_reaches_the_registered_loop(in_memory_layer):
    layer = in_memory_layer
    channel = await layer.new_channel()
    await layer.group_add("table-7", channel)
    broadcast.register_loop(asyncio.get_running_loop())
    thread = threading.Thread(target=broadcast.send, args=("table-7", {"type": "table.changed", "v": 3}))
    thread.start()
    message = await asyncio.wait_for(layer.receive(channel), timeout=2)
    thread.join()
    assert message == {"type": "table.changed", "v": 3}


@pytest.mark.asyncio
async def test_a_send_from_a_sync_to_async_worker_reaches_the_loop(in_memory_layer):
    from asgiref.sync import sync_to_async

    layer = in_memory_layer
    channel = await layer.new_channel()
    await layer.group_add("lobby", channel)
    broadcast.register_loop(asyncio.get_running_loop())
    await sync_to_async(broadcast.send)("lobby", {"type": "lobby.changed"})
    assert await asyncio.wait_for(layer.receive(channel), timeout=2) == {"type": "lobby.changed"}


def test_without_a_running_loop_an_in_memory_send_is_dropped_quietly(in_memory_layer, caplog):
    loop = asyncio.new_event_loop()
    broadcast.register_loop(loop)  # registered, but not running (a finished test's loop, a stopped server)
    loop.close()
    broadcast.send("table-1", {"type": "table.changed", "v": 1})  # nobody can be listening
    assert not [record for record in caplog.records if record.name == "tables.broadcast"]
