"""Every command for a table reaches its one owner (`blackjack.remote`, `live.forward`), on the in-memory
layer.

Two "processes" in one test: the test's own (`live.process`, where the player's socket is) and a fake owner,
a second receiver under another name that the table row names as the lease holder. A command on the
non-owner crosses the channel layer to the owner's receiver, which applies it through the table's actor; the
answer comes back to the socket's channel and the client gets what a local action would have produced.
"""

import asyncio
from dataclasses import replace

import pytest
import pytest_asyncio
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.audit import audit_ledger
from blackjack import actors, operations, remote, services, viewmodel
from blackjack.models import ActionLog, Seat, Table
from cards.errors import Refused
from live import fanout, forward, games, presence
from live.lease import OwnedElsewhere
from live.models import ChatLine
from tests import fake_owner
from tests.blackjack.conftest import preset_row
from tests.blackjack.wsclient import CommunicatorClient, move, session_cookie

OWNER = "live.test-owner"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def db(function, *args, **kwargs):
    return await database_sync_to_async(function)(*args, **kwargs)


@pytest.fixture(autouse=True)
def _actors_here_act_for_the_fake_owner(monkeypatch):
    fake_owner.act_for(OWNER, monkeypatch)


@pytest_asyncio.fixture(autouse=True)
async def owner_log(monkeypatch):
    """Every command the receivers handled, in order; the receivers stop after the test."""
    yield fake_owner.log_commands(remote.Route.kind, monkeypatch)
    await fake_owner.stop_receivers(OWNER)


def lease(table, owner: str, *, seconds: float = 3600) -> None:
    fake_owner.lease(Table, table, owner, seconds=seconds)


async def connected(table, user, name: str) -> CommunicatorClient:
    cookie = await db(session_cookie, user)
    client = CommunicatorClient(name, f"/ws/tables/{table.pk}/?format=json", cookie=cookie)
    assert await client.connect()
    await client.receive()
    return client


def version_of(table) -> int:
    return Table.objects.values_list("version", flat=True).get(pk=table.pk)


async def test_a_players_commands_on_a_non_owner_are_applied_by_the_owner(make_table, alice, owner_log):
    table = await db(make_table)
    await db(lease, table, OWNER)
    forward.listen(OWNER)
    client = await connected(table, alice, "alice")
    try:
        sat = await move(client, "sit", seat=1)
        assert sat["you"]["seats"] == [1]
        assert (
            actors.BlackjackActor.actors[table.pk].state.state.version
            == sat["v"]
            == await db(version_of, table)
        )

        # A refusal keeps its code, and changes nothing.
        await client.send({"action": "bet", "amount": 5, "v": sat["v"]})
        assert (await client.error())["code"] == "bad_amount"
        # A stale action is refused as stale, and the fresh state follows, as on the owner.
        await client.send({"action": "sit", "seat": 2, "v": 0})
        assert (await client.error())["code"] == "stale_version"
        assert (await client.next_of("state"))["v"] == sat["v"]
        assert await db(version_of, table) == sat["v"]

        bet = await move(client, "bet", amount=20)
        assert bet["table"]["seats"][0]["bet"] == 20
        assert [body["op"] for body in owner_log] == ["presence", "act", "act", "act", "act"]
        assert (
            actors.BlackjackActor.actors[table.pk].state.state.version
            == bet["v"]
            == await db(version_of, table)
        )

        # A chat line is the site's: posted here, whoever owns the table, and it arrives.
        await client.send({"action": "chat", "text": "hello"})
        chat = await client.next_of("chat")
        assert chat["text"] == "hello"
        assert owner_log[-1]["op"] == "act"
        assert await db(lambda: ChatLine.objects.filter(game="blackjack", table_ref=table.pk).count()) == 1
    finally:
        await client.close()
    assert (await db(audit_ledger)).ok


async def test_the_owners_answer_shows_the_version_to_the_viewers_here_read_once(
    make_table, alice, bob, monkeypatch, owner_log
):
    """The owner shows its versions to its own viewers (`live.fanout.show`); here, where the sockets are, its
    answer makes the viewers read the new version from the database, once for all of them, and a notice of
    that version arriving afterwards reads nothing again."""
    table = await db(make_table)
    await db(lease, table, OWNER)
    forward.listen(OWNER)
    watcher = await connected(table, bob, "bob")
    client = await connected(table, alice, "alice")
    shown, reads = [], []
    # The owner's views stay in the owner's process; with the in-memory layer no notice crosses either.
    monkeypatch.setattr(fanout, "show", lambda game, table_id, shared, **kwargs: shown.append(shared.version))
    read_shared = viewmodel.read_shared

    def counted(table_id):
        reads.append(table_id)
        return read_shared(table_id)

    monkeypatch.setitem(games._games, "blackjack", replace(games.get("blackjack"), read_view=counted))
    try:
        sat = await move(client, "sit", seat=1, others=[watcher])
        assert sat["you"]["seats"] == [1]
        assert shown == [sat["v"]]
        assert reads == [table.pk]
        assert owner_log[-1]["op"] == "act"

        fanout.committed_elsewhere("blackjack", table.pk, sat["v"])  # the owner's notice, after its answer
        await watcher.nothing_more()
        assert reads == [table.pk]

        bet = await move(client, "bet", amount=20, others=[watcher])
        assert bet["table"]["seats"][0]["bet"] == 20 == watcher.state["table"]["seats"][0]["bet"]
        assert shown == [sat["v"], bet["v"]]
        assert reads == [table.pk, table.pk]
    finally:
        await client.close()
        await watcher.close()


