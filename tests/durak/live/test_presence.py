"""A Durak player's presence is counted at the table's owner (`live.presence.CountingActor`): every socket, on
whichever process holds it, tells the owner when it opens and closes; the grace starts when the player's last
socket closes, or when the process holding it stops answering; a new owner counts nobody until the sockets
still open tell it again."""

import asyncio
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from cards.errors import Refused
from durak import actor as durak_actor
from durak import bot, remote
from durak.models import DurakSeat, DurakTable
from durak.table import Act, Expire, Sit
from live import forward, presence, process
from tests.durak.live.conftest import seat_and_start

OTHER = "live.test-other-process"


async def db(function, *args, **kwargs):
    return await database_sync_to_async(function)(*args, **kwargs)


def gone_of(table) -> dict[int, object]:
    """Each seated player's mark (None: connected), as stored."""
    seats = DurakSeat.objects.filter(table_id=table.pk, user__isnull=False)
    return dict(seats.values_list("user_id", "gone"))


# --- the owner's count, without sockets ---


@pytest.mark.django_db
def test_one_of_two_sockets_closing_starts_no_grace_and_the_last_one_does(open_durak, alice, bob):
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    actor.count_socket(alice.pk, "a1", True)
    actor.count_socket(alice.pk, "a2", True)
    actor.count_socket(bob.pk, "b1", True)
    assert gone_of(table) == {alice.pk: None, bob.pk: None}
    version = actor.state.version
    assert actor.count_socket(alice.pk, "a1", False) is None  # her other tab is still open
    assert gone_of(table)[alice.pk] is None
    assert actor.state.version == version
    actor.count_socket(alice.pk, "a2", False)
    gone = gone_of(table)[alice.pk]
    assert gone is not None  # her last socket closed: her grace runs
    assert actor.state.deadline <= gone + timedelta(seconds=durak_actor.DurakActor.grace_seconds)
    actor.count_socket(alice.pk, "a3", True)  # she is back within the grace
    assert gone_of(table)[alice.pk] is None


@pytest.mark.django_db
def test_a_socket_held_by_another_process_is_counted_at_the_owner(open_durak, alice, bob):
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    actor.count_socket(bob.pk, "b1", True)
    actor.count_socket(alice.pk, "here", True)
    actor.count_socket(alice.pk, "there", True, holder=OTHER)
    actor.count_socket(alice.pk, "here", False)
    assert gone_of(table)[alice.pk] is None  # her tab on the other process is still open
    assert actor.connections.holders() == {process.name(), OTHER}


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_sockets_of_a_lost_process_are_forgotten_and_the_grace_then_the_bot_follow(
    open_durak, alice, bob
):
    table = await db(open_durak)
    actor = await db(seat_and_start, table, alice, bob)
    await db(actor.count_socket, bob.pk, "b1", True)
    await db(actor.count_socket, alice.pk, "there", True, holder=OTHER)
    assert (await db(gone_of, table))[alice.pk] is None
    assert await actor.lost(OTHER) == actor.state.version
    marks = await db(gone_of, table)
    assert marks[alice.pk] is not None  # the process holding her only socket died: her grace runs
    assert marks[bob.pk] is None
    assert actor.connections.users() == {bob.pk}
    after_grace = marks[alice.pk] + timedelta(seconds=actor.grace_seconds)
    await db(actor.handle, Expire(actor.state.version), now=after_grace)
    assert actor.state.seat_of(alice.pk).away  # the bot plays her seat to the game's end
    assert await actor.lost(OTHER) is None  # nothing more of it to forget


@pytest.mark.django_db
def test_a_new_owner_marks_every_seated_player_gone_until_a_socket_tells_it(open_durak, alice, bob):
    table = open_durak()
    seat_and_start(table, alice, bob)
    durak_actor.forget_actors()  # the owner that counted their sockets is gone
    owner = durak_actor.actor_for(table.pk)
    owner.count_socket(alice.pk, "a1", True)
    marks = gone_of(table)
    assert marks[alice.pk] is None
    assert marks[bob.pk] is not None  # nobody told the new owner of a socket of his: his grace runs
    owner.count_socket(bob.pk, "b1", True)
    assert gone_of(table)[bob.pk] is None


@pytest.mark.django_db
def test_a_new_owner_s_marks_refuse_no_action_sent_against_the_version_before_them(open_durak, alice, bob):
    table = open_durak()
    seat_and_start(table, alice, bob)
    durak_actor.forget_actors()
    seen = durak_actor.load(table.pk)
    owner = durak_actor.actor_for(table.pk)
    player = next(user for user in (alice, bob) if seen.seats[seen.to_act()].user_id == user.pk)
    state = seen.game.state
    action = {k: v for k, v in bot.choose(state, seen.to_act()).items() if k != "player"}
    version = owner.handle(Act(player.pk, action, expected=seen.version))
    assert version == seen.version + 2  # the marks, then the action the player saw the table for


