"""Broadcast fan-out (tables.fanout): listeners of this process are handed a message directly; other
processes get it once each, through Redis publish/subscribe, and a relay never hands a process its own
messages twice. The Redis tests stand two processes' registries side by side on one event loop."""

import asyncio
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import InMemoryChannelLayer, channel_layers

from tables import fanout
from tables.fanout import REJOINED, Fanout, Mailbox, RedisPubSub
from tests.tables.listener import Listener, SilentProxy, _link, two_processes


@pytest.mark.asyncio
async def test_in_one_process_a_message_reaches_the_groups_listeners_without_the_layer():
    layer = InMemoryChannelLayer()
    here = Fanout(RedisPubSub.for_layer(layer))
    assert here.link is None
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


class FlakyLink:
    """A link to Redis that goes away: `lost` receives fail, then Redis is back and the link reports its
    subscriptions confirmed again (None), then nothing more arrives."""

    def __init__(self, lost: int):
        self.lost = lost
        self.subscribed: list[str] = []
        self.quiet = asyncio.Event()

    async def subscribe(self, group):
        self.subscribed.append(group)

    async def unsubscribe(self, group):
        self.subscribed.remove(group)

    async def receive(self):
        if self.lost:
            self.lost -= 1
            raise ConnectionError("Redis went away")
        if self.lost == 0:
            self.lost = -1
            return None
        await self.quiet.wait()

    async def close(self):
        pass