async def test_a_lost_owner_gives_unavailable_and_the_table_is_then_taken_over(
    make_table, alice, monkeypatch
):
    monkeypatch.setattr(forward, "REPLY_SECONDS", 0.3)
    table = await db(make_table)
    await db(lease, table, "live.gone")  # a process that died holding the lease: nothing receives for it
    client = await connected(table, alice, "alice")
    try:
        frame = {"action": "sit", "seat": 1, "v": 0}
        await client.send(frame)
        refused = await client.error()
        assert refused["code"] == "unavailable"
        assert "retry" in refused["message"].lower()
        assert await db(version_of, table) == 0
        assert table.pk not in actors.BlackjackActor.actors

        # The lease runs out: the next command finds no owner, and this process's actor takes the table.
        await db(lambda: Table.objects.filter(pk=table.pk).update(lease_until=timezone.now()))
        await client.send(frame)
        state = await client.until_version(1)
        assert state["you"]["seats"] == [1]
        assert actors.BlackjackActor.actors[table.pk].state.state.version == 1
    finally:
        await client.close()


async def test_a_retried_action_that_the_slow_owner_applied_is_refused_as_stale(
    make_table, alice, balance, monkeypatch, owner_log, scripted_shoe
):
    table = await db(make_table)
    scripted_shoe(table, ["9h", "7c", "8d", "Ts"])  # no blackjack: the bet stays in play, the round on Alice
    await db(lease, table, OWNER)
    forward.listen(OWNER)
    client = await connected(table, alice, "alice")
    try:
        sat = await move(client, "sit", seat=1)
        await forward.stop(OWNER)  # the owner is stuck: commands wait in its channel
        monkeypatch.setattr(forward, "REPLY_SECONDS", 0.3)
        frame = {"action": "bet", "amount": 20, "v": sat["v"]}
        await client.send(frame)
        assert (await client.error())["code"] == "unavailable"

        # The owner comes back and applies the command it had been sent after all.
        forward.listen(OWNER)
        for _ in range(100):
            if await db(version_of, table) > sat["v"]:
                break
            await asyncio.sleep(0.05)
        assert await db(version_of, table) == sat["v"] + 1

        # The client retries the same frame: refused as stale, not applied twice.
        await client.send(frame)
        assert (await client.error())["code"] == "stale_version"
        state = await client.next_of("state")
        assert state["v"] == sat["v"] + 1
        assert state["table"]["seats"][0]["bet"] == 20
    finally:
        await client.close()
    assert [body["op"] for body in owner_log] == ["presence", "act", "act", "act", "presence"]
    bets = await db(lambda: ActionLog.objects.filter(table=table, action__action="bet").count())
    assert bets == 1
    assert await db(balance, alice) == 10_000 - 20
    assert (await db(audit_ledger)).ok


async def test_a_command_goes_to_the_owner_that_the_actors_load_names(
    make_table, alice, monkeypatch, owner_log
):
    table = await db(make_table)
    client = await connected(table, alice, "alice")  # nobody owned the table: its presence is noted here
    for _ in range(250):  # (told right after the first view)
        actor = actors.BlackjackActor.actors.get(table.pk)
        if actor is not None and alice.pk in actor.connections.users():
            break
        await asyncio.sleep(0.02)
    try:
        await db(lease, table, OWNER)
        forward.listen(OWNER)
        load = actors.BlackjackActor.load
        refused = []

        def load_once_owned_elsewhere(actor):
            # What loading does when another live process holds the lease (the owner module's acquisition).
            if not refused:
                refused.append(actor.key)
                raise OwnedElsewhere(actor.key, OWNER)
            return load(actor)

        monkeypatch.setattr(actors.BlackjackActor, "load", load_once_owned_elsewhere)
        actors.forget_actors()
        state = await move(client, "sit", seat=1)
        assert state["you"]["seats"] == [1]
        assert refused == [table.pk]
        assert [body["op"] for body in owner_log] == ["act"]
    finally:
        await client.close()


async def test_the_lobbys_one_click_seat_goes_to_the_owners_actor(make_table, alice, owner_log):
    table = await db(make_table)
    await db(lease, table, OWNER)
    forward.listen(OWNER)

    def sit_from_the_lobby():
        browser = Client()
        browser.force_login(alice)
        return browser.post(reverse("sit", args=[table.pk]))

    response = await sync_to_async(sit_from_the_lobby, thread_sensitive=False)()
    assert response.status_code == 302
    assert [body["op"] for body in owner_log] == ["act"]
    seated = actors.BlackjackActor.actors[table.pk].state.state.seats
    assert {number: seat.player.id for number, seat in seated.items() if seat.player} == {1: alice.pk}
    held = await db(
        lambda: list(Table.objects.get(pk=table.pk).seat_set.filter(user=alice).values_list("number"))
    )
    assert held == [(1,)]


