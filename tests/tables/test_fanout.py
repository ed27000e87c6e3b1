"""Broadcast fan-out (tables.fanout): listeners of this process are handed a message directly; other
processes get one channel-layer message each, through their relay, and a relay never hands a process its
own messages twice. The Redis tests stand two processes' registries side by side on one event loop."""

import asyncio

import pytest
import pytest_asyncio
from channels.layers import InMemoryChannelLayer

from tables import fanout
from tables.fanout import Fanout, Mailbox
from tests.tables.listener import Listener, two_processes


@pytest.mark.asyncio
async def test_in_one_process_a_message_reaches_the_groups_listeners_without_the_layer():
    layer = InMemoryChannelLayer()
    here = Fanout(layer)
    seven, also_seven, eight = Listener(), Listener(), Listener()
    await here.join("table-7", seven)
    await here.join("table-7", also_seven)
    await here.join("table-8", eight)
    await here.publish("table-7", {"type": "table.changed", "v": 3})
    assert await seven.receive() == {"type": "table.changed", "v": 3}
    assert await also_seven.receive() == {"type": "table.changed", "v": 3}
    assert await eight.nothing_more()
    assert not layer.groups  # the layer was not used at all
    assert not layer.channels
    await here.leave("table-7", seven)
    await here.publish("table-7", {"type": "table.changed", "v": 4})
    assert await also_seven.receive() == {"type": "table.changed", "v": 4}
    assert await seven.nothing_more()
    assert set(here.groups) == {"table-7", "table-8"}
    await here.leave("table-7", also_seven)
    assert set(here.groups) == {"table-8"}


@pytest.mark.asyncio
async def test_a_mailbox_handles_its_messages_in_order_one_at_a_time_once_started():
    handled, running = [], []

    async def handle(message):
        running.append(message["n"])
        assert len(running) == 1  # never two at once
        await asyncio.sleep(0.01)
        handled.append(message["n"])
        running.remove(message["n"])

    mailbox = Mailbox(handle)
    for n in range(5):
        mailbox.deliver({"type": "x", "n": n})
    await asyncio.sleep(0.05)
    assert handled == []  # not started: the consumer is still sending its first state
    mailbox.start()
    await asyncio.sleep(0.2)
    assert handled == [0, 1, 2, 3, 4]
    mailbox.close()


@pytest.mark.asyncio
async def test_a_mailbox_whose_handler_fails_reports_it_and_stops(caplog):
    failed = asyncio.Event()
    handled = []

    async def handle(message):
        if message["n"] == 1:
            raise RuntimeError("the database is down")
        handled.append(message["n"])

    async def on_failure():
        failed.set()

    mailbox = Mailbox(handle, failed=on_failure)
    mailbox.start()
    for n in range(3):
        mailbox.deliver({"type": "x", "n": n})
    await asyncio.wait_for(failed.wait(), timeout=2)
    await asyncio.sleep(0.05)
    assert handled == [0]  # nothing after the failure: the consumer closes
    assert "could not be handled" in caplog.text
    mailbox.close()


@pytest.mark.asyncio
async def test_each_loop_has_its_own_registry():
    assert fanout.here() is fanout.here()
    other = await asyncio.to_thread(lambda: asyncio.run(_registry_of_a_new_loop()))
    assert other is not fanout.here()


async def _registry_of_a_new_loop():
    return fanout.here()


class FlakyLayer:
    """A Redis-like layer (not the in-memory one) that goes away once: the first receive fails, and the next
    `refused` joins fail too (Redis not back yet, or a pooled connection it closed)."""

    def __init__(self, refused: int = 0):
        self.added: list[str] = []
        self.failed = False
        self.refused = refused
        self.quiet = asyncio.Event()

    async def new_channel(self):
        return "specific.relay!1"

    async def group_add(self, group, channel):
        if self.failed and self.refused:
            self.refused -= 1
            raise ConnectionError("Connection closed by server.")
        self.added.append(group)

    async def group_discard(self, group, channel):
        pass

    async def receive(self, channel):
        if not self.failed:
            self.failed = True
            raise ConnectionError("Redis went away")
        await self.quiet.wait()  # nothing more arrives


