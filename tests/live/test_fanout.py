"""How viewers learn of changes (`blackjack.broadcast`): an actor's commit reaches the viewers of this process
as the shared view part it built from memory, without a read; a change made another way is read once for all
of them; the other processes get only content-free notices over the channel layer, which they use only as a
reason to read. (That a refused change sends nothing is tested in test_clock.py.)"""

import asyncio
import os
import threading
import time
from dataclasses import replace

import pytest
from channels.layers import get_channel_layer

from blackjack import actors, viewmodel
from blackjack.models import Table
from live import chat, fanout, games
from live.fanout import LOBBY_GROUP, group_of
from tests.blackjack.conftest import sockets_open
from tests.threads import in_a_thread


class Listener:
    """What a consumer's mailbox is to the registry: the messages it is handed, in a queue the test reads."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[dict] = asyncio.Queue()

    def deliver(self, message: dict) -> None:
        self.queue.put_nowait(message)

    async def receive(self, timeout: float = 5) -> dict:
        return await asyncio.wait_for(self.queue.get(), timeout)

    async def nothing(self, wait: float = 0.2) -> None:
        with pytest.raises(TimeoutError):
            await self.receive(wait)


@pytest.fixture
def in_memory_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield get_channel_layer()
    channel_layers.backends.clear()


async def listening(group: str) -> Listener:
    """A viewer in `group`, with this test's loop registered as the server's."""
    listener = Listener()
    await fanout.join(group, listener)
    fanout.register_loop(asyncio.get_running_loop())
    return listener


def current_version(table) -> int:
    return Table.objects.values_list("version", flat=True).get(pk=table.pk)


async def through_actor(table, user, name: str, **args) -> int:
    """A player's action through the table's actor, as the consumer hands it over."""
    version = await in_a_thread(current_version, table)
    action = {"action": name, **args}
    return await actors.perform(table_id=table.pk, user=user, action=action, expected_version=version)


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_an_actors_commit_reaches_the_viewers_here_as_its_shared_part_without_a_read(
    in_memory_layer, table, alice, bob, act, monkeypatch
):
    await in_a_thread(act, table, alice, "sit", seat=1)
    await in_a_thread(act, table, bob, "sit", seat=2)
    sockets_open(table, alice, bob)
    first, second = (
        await listening(group_of("blackjack", table.pk)),
        await listening(group_of("blackjack", table.pk)),
    )
    reads = []
    monkeypatch.setattr(viewmodel, "read_shared", lambda table_id: reads.append(table_id))
    version = await through_actor(table, alice, "bet", amount=10)
    shown = [await first.receive(), await second.receive()]
    assert [message["type"] for message in shown] == ["live.shared", "live.shared"]
    shared = shown[0]["shared"]
    assert shown[1]["shared"] is shared is actors.actor_for(table.pk).view
    assert shared.version == version
    assert shared.view_table["seats"][0]["bet"] == 10
    assert viewmodel.view_of(shared, bob).view["you"]["seats"] == [2]
    assert reads == []
    await first.nothing()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_change_from_another_path_is_read_once_for_every_viewer_here(
    in_memory_layer, table, alice, act, monkeypatch
):
    await in_a_thread(act, table, alice, "sit", seat=1)
    viewers = [await listening(group_of("blackjack", table.pk)) for _ in range(3)]
    reads = []
    read = viewmodel.read_shared
    counted = replace(
        games.get("blackjack"), read_view=lambda table_id: reads.append(table_id) or read(table_id)
    )
    monkeypatch.setitem(games._games, "blackjack", counted)
    version = await in_a_thread(current_version, table)
    # From a foreign thread, as the clock or a database thread commits: twice, as two notices may come.
    for _ in range(2):
        thread = threading.Thread(target=fanout.changed, args=("blackjack", table.pk, version))
        thread.start()
        thread.join()
    shown = [await viewer.receive() for viewer in viewers]
    assert {message["shared"].version for message in shown} == {version}
    assert len({id(message["shared"]) for message in shown}) == 1
    assert reads == [table.pk]
    await viewers[0].nothing()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_chat_line_reaches_the_viewers_and_no_view_carries_the_chat(
    in_memory_layer, table, alice, bob, act
):
    await in_a_thread(act, table, alice, "sit", seat=1)
    await in_a_thread(act, table, bob, "sit", seat=2)
    sockets_open(table, alice, bob)
    viewer = await listening(group_of("blackjack", table.pk))
    await through_actor(table, alice, "bet", amount=10)
    assert (await viewer.receive())["type"] == "live.shared"
    line = await in_a_thread(chat.post, game="blackjack", table_id=table.pk, user=alice, text="good luck")
    assert await viewer.receive() == {"type": "live.chat", "id": line.pk}
    await through_actor(table, bob, "bet", amount=20)
    shared = (await viewer.receive())["shared"]
    assert "chat" not in shared.view_table  # the chat is the site's: its lines reach the page on their own


@pytest.mark.asyncio
async def test_the_lobby_is_told_at_once_then_at_most_once_an_interval(in_memory_layer, monkeypatch):
    # One second of pacing; "at once" is within half of it (room for a busy machine's thread hand-offs).
    monkeypatch.setattr(fanout, "LOBBY_SECONDS", 1.0)
    loop = asyncio.get_running_loop()
    lobby = await listening(LOBBY_GROUP)
    told = []

    async def receive_all(until: float) -> None:
        while (left := until - loop.time()) > 0:
            try:
                await lobby.receive(left)
            except TimeoutError:
                return
            told.append(loop.time())

    start = loop.time()
    fanout.lobby_changed()  # after a quiet spell: at once
    await receive_all(start + 0.5)
    assert len(told) == 1
    for _ in range(5):  # within the interval: one announcement at its end, for all five
        await asyncio.to_thread(fanout.lobby_changed)
        await asyncio.sleep(0.01)
    await receive_all(start + 1.8)
    assert len(told) == 2
    assert told[1] - told[0] >= 0.99
    await asyncio.sleep(1.2)  # quiet again: the next change goes at once
    sent = loop.time()
    await asyncio.to_thread(fanout.lobby_changed)
    await receive_all(sent + 0.5)
    assert len(told) == 3


def test_without_a_running_loop_an_in_memory_notice_is_dropped_quietly(in_memory_layer, caplog):
    loop = asyncio.new_event_loop()
    fanout.register_loop(loop)  # registered, but not running (a finished test's loop, a stopped server)
    loop.close()
    fanout.changed("blackjack", 1, 1)  # nobody can be listening
    assert not [record for record in caplog.records if record.name == "blackjack.broadcast"]


class FakeLayer:
    """A channel layer of several processes, as far as the registry uses one: what is sent is recorded."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict]] = []

    async def group_send(self, group: str, message: dict) -> None:
        self.sent.append((group, message))