async def test_staff_edits_go_to_the_owners_actor(make_table, alice, owner_log):
    table = await db(make_table)
    await db(lease, table, OWNER)
    forward.listen(OWNER)
    client = await connected(table, alice, "alice")
    staff = sync_to_async(thread_sensitive=False)  # an admin request's thread of its own
    try:
        await move(client, "sit", seat=1)
        preset = await db(preset_row, "European")
        changed = await staff(operations.update_table)(
            table_id=table.pk, preset=preset, min_bet=20, max_bet=400
        )
        actor = actors.BlackjackActor.actors[table.pk]
        closed = await staff(operations.close_table)(table_id=table.pk)
        assert actor.state.state.version == closed == changed + 1
        assert not actor.state.state.settings.is_open
        assert [body["op"] for body in owner_log[-2:]] == ["settings", "close"]
        row = await db(Table.objects.get, pk=table.pk)
        assert (row.preset_id, row.min_bet, row.max_bet, row.is_open) == (preset.pk, 20, 400, False)

        # A refused edit comes back refused, and changes nothing.
        with pytest.raises(Refused) as refused:
            await staff(operations.update_table)(table_id=table.pk, min_bet=500, max_bet=100)
        assert refused.value.code == "bad_amount"
        with pytest.raises(Refused) as refused:
            await staff(operations.update_table)(table_id=table.pk, version=1)  # not a setting
        assert refused.value.code == "bad_message"
        assert await db(version_of, table) == closed

        reopened = await staff(operations.reopen_table)(table_id=table.pk)
        await client.until_version(reopened)
        await move(client, "sit", seat=1)  # closing stood her up
        assert await staff(operations.release_user_seats)(user=alice) == 1
        assert [body["op"] for body in owner_log[-3:]] == ["reopen", "act", "release"]
        assert actor.state.state.settings.is_open
        assert await db(lambda: Table.objects.get(pk=table.pk).seat_set.filter(user=alice).count()) == 0
    finally:
        await client.close()


async def test_a_socket_tells_a_new_owner_again_when_it_sees_its_player_marked(make_table, alice, bob):
    """The owner's count of sockets dies with it (here its actor is dropped, as when its lease is lost): the
    next owner marks every seated player gone at its first load, and a socket still open, seeing its player
    marked, tells the new owner again, which clears the mark."""
    table = await db(make_table)
    client = await connected(table, alice, "alice")
    try:
        sat = await move(client, "sit", seat=1)
        assert sat["table"]["seats"][0]["connected"] is True
        actors.forget_actors()  # the owner that counted her socket is gone
        await actors.perform(
            table_id=table.pk, user=bob, action={"action": "sit", "seat": 2}, expected_version=sat["v"]
        )
        marked = await client.until_version(sat["v"] + 1)
        assert marked["table"]["seats"][0]["connected"] is False  # the new owner counts nobody
        told = await client.until_version(sat["v"] + 3)  # bob sat, then her socket told the owner again
        assert told["table"]["seats"][0]["connected"] is True
        assert told["table"]["seats"][1]["player"] == "bob"
        assert told["table"]["seats"][1]["connected"] is False  # bob has no socket open
        assert actors.actor_for(table.pk).connections.users() == {alice.pk}
    finally:
        await client.close()


async def test_the_owner_forgets_the_sockets_of_a_process_that_does_not_answer(
    make_table, alice, bob, monkeypatch
):
    """A process killed outright never tells the owner that its sockets closed: the owner asks the processes
    holding the sockets it counts whether they are alive, and one that does not answer loses its sockets."""
    monkeypatch.setattr(presence, "PROBE_SECONDS", 0.05)
    monkeypatch.setattr(forward, "REPLY_SECONDS", 0.2)
    table = await db(make_table)
    for user, seat in ((alice, 1), (bob, 2)):
        version = await db(version_of, table)
        sit = {"action": "sit", "seat": seat}
        await db(services.perform, table_id=table.pk, user=user, action=sit, expected_version=version)
    forward.listen(OWNER)  # a live process holding bob's socket
    owner = actors.actor_for(table.pk)
    await owner.presence(alice.pk, "alice-tab", connected=True, holder="live.killed-process")
    await owner.presence(bob.pk, "bob-tab", connected=True, holder=OWNER)

    def seats() -> dict:
        return dict(Seat.objects.filter(table=table).values_list("number", "disconnected_at"))

    assert (await db(seats))[1] is None
    for _ in range(40):
        if (await db(seats))[1] is not None:
            break
        await asyncio.sleep(0.05)
    marks = await db(seats)
    assert marks[1] is not None  # her socket's process did not answer: she is gone, her grace runs
    assert marks[2] is None  # his process answers
    assert owner.connections.users() == {bob.pk}