@pytest.mark.asyncio
@pytest.mark.parametrize("refused", [0, 3])
async def test_a_relay_whose_receive_fails_joins_its_groups_again_until_redis_takes_them(
    monkeypatch, refused
):
    """Redis restarted (it forgets every group): the relay rejoins as soon as its receive has failed, and
    keeps trying while the joins fail, not only at the next periodic rejoin; then its listeners catch up."""
    layer = FlakyLayer(refused=refused)
    here = Fanout(layer)
    monkeypatch.setattr(fanout, "RETRY_SECONDS", 0.01)
    seven, eight = Listener(), Listener()
    try:
        await here.join("table-7", seven)
        await here.join("table-8", eight)
        # Then each listener is told to catch up on what the other processes sent meanwhile, once.
        assert await seven.receive() == {"type": "fanout.rejoined"}
        assert await eight.receive() == {"type": "fanout.rejoined"}
        assert layer.added[:2] == ["table-7", "table-8"]
        assert sorted(layer.added[2:]) == ["table-7", "table-8"]
        assert layer.refused == 0
        assert await seven.nothing_more()
    finally:
        here.close()


# --- between processes, through Redis -------------------------------------------------------------------


@pytest_asyncio.fixture(name="two_processes")
async def _two_processes():
    async with two_processes() as processes:
        yield processes


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_message_reaches_every_process_once(two_processes):
    first, second = two_processes
    mine, theirs, elsewhere = Listener(), Listener(), Listener()
    await first.join("fanout-test-1", mine)
    await second.join("fanout-test-1", theirs)
    await second.join("fanout-test-2", elsewhere)
    await first.publish("fanout-test-1", {"type": "table.changed", "v": 5})
    assert await mine.receive() == {"type": "table.changed", "v": 5}
    assert await theirs.receive() == {"type": "table.changed", "v": 5}  # no fan-out keys left on it
    # Once each: the publisher's relay skips its own message, the other group hears nothing.
    assert await mine.nothing_more()
    assert await theirs.nothing_more()
    assert await elsewhere.nothing_more()
    # One member per process in the layer's group, whatever the number of listeners.
    await first.join("fanout-test-1", Listener())
    members = await _members(first.layer, "fanout-test-1")
    assert members == {first.relay, second.relay}


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_process_without_listeners_in_a_group_leaves_it(two_processes):
    first, second = two_processes
    mine, theirs = Listener(), Listener()
    await first.join("fanout-test-3", mine)
    await second.join("fanout-test-3", theirs)
    await second.leave("fanout-test-3", theirs)
    assert await _members(first.layer, "fanout-test-3") == {first.relay}
    await first.publish("fanout-test-3", {"type": "lobby.changed"})
    assert await mine.receive() == {"type": "lobby.changed"}
    assert await theirs.nothing_more()


@pytest.mark.redis
@pytest.mark.asyncio
async def test_after_redis_forgets_the_groups_a_rejoin_restores_the_other_processes_messages(two_processes):
    first, second = two_processes
    theirs = Listener()
    await first.join("fanout-test-4", Listener())
    await second.join("fanout-test-4", theirs)
    await _forget_group(first.layer, "fanout-test-4")  # as a restarted Redis would
    await first.publish("fanout-test-4", {"type": "table.changed", "v": 1})
    assert await theirs.nothing_more()  # lost: nobody is in the group any more
    await second.rejoin()  # what each relay does every REJOIN_SECONDS
    await first.publish("fanout-test-4", {"type": "table.changed", "v": 2})
    assert await theirs.receive() == {"type": "table.changed", "v": 2}


async def _members(layer, group: str) -> set[str]:
    connection = layer.connection(layer.consistent_hash(group))
    return {name.decode() for name in await connection.zrange(layer._group_key(group), 0, -1)}


async def _forget_group(layer, group: str) -> None:
    connection = layer.connection(layer.consistent_hash(group))
    await connection.delete(layer._group_key(group))
