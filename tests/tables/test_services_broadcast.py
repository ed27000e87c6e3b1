"""Broadcasts reach the server's event loop from any thread (the clock, `sync_to_async` workers), carry only
"table N is at version v". (That a refused change sends nothing is tested in test_clock.py.)"""

import asyncio
import json
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from tables import broadcast, fanout
from tables.consumers import TableConsumer
from tables.models import Table
from tables.viewmodel import cached_viewer_view, forget_shared_views
from tests.tables.listener import Listener
from tests.threads import in_a_thread


@pytest.fixture
def in_memory_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield get_channel_layer()
    channel_layers.backends.clear()


async def listening(group: str) -> Listener:
    """A listener in `group`, with this test's loop registered for the broadcasts."""
    listener = Listener()
    await fanout.join(group, listener)
    broadcast.register_loop(asyncio.get_running_loop())
    return listener


@pytest.mark.asyncio
async def test_a_send_from_a_foreign_thread_reaches_the_registered_loop(in_memory_layer):
    channel = await listening("table-7")
    thread = threading.Thread(target=broadcast.send, args=("table-7", {"type": "table.changed", "v": 3}))
    thread.start()
    message = await channel.receive()
    thread.join()
    assert message == {"type": "table.changed", "v": 3}


@pytest.mark.asyncio
async def test_a_send_from_a_sync_to_async_worker_reaches_the_loop(in_memory_layer):
    channel = await listening("lobby")
    await sync_to_async(broadcast.send)("lobby", {"type": "lobby.changed"})
    assert await channel.receive() == {"type": "lobby.changed"}


@pytest.mark.asyncio
async def test_the_lobby_is_told_at_once_then_at_most_once_an_interval(in_memory_layer, monkeypatch):
    monkeypatch.setattr(broadcast, "LOBBY_SECONDS", 0.3)
    loop = asyncio.get_running_loop()
    channel = await listening("lobby")
    told = []

    async def receive_all(until: float) -> None:
        while (left := until - loop.time()) > 0:
            try:
                await asyncio.wait_for(channel.receive(), left)
            except TimeoutError:
                return
            told.append(loop.time())

    start = loop.time()
    broadcast.send("lobby", {"type": "lobby.changed"})  # after a quiet spell: at once
    await receive_all(start + 0.1)
    assert len(told) == 1
    for _ in range(5):  # within the interval: one announcement at its end, for all five
        broadcast.send("lobby", {"type": "lobby.changed"})
        await asyncio.sleep(0.01)
    await receive_all(start + 0.6)
    assert len(told) == 2
    assert told[1] - told[0] >= 0.29
    await asyncio.sleep(0.4)  # quiet again: the next change goes at once
    sent = loop.time()
    await sync_to_async(broadcast.send)("lobby", {"type": "lobby.changed"})
    await receive_all(sent + 0.1)
    assert len(told) == 3


def test_without_a_running_loop_an_in_memory_send_is_dropped_quietly(in_memory_layer, caplog):
    loop = asyncio.new_event_loop()
    broadcast.register_loop(loop)  # registered, but not running (a finished test's loop, a stopped server)
    loop.close()
    broadcast.send("table-1", {"type": "table.changed", "v": 1})  # nobody can be listening
    assert not [record for record in caplog.records if record.name == "tables.broadcast"]


@pytest.mark.asyncio
async def test_held_sends_go_out_in_order_when_the_block_ends(in_memory_layer):
    channel = await listening("table-7")
    inside, release = threading.Event(), threading.Event()

    def work():
        with broadcast.held():
            broadcast.send("table-7", {"type": "table.changed", "v": 1})
            with broadcast.held():  # nested: held until the outer block ends
                broadcast.send("table-7", {"type": "table.changed", "v": 2})
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=work)
    thread.start()
    await asyncio.to_thread(inside.wait, 5)
    with pytest.raises(TimeoutError):
        await channel.receive(timeout=0.2)  # held: nothing sent yet
    release.set()
    received = [await channel.receive() for _ in range(2)]
    await asyncio.to_thread(thread.join)
    assert [message["v"] for message in received] == [1, 2]


@pytest.mark.asyncio
async def test_held_sends_go_out_even_when_the_block_fails(in_memory_layer):
    channel = await listening("lobby")

    def fail():
        with broadcast.held():
            broadcast.send("lobby", {"type": "lobby.changed"})
            raise RuntimeError("the view could not be built")

    with pytest.raises(RuntimeError):
        await asyncio.to_thread(fail)
    assert await channel.receive() == {"type": "lobby.changed"}
    # Only that block held: a later send goes straight out.
    await asyncio.to_thread(broadcast.send, "lobby", {"type": "lobby.changed", "n": 2})
    assert await channel.receive() == {"type": "lobby.changed", "n": 2}