@pytest.mark.asyncio
async def test_without_a_server_loop_the_other_processes_still_get_the_notice(monkeypatch):
    """No server loop here (a management command; a tool driving the services from asyncio, where
    `async_to_sync` refuses): only the other processes are told, and only the version."""
    layer = FakeLayer()
    monkeypatch.setattr(fanout, "get_channel_layer", lambda: layer)
    monkeypatch.setattr(fanout, "_loop", None)
    fanout.changed("blackjack", 7, 3, lobby=True)  # synchronous, on this test's running loop
    assert layer.sent == [
        ("blackjack-7", {"type": "live.changed", "game": "blackjack", "table": 7, "v": 3}),
        ("lobby", {"type": "lobby.changed"}),
    ]


@pytest.mark.asyncio
async def test_a_notice_from_the_layer_is_only_a_reason_to_read(monkeypatch):
    """What another process sends names a table and a version; anything else on it is ignored (a view part, a
    forged state), as are its own notices coming back and messages it cannot read."""
    loop = asyncio.get_running_loop()
    registry = fanout._Registry(loop)
    relay = fanout._Relay(registry, FakeLayer())
    relay.channel = "relay.here"
    told = []
    monkeypatch.setattr(
        registry, "changed", lambda game, table_id, v, **flags: told.append((table_id, v, flags))
    )
    relay._handle(
        {
            "type": "live.changed",
            "game": "blackjack",
            "table": 7,
            "v": 4,
            "shared": {"view": "forged"},
            "from": "elsewhere",
        }
    )
    relay._handle(
        {"type": "live.changed", "game": "blackjack", "table": 7, "v": 5, "from": "relay.here"}
    )  # its own
    for bad in (
        {"type": "live.changed", "game": "blackjack", "table": "7", "v": 4},
        {"type": "live.changed", "game": "blackjack", "table": 7, "v": None},
        {"type": "live.shared", "table": 7, "shared": {}},
    ):
        with pytest.raises(ValueError, match=r"table|notice"):
            relay._handle(bad)
    assert told == [(7, 4, {"lobby": False, "others": False})]