@pytest.mark.asyncio
async def test_after_losing_redis_every_listener_is_told_once_to_catch_up(monkeypatch):
    monkeypatch.setattr(fanout, "RETRY_SECONDS", 0.01)
    link = FlakyLink(lost=3)
    here = Fanout(link)
    seven, eight = Listener(), Listener()
    try:
        await here.join("table-7", seven)
        await here.join("table-8", eight)
        assert await seven.receive() == REJOINED
        assert await eight.receive() == REJOINED
        assert await seven.nothing_more()
        assert link.subscribed == ["table-7", "table-8"]
        await here.leave("table-7", seven)
        assert link.subscribed == ["table-8"]
    finally:
        await here.close()


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
    assert await theirs.receive() == {"type": "table.changed", "v": 5}
    # Once each: the publisher's relay skips its own message, the other group hears nothing.
    assert await mine.nothing_more()
    assert await theirs.nothing_more()
    assert await elsewhere.nothing_more()
    # One subscription per process, whatever the number of listeners.
    await first.join("fanout-test-1", Listener())
    assert await _subscribers(first, "fanout-test-1") == 2


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_process_without_listeners_in_a_group_leaves_it(two_processes):
    first, second = two_processes
    mine, theirs = Listener(), Listener()
    await first.join("fanout-test-3", mine)
    await second.join("fanout-test-3", theirs)
    await second.leave("fanout-test-3", theirs)
    assert await _subscribers(first, "fanout-test-3") == 1
    await first.publish("fanout-test-3", {"type": "lobby.changed"})
    assert await mine.receive() == {"type": "lobby.changed"}
    assert await theirs.nothing_more()


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_relay_cut_off_from_redis_subscribes_again_and_its_listeners_catch_up(
    two_processes, monkeypatch
):
    """Redis dropped the second process's subscribing connection, as a restart does: it connects and
    subscribes again by itself, then tells its listeners that messages may have been lost, and hears the
    others again."""
    monkeypatch.setattr(fanout, "RETRY_SECONDS", 0.05)
    first, second = two_processes
    theirs = Listener()
    await first.join("fanout-test-4", Listener())
    await second.join("fanout-test-4", theirs)
    await _kill(first, "fanout-second", subscribed=True)
    assert await theirs.receive(timeout=5) == REJOINED
    await first.publish("fanout-test-4", {"type": "table.changed", "v": 2})
    assert await theirs.receive() == {"type": "table.changed", "v": 2}
    assert await theirs.nothing_more()


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_link_to_redis_that_goes_silent_is_noticed_replaced_and_its_listeners_catch_up(monkeypatch):
    """Between the second process and Redis, a network that silently stops carrying its connections (no
    reset, no error): its relay finds out by an unanswered ping, subscribes on a new connection and tells its
    listeners to catch up; its publishes, after a wait, go out on a new connection too."""
    monkeypatch.setattr(fanout, "QUIET_SECONDS", 0.3)
    monkeypatch.setattr(fanout, "PUBLISH_SECONDS", 0.5)
    monkeypatch.setattr(fanout, "RETRY_SECONDS", 0.05)
    layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
    address = urlsplit(layer.hosts[0]["address"])
    async with SilentProxy(address.hostname, address.port or 6379) as proxy:
        behind = address._replace(netloc=f"127.0.0.1:{proxy.port}").geturl()
        first = Fanout(_link("first"), origin="first")
        second = Fanout(RedisPubSub(behind, client_name="fanout-second"), origin="second")
        try:
            mine, theirs = Listener(), Listener()
            await first.join("fanout-test-7", mine)
            await second.join("fanout-test-7", theirs)
            await first.publish("fanout-test-7", {"type": "table.changed", "v": 1})
            assert await mine.receive() == {"type": "table.changed", "v": 1}  # its own, at once
            assert await theirs.receive() == {"type": "table.changed", "v": 1}
            await second.publish("fanout-test-7", {"type": "table.changed", "v": 2})
            assert await theirs.receive() == {"type": "table.changed", "v": 2}
            assert await mine.receive() == {"type": "table.changed", "v": 2}

            proxy.silence()
            await first.publish("fanout-test-7", {"type": "table.changed", "v": 3})  # lost on the way
            assert await mine.receive() == {"type": "table.changed", "v": 3}
            assert await theirs.receive(timeout=5) == REJOINED
            await first.publish("fanout-test-7", {"type": "table.changed", "v": 4})
            assert await mine.receive() == {"type": "table.changed", "v": 4}
            assert await theirs.receive() == {"type": "table.changed", "v": 4}
            # The second process's pooled connection is silent too: its publish waits, then goes again.
            await second.publish("fanout-test-7", {"type": "table.changed", "v": 5})
            assert await theirs.receive() == {"type": "table.changed", "v": 5}
            assert await mine.receive() == {"type": "table.changed", "v": 5}
            assert await theirs.nothing_more()
            assert await mine.nothing_more()
        finally:
            for process, listener in ((first, mine), (second, theirs)):
                await process.leave("fanout-test-7", listener)
                await process.close()


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_quiet_but_healthy_link_is_kept(two_processes, monkeypatch):
    """Pings answered: a relay with nothing to hear for a while keeps its connection and loses nothing."""
    monkeypatch.setattr(fanout, "QUIET_SECONDS", 0.1)
    first, second = two_processes
    theirs = Listener()
    await second.join("fanout-test-8", theirs)
    await first.join("fanout-test-8", Listener())
    connection = second.link.pubsub.connection
    assert await theirs.nothing_more(wait=1.0)  # about five pings answered, no REJOINED
    assert second.link.pubsub.connection is connection
    assert connection.is_connected
    await first.publish("fanout-test-8", {"type": "table.changed", "v": 1})
    assert await theirs.receive() == {"type": "table.changed", "v": 1}


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_publish_after_redis_dropped_the_idle_connection_still_arrives(two_processes):
    """A restarted Redis has closed every pooled connection: the first publish after it goes out anyway."""
    first, second = two_processes
    theirs = Listener()
    await first.join("fanout-test-5", Listener())
    await second.join("fanout-test-5", theirs)
    await first.publish("fanout-test-5", {"type": "table.changed", "v": 1})
    assert await theirs.receive() == {"type": "table.changed", "v": 1}
    await _kill(second, "fanout-first", subscribed=False)
    await first.publish("fanout-test-5", {"type": "table.changed", "v": 2})
    assert await theirs.receive() == {"type": "table.changed", "v": 2}


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_message_the_relay_cannot_read_is_skipped_and_the_next_ones_arrive(two_processes, caplog):
    """Anything else published on a group's channel (another program, a bad release) must not stop the
    relay."""
    first, second = two_processes
    theirs = Listener()
    await second.join("fanout-test-6", theirs)
    channel = first.link.prefix + "fanout-test-6"
    for junk in (b"no origin or json", b"first {not json", b'first ["a", "list"]', b'first {"v": 1}'):
        await first.link.client.publish(channel, junk)
    await first.publish("fanout-test-6", {"type": "table.changed", "v": 2})
    assert await theirs.receive() == {"type": "table.changed", "v": 2}
    assert await theirs.nothing_more()
    assert caplog.text.count("could not read") == 4


@pytest.mark.asyncio
async def test_pubsub_channels_are_named_after_the_redis_database():
    """Redis shares pub/sub channels between its databases: a benchmark on database 4 must not reach a test
    run on database 1."""
    one, four = RedisPubSub("redis://127.0.0.1:6379/1"), RedisPubSub("redis://127.0.0.1:6379/4")
    try:
        assert (one.prefix, four.prefix) == ("blackjack:1:", "blackjack:4:")
    finally:
        await one.close()
        await four.close()


async def _subscribers(process: Fanout, group: str) -> int:
    ((_, count),) = await process.link.client.pubsub_numsub(process.link.prefix + group)
    return count


async def _kill(process: Fanout, name: str, *, subscribed: bool) -> None:
    """Close the named process's subscribing connection, or its idle publishing ones, from Redis's side."""
    clients = [
        client
        for client in await process.link.client.client_list()
        if client["name"] == name and (client["sub"] != "0") == subscribed
    ]
    assert clients
    for client in clients:
        await process.link.client.client_kill_filter(_id=client["id"])