@pytest.mark.django_db(transaction=True)
def test_an_action_is_announced_only_once_the_other_viewers_find_it_kept(table, alice, bob, act, monkeypatch):
    """The acting connection builds its view of the new version before the version is announced, so the other
    players' connections, told of it, build theirs without the database (no trip to the database thread)."""
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    announced = []

    def record(group, message):
        if message["type"] == "table.changed":
            kept = cached_viewer_view(table_id=table.pk, user=bob, version=message["v"])
            announced.append((message["v"], kept is not None))

    monkeypatch.setattr(broadcast, "_send_now", record)
    consumer = TableConsumer()
    consumer.table_id, consumer.user, consumer.json_format = table.pk, alice, True
    version = Table.objects.values_list("version", flat=True).get(pk=table.pk)
    built, text = consumer._perform({"action": "bet", "amount": 100, "v": version})
    assert json.loads(text)["v"] == built
    assert announced == [(built, True)]


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_viewers_told_of_a_version_none_has_read_share_one_read(table, alice, bob, act, monkeypatch):
    """An action made through another process: none of this process's viewers find the version kept. The first
    reads it; the others wait for that read and build their views from what it kept."""
    await asyncio.to_thread(act, table, alice, "sit", seat=1)
    await asyncio.to_thread(act, table, bob, "sit", seat=2)
    version = await Table.objects.values_list("version", flat=True).aget(pk=table.pk)
    forget_shared_views()
    reads = []
    build = TableConsumer._build

    def counted_build(self, error, version):
        reads.append(self.user.username)
        return build(self, error, version)

    monkeypatch.setattr(TableConsumer, "_build", counted_build)
    received = {}
    viewers = []
    for user in (alice, bob, alice):
        viewer = TableConsumer()
        viewer.table_id, viewer.user, viewer.json_format, viewer.sent_version = table.pk, user, True, -1

        async def send(text_data, viewer=viewer):
            received[viewer] = json.loads(text_data)

        viewer.send = send
        viewers.append(viewer)
    await asyncio.gather(*(viewer.send_view(version=version) for viewer in viewers))
    assert len(reads) == 1
    assert [received[viewer]["v"] for viewer in viewers] == [version] * 3
    assert [received[viewer]["you"]["seats"] for viewer in viewers] == [[1], [2], [1]]


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_after_the_relay_rejoins_a_viewer_catches_up_on_what_it_missed(table, alice, bob, act):
    """Redis was away and the other processes' broadcasts were lost: told `fanout.rejoined`, a viewer gets
    the current version if it has an older one, and nothing if it is up to date."""
    await in_a_thread(act, table, alice, "sit", seat=1)
    viewer = TableConsumer()
    viewer.table_id, viewer.user, viewer.json_format, viewer.sent_version = table.pk, alice, True, -1
    received = []

    async def send(text_data):
        received.append(json.loads(text_data))

    viewer.send = send
    await viewer.dispatch(fanout.REJOINED)
    version = await Table.objects.values_list("version", flat=True).aget(pk=table.pk)
    assert [message["v"] for message in received] == [version]
    await in_a_thread(act, table, bob, "sit", seat=2)  # its broadcast lost on the way
    await viewer.dispatch(fanout.REJOINED)
    await viewer.dispatch(fanout.REJOINED)
    assert [message["v"] for message in received] == [version, version + 1]


@pytest.mark.asyncio
async def test_a_send_from_synchronous_code_inside_a_running_loop_still_reaches_the_other_processes(
    monkeypatch,
):
    """No server loop registered, and the caller runs inside an event loop of its own (a tool driving the
    services from asyncio; Playwright's loop in the browser tests), where `async_to_sync` refuses: the other
    processes are told all the same."""
    sent = []

    async def publish_elsewhere(group, message):
        sent.append((group, message))

    monkeypatch.setattr(broadcast, "get_channel_layer", lambda: object())  # any layer but the in-memory one
    monkeypatch.setattr(broadcast, "_loop", None)
    monkeypatch.setattr(fanout, "publish_elsewhere", publish_elsewhere)
    broadcast.send("lobby", {"type": "lobby.changed"})  # synchronous, on this test's running loop
    assert sent == [("lobby", {"type": "lobby.changed"})]