@pytest.mark.asyncio
async def test_an_emote_crosses_to_the_other_processes_and_is_checked_on_arrival(monkeypatch):
    """An emote (`services.post_emote`) reaches the viewers here and is sent to the other processes; one that
    arrives is shown only with a reaction from the list and the fields `post_emote` gives it."""
    loop = asyncio.get_running_loop()
    registry = fanout._Registry(loop)
    layer = FakeLayer()
    registry.relay = relay = fanout._Relay(registry, layer)
    relay.channel = "relay.here"
    monkeypatch.setattr(fanout, "_registry", lambda loop: registry)
    monkeypatch.setattr(fanout, "_loop", loop)
    viewer = Listener()
    registry.groups[group_of("blackjack", 7)] = {viewer}
    entry = {
        "emote": "gg",
        "text": "GG",
        "from": "alice",
        "display_name": "Alice",
        "at": "2026-01-01T00:00:00Z",
    }

    fanout.emote("blackjack", 7, entry)
    assert await viewer.receive() == {"type": "live.emote", **entry}
    await asyncio.sleep(0)
    sent = {"type": "live.emote", "game": "blackjack", "table": 7, "entry": entry, "from": "relay.here"}
    assert layer.sent == [("blackjack-7", sent)]

    relay._handle({**sent, "from": "relay.elsewhere"})  # from another process
    assert await viewer.receive() == {"type": "live.emote", **entry}
    for bad in (
        {**entry, "text": "<b>forged</b>"},
        {**entry, "emote": "party"},
        {**entry, "display_name": None},
        "gg",
    ):
        with pytest.raises(ValueError, match="notice"):
            relay._handle(
                {
                    "type": "live.emote",
                    "game": "blackjack",
                    "table": 7,
                    "entry": bad,
                    "from": "relay.elsewhere",
                }
            )
    await viewer.nothing()


@pytest.mark.redis
@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_between_processes_only_the_version_crosses_redis(table, alice, bob, act, settings):
    """Two processes' registries on one Redis layer: the one whose actor commits shows its view part to its
    own viewers; the other's viewer gets the version read from the database; Redis carries the table's id and
    version only (no hole card, no seed)."""
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "cardroom.channel_layer.RedisChannelLayer",
            # A prefix of its own: no member of an earlier run is in its groups.
            "CONFIG": {"hosts": [os.environ["REDIS_URL"]], "prefix": f"views-test-{time.time_ns()}"},
        }
    }
    channel_layers.backends.clear()
    try:
        await in_a_thread(act, table, alice, "sit", seat=1)
        await in_a_thread(act, table, bob, "sit", seat=2)
        loop = asyncio.get_running_loop()
        group = group_of("blackjack", table.pk)
        here = await listening(group)
        relay = fanout._registry(loop).relay
        assert relay.others[group] is False  # alone in the group: its commits are told nobody
        elsewhere = fanout._Registry(loop)  # another process's registry (a channel of its own)
        theirs = Listener()
        await elsewhere.join(group, theirs)
        layer = get_channel_layer()
        members = await layer.group_channels(group, within=fanout.LIVE_MEMBER_SECONDS)
        assert sorted(members) == sorted([relay.channel, elsewhere.relay.channel])
        async with asyncio.timeout(5):  # the other process told this one it joined (`relay.joined`)
            while not relay.others[group]:
                await asyncio.sleep(0.01)
        sent = []
        group_send = layer.group_send

        async def recorded(group, message):
            sent.append(message)
            await group_send(group, message)

        layer.group_send = recorded
        version = await through_actor(table, alice, "bet", amount=10)
        # (The actor's first load marked the seated players, who have no socket here, as gone: a version of
        # its own before the bet's.)
        mine = await until_version(here, version)
        assert mine["shared"] is actors.actor_for(table.pk).view
        told = await until_version(theirs, version)
        assert told["type"] == "live.shared"
        assert told["shared"] is not actors.actor_for(table.pk).view  # read from the database there
        assert told["shared"].view_table == actors.actor_for(table.pk).view.view_table
        assert sent
        assert all(set(message) == {"type", "game", "table", "v", "from"} for message in sent)
        assert sent[-1]["v"] == version
        await here.nothing()
    finally:
        channel_layers.backends.clear()


async def until_version(listener: Listener, version: int) -> dict:
    """The first view part of `version` the listener is handed (those of earlier versions skipped)."""
    while True:
        message = await listener.receive()
        if message["type"] == "live.shared" and message["shared"].version >= version:
            assert message["shared"].version == version
            return message


