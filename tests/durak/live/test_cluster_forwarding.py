"""Every command for a Durak table reaches its one owner (`durak.remote`, `live.route`): the in-memory layer.

Two "processes" in one test, as in tests/blackjack/test_forwarding.py: the test's own, where the player's
socket is, and a fake owner, a second receiver under another name that the table row names as the lease
holder. A command on the non-owner crosses the channel layer to the owner's receiver, which applies it through
the table's actor; its refusals come back as refusals, and an owner that does not answer gives `unavailable`.
"""

import asyncio

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from django.test import override_settings
from django.utils import timezone

from durak import actor as durak_actor
from durak import remote
from durak.models import DurakTable
from live import forward, process
from tests import fake_owner

OWNER = "live.test-durak-owner"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def db(function, *args, **kwargs):
    return await database_sync_to_async(function)(*args, **kwargs)


@pytest.fixture(autouse=True)
def _no_timers():
    with override_settings(LIVE_TIMERS=False):
        yield


@pytest.fixture(autouse=True)
def _actors_here_act_for_the_fake_owner(monkeypatch):
    fake_owner.act_for(OWNER, monkeypatch)


@pytest_asyncio.fixture(autouse=True)
async def owner_log(monkeypatch):
    """Every command the receivers handled, in order; the receivers stop after the test."""
    yield fake_owner.log_commands(remote.DurakRoute.kind, monkeypatch)
    await fake_owner.stop_receivers(OWNER)


def lease(table, owner: str, *, seconds: float = 3600) -> None:
    fake_owner.lease(DurakTable, table, owner, seconds=seconds)


def lease_of(table) -> tuple[str, int, int]:
    return DurakTable.objects.values_list("owner", "epoch", "version").get(pk=table.pk)


async def test_commands_on_a_non_owner_are_applied_by_the_owner(open_durak, alice, bob, connect, owner_log):
    table = await db(open_durak, seats=3)
    await db(lease, table, OWNER)
    forward.listen(OWNER)
    player = await connect(table, alice)
    watcher = await connect(table, bob)
    assert player.version == 0
    # Watching reads the table; only commands go to the owner, and each socket's opening (it counts them),
    # told after the socket's first view.
    for _ in range(100):
        if len(owner_log) >= 2:
            break
        await asyncio.sleep(0.02)
    assert sorted((body["op"], body["user"], body["process"]) for body in owner_log) == [
        ("presence", alice.pk, process.name()),
        ("presence", bob.pk, process.name()),
    ]
    del owner_log[:]

    await player.act("sit")
    sat = await player.until_version(1)
    assert sat["seats"][0]["name"] == "Alice"
    await watcher.until_version(1)  # the owner's announcement reaches every viewer
    assert [(body["op"], body["message"]["action"], body["user"]) for body in owner_log] == [
        ("act", "sit", alice.pk)
    ]
    assert await db(lease_of, table) == (OWNER, 1, 1)  # applied by the owner's actor, under its lease

    # A refusal keeps its code and changes nothing.
    await player.send({"action": "sit", "v": 1})
    assert (await player.error())["code"] == "already_seated"
    # A stale action is refused as stale, and the fresh state follows.
    await player.send({"action": "leave", "v": 0})
    assert (await player.error())["code"] == "stale_version"
    assert (await player.next_of("state"))["v"] == 1
    # A bad frame is refused here, without crossing.
    await player.send({"action": "fly"})
    assert (await player.error())["code"] == "bad_message"
    assert [body["op"] for body in owner_log] == ["act", "act", "act"]
    assert (await db(lease_of, table))[2] == 1

    await player.act("add_bot")
    await player.until_version(2)
    await watcher.until_version(2)
    await watcher.act("sit")
    await watcher.until_version(3)
    await player.until_version(3)
    await player.act("start")
    started = await player.until_version(4)
    assert started["table"]["status"] == "playing"
    assert len(started["game"]["hand"]) == 6
    assert await db(lambda: durak_actor.load(table.pk).game.server_seed)  # made and kept by the owner


async def test_a_lost_owner_gives_unavailable_and_the_table_is_then_taken_over(
    open_durak, alice, connect, monkeypatch
):
    monkeypatch.setattr(forward, "REPLY_SECONDS", 0.3)
    table = await db(open_durak)
    await db(lease, table, "live.gone")  # a process that died holding the lease: nothing receives for it
    player = await connect(table, alice)
    frame = {"action": "sit", "v": 0}
    await player.send(frame)
    refused = await player.error()
    assert refused["code"] == "unavailable"
    assert "retry" in refused["message"].lower()
    assert await db(lease_of, table) == ("live.gone", 1, 0)

    # The lease runs out: the next command finds no owner, and this process's actor takes the table over.
    await db(lambda: DurakTable.objects.filter(pk=table.pk).update(lease_until=timezone.now()))
    await player.send(frame)
    await player.until_version(1)
    assert await db(lease_of, table) == (process.name(), 2, 1)
    assert durak_actor.DurakActor.actors[table.pk].epoch == 2


async def test_a_free_table_is_owned_by_the_process_its_first_viewer_connects_to(open_durak, alice, connect):
    table = await db(open_durak)
    await connect(table, alice)
    # The first view is sent before the owner is told of the viewer: the lease follows at once.
    for _ in range(200):
        if (await db(lease_of, table))[:2] == (process.name(), 1):
            break
        await asyncio.sleep(0.01)
    assert (await db(lease_of, table))[:2] == (process.name(), 1)
    assert durak_actor.DurakActor.actors[table.pk].epoch == 1


async def test_a_forwarded_command_for_a_table_that_is_gone_is_answered_as_gone(open_durak, alice):
    table = await db(open_durak)
    await db(DurakTable.objects.filter(pk=table.pk).delete)
    answer = await forward._handlers[remote.DurakRoute.kind](
        {
            "table": table.pk,
            "op": "act",
            "message": {"action": "sit", "v": None},
            "user": alice.pk,
            "name": "A",
        }
    )
    assert answer == {"gone": True}
    assert table.pk not in durak_actor.DurakActor.actors