@pytest.mark.django_db
def test_the_sweep_of_a_table_an_actor_here_counts_marks_nobody_it_counts(open_durak, alice, bob, settings):
    settings.LIVE_TIMERS = True
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    actor.count_socket(alice.pk, "a1", True)
    actor.count_socket(bob.pk, "b1", True)
    version, deadline = actor.state.version, actor.state.deadline
    assert (
        durak_actor.DurakActor.sweep(now=deadline + timedelta(seconds=5)) == 1
    )  # its timer was not armed here
    assert DurakTable.objects.get(pk=table.pk).version == version + 1  # the turn's move, and no marks
    assert gone_of(table) == {alice.pk: None, bob.pk: None}


@pytest.mark.django_db
def test_a_presence_without_its_socket_s_channel_and_process_is_refused(open_durak, alice):
    table = open_durak()
    durak_actor.actor_for(table.pk).handle(Sit(alice.pk, "Alice"))
    durak_actor.forget_actors()
    for body in (
        {"op": "presence", "connected": False, "process": OTHER},
        {"op": "presence", "connected": False, "channel": "", "process": OTHER},
        {"op": "presence", "connected": False, "channel": "a1"},
    ):
        with pytest.raises(Refused) as refused:
            asyncio.run(remote.DurakRoute.apply({"table": table.pk, "user": alice.pk, **body}))
        assert refused.value.code == "bad_message"
    assert table.pk not in durak_actor.DurakActor.actors
    assert DurakTable.objects.get(pk=table.pk).version == 1
    assert gone_of(table) == {alice.pk: None}


# --- over the sockets ---


async def until(check, *, seconds: float = 3.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if await db(check):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not reached in time")


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_tab_on_another_process_keeps_the_player_when_the_tab_here_closes(open_durak, alice, connect):
    """Counted per process, her socket here closing (the last of this process) started the grace although her
    tab on the other process was open."""
    table = await db(open_durak)
    player = await connect(table, alice)
    await player.act("sit")
    await player.until_version(1)  # her socket told the owner it opened before this (its connect did)
    there = {"table": table.pk, "op": "presence", "connected": True, "channel": "there", "process": OTHER}
    await remote.DurakRoute.apply(
        {**there, "user": alice.pk}
    )  # as the owner's receiver applies a forwarded one
    await player.close()  # returns once its disconnect told the owner
    assert (await db(gone_of, table))[alice.pk] is None
    await remote.DurakRoute.apply({**there, "user": alice.pk, "connected": False})
    assert (await db(gone_of, table))[alice.pk] is not None  # her last socket closed


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_socket_tells_a_new_owner_again_when_it_sees_its_player_marked(
    open_durak, alice, bob, connect
):
    table = await db(open_durak, seats=3)
    player = await connect(table, alice)
    await player.act("sit")
    sat = await player.until_version(1)
    assert not sat["seats"][0]["gone"]
    durak_actor.forget_actors()  # the owner that counted her socket is gone
    await durak_actor.actor_for(table.pk).tell(Sit(bob.pk, "Bob"))
    marked = await player.until_version(2)
    assert marked["seats"][0]["gone"]  # the new owner counts nobody
    told = await player.until_version(4)  # bob sat, then her socket told the owner again
    assert not told["seats"][0]["gone"]
    assert told["seats"][1]["name"] == "Bob"
    assert durak_actor.actor_for(table.pk).connections.users() == {alice.pk}


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_owner_forgets_the_sockets_of_a_process_that_does_not_answer(
    open_durak, alice, bob, monkeypatch
):
    monkeypatch.setattr(presence, "PROBE_SECONDS", 0.05)
    monkeypatch.setattr(forward, "REPLY_SECONDS", 0.2)
    table = await db(open_durak)
    owner = await db(seat_and_start, table, alice, bob)
    forward.listen(OTHER)  # a live process holding bob's socket
    try:
        await owner.presence(alice.pk, "alice-tab", connected=True, holder="live.killed-process")
        await owner.presence(bob.pk, "bob-tab", connected=True, holder=OTHER)
        assert (await db(gone_of, table))[alice.pk] is None
        await until(lambda: gone_of(table)[alice.pk] is not None)  # her process did not answer the probe
        assert (await db(gone_of, table))[bob.pk] is None  # his does
        assert owner.connections.users() == {bob.pk}
        assert owner.state.deadline <= timezone.now() + timedelta(seconds=owner.grace_seconds)
    finally:
        await forward.stop(OTHER)
        await forward.stop(None)