class GroupsLayer(FakeLayer):
    """A layer of several processes that keeps its groups' members (`group_channels`)."""

    def __init__(self) -> None:
        super().__init__()
        self.members: dict[str, set[str]] = {}

    async def group_add(self, group: str, channel: str) -> None:
        self.members.setdefault(group, set()).add(channel)

    async def group_discard(self, group: str, channel: str) -> None:
        self.members.get(group, set()).discard(channel)

    async def group_channels(self, group: str, *, within: float) -> list[str]:
        return sorted(self.members.get(group, ()))


def relay_of(layer, channel: str) -> fanout._Relay:
    relay = fanout._Relay(fanout._Registry(asyncio.get_running_loop()), layer)
    relay.channel = channel  # (no receiving task: the test hands it its messages)
    return relay


@pytest.mark.asyncio
async def test_a_group_no_other_process_is_in_gets_no_notice():
    """The notices of a table shown by this process alone cost nothing on the layer; once another process
    joins the table's group (and says so, or is found at the next read) they are sent, until it leaves."""
    layer = GroupsLayer()
    here, there = relay_of(layer, "relay.here"), relay_of(layer, "relay.there")
    notice = {"type": "live.changed", "game": "blackjack", "table": 7, "v": 1}
    await here.join("blackjack-7")
    await here.send("blackjack-7", notice)
    assert layer.sent == []

    await there.join("blackjack-7")  # it finds this process in the group, and tells it
    joined = {"type": "relay.joined", "group": "blackjack-7", "from": "relay.there"}
    assert layer.sent == [("blackjack-7", joined)]
    here._handle(joined)
    await here.send("blackjack-7", notice)
    assert layer.sent[-1] == ("blackjack-7", {**notice, "from": "relay.here"})

    await there.leave("blackjack-7")
    await here._look("blackjack-7")  # its next refresh
    layer.sent.clear()
    await here.send("blackjack-7", notice)
    assert layer.sent == []

    await layer.group_add("blackjack-7", "relay.silent")  # joined, but its `relay.joined` was lost
    await here._look("blackjack-7")
    await here.send("blackjack-7", notice)
    assert layer.sent == [("blackjack-7", {**notice, "from": "relay.here"})]
    await here.send("table-8", notice)  # a group it is not in: sent (it cannot know who is there)
    assert layer.sent[-1] == ("table-8", {**notice, "from": "relay.here"})
    here._handle({**joined, "group": "table-9"})  # of a group it left meanwhile: nothing to do
    assert "table-9" not in here.others

    # A `relay.joined` arriving while a read of the members is under way outdates a read that found nobody.
    await layer.group_discard("blackjack-7", "relay.silent")
    members = layer.group_channels

    async def joined_meanwhile(group: str, *, within: float) -> list[str]:
        found = await members(group, within=within)
        here._handle({**joined, "from": "relay.late"})
        return found

    layer.group_channels = joined_meanwhile
    assert await here._look("blackjack-7")
    assert here.others["blackjack-7"] is True


class FailingOnceLayer(GroupsLayer):
    """A layer whose first receive fails (Redis restarted), then waits for good; joins are recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.added: list[str] = []
        self.failed = False

    async def new_channel(self, prefix: str = "specific") -> str:
        return f"{prefix}.here!"

    async def group_add(self, group: str, channel: str) -> None:
        self.added.append(group)
        await super().group_add(group, channel)

    async def receive(self, channel: str) -> dict:
        if not self.failed:
            self.failed = True
            raise ConnectionError("Redis went away")
        await asyncio.Event().wait()


@pytest.mark.asyncio
async def test_after_losing_the_layer_the_relay_joins_again_and_reads_every_table_it_shows(monkeypatch):
    monkeypatch.setattr(fanout, "RETRY_SECONDS", 0.01)
    registry = fanout._Registry(asyncio.get_running_loop())
    layer = FailingOnceLayer()
    registry.relay = fanout._Relay(registry, layer)
    viewer, lobby = Listener(), Listener()
    read = []
    monkeypatch.setattr(registry, "changed", lambda game, table_id, v, **flags: read.append((table_id, v)))
    await registry.join("blackjack-7", viewer)
    await registry.join(LOBBY_GROUP, lobby)
    assert await lobby.receive() == {"type": "lobby.changed"}  # notices may have been lost: catch up
    assert sorted(layer.added) == sorted(["blackjack-7", LOBBY_GROUP] * 2)
    assert read == [(7, 0)]
    registry.relay._task.cancel()
