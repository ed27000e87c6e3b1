"""The table actor spike (`blackjack.actors`): state in memory between commands, one fenced write per command.

The core property: after every command the actor's state equals the state recovered from the database. Also:
a change made by another writer is caught by the version fence (the actor reloads and goes on), a refusal
changes nothing, and commands told to the mailbox at once are applied one at a time, in order.
"""

import asyncio
import logging
import select

import psycopg
import pytest
from channels.db import database_sync_to_async
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.audit import audit_ledger
from blackjack import actors, flow, services
from blackjack.models import ActionLog, Seat, Table, TableEvent
from blackjack.services import load, store
from cards.errors import Refused
from live import clock, process
from live import clock as live_clock
from tests.blackjack.conftest import deal_cards, round_trips
from tests.blackjack.wsclient import CommunicatorClient, move, session_cookie


@pytest.fixture(autouse=True)
def _no_actors_left():
    actors.forget_actors()
    yield
    actors.forget_actors()


def version_of(table) -> int:
    return Table.objects.values_list("version", flat=True).get(pk=table.pk)


def tell(table, user, name, **args) -> int:
    actor = actors.actor_for(table.pk)
    action = {"action": name, **args}
    return actor.handle(actors.player_action(user, action, version_of(table)))


def recovered(table):
    with transaction.atomic():
        return load.begin(table.pk).state


def comparable(state):
    """The state without the engine state of a round that is over (kept in memory from the command that ended
    it; not loaded from the database: nothing reads it any more)."""
    state = state.copy()
    if state.round is not None and state.round.is_over:
        state.round.engine = None
    return state


@pytest.mark.django_db
def test_the_state_in_memory_equals_the_state_recovered_after_every_command(
    table, alice, bob, scripted_shoe, balance
):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["8c", "8d"], dealer=["7c", "Kd"], then=["5s"]) * 3)
    script = [
        (alice, "sit", {"seat": 1}),
        (bob, "sit", {"seat": 2}),
        (alice, "bet", {"amount": 100}),
        (bob, "bet", {"amount": 50}),
        (alice, "stand", {}),
        (bob, "hit", {}),  # settles: 19 and 21 against 17
        (alice, "ready", {}),
        (bob, "ready", {}),
        (alice, "bet", {"amount": 20}),
        (bob, "leave", {}),
    ]
    actor = actors.actor_for(table.pk)
    for user, name, args in script:
        tell(table, user, name, **args)
        assert comparable(actor.state.state) == recovered(table), (name, args)
    assert balance(alice) == 10_000 + 100 - 20
    assert balance(bob) == 10_000 + 50
    assert audit_ledger().ok


@pytest.mark.django_db
def test_a_change_by_another_writer_is_fenced_and_the_actor_reloads(table, alice, bob, carol, act):
    seen = tell(table, alice, "sit", seat=1)
    actor = actors.actor_for(table.pk)
    act(table, bob, "sit", seat=2)  # through the services, behind the actor's back
    assert actor.state.state.version == seen == version_of(table) - 1
    # Alice bets against the version she saw, which is the actor's: the write finds the table moved on (the
    # fence), the actor reloads and decides again (a bet in the window may carry a version others made stale).
    bet = actors.player_action(alice, {"action": "bet", "amount": 10}, seen)
    assert actor.handle(bet) == seen + 2 == version_of(table)
    assert comparable(actor.state.state) == recovered(table)
    assert actor.state.state.seats[2].player.id == bob.pk
    # A client that saw another writer's version newer than the actor's is not refused as stale either.
    act(table, carol, "sit", seat=3)
    assert tell(table, bob, "bet", amount=10) == version_of(table)
    assert comparable(actor.state.state) == recovered(table)


@pytest.mark.django_db
def test_a_version_older_than_the_actors_is_refused_as_stale_without_a_query(table, alice, bob):
    tell(table, alice, "sit", seat=1)
    seen = tell(table, bob, "sit", seat=2)
    actor = actors.actor_for(table.pk)
    loaded = actor.state
    old_hit = actors.player_action(alice, {"action": "hit"}, seen - 1)  # a turn action needs the current v
    with CaptureQueriesContext(connection) as queries, pytest.raises(Refused) as refused:
        actor.handle(old_hit)
    assert refused.value.code == "stale_version"
    assert len(queries) == 0  # nobody else wrote: the state in memory stays, nothing is read again
    assert actor.state is loaded


@pytest.mark.django_db
def test_a_turn_action_against_a_version_only_marks_replaced_is_applied_and_never_twice(
    table, alice, bob, scripted_shoe
):
    """Bob's socket dropping and coming back (two versions of marks) does not make Alice's hit stale; the hit
    resent after it was applied is refused, marks or not."""
    scripted_shoe(table, deal_cards(["Ts", "6h"], ["8c", "8d"], dealer=["7c", "Kd"], then=["2s"]))
    tell(table, alice, "sit", seat=1)
    tell(table, bob, "sit", seat=2)
    tell(table, alice, "bet", amount=10)
    seen = tell(table, bob, "bet", amount=10)  # dealt: Alice's turn
    actor = actors.actor_for(table.pk)
    actor.count_socket(bob.pk, "tab", True)
    assert actor.count_socket(bob.pk, "tab", False) == seen + 2
    hit = actors.player_action(alice, {"action": "hit"}, seen)
    assert actor.handle(hit) == seen + 3
    actor.count_socket(bob.pk, "tab", True)  # marks after the hit
    with pytest.raises(Refused) as refused:
        actor.handle(hit)
    assert refused.value.code == "stale_version"
    assert len(actor.state.state.round.engine.seats[1].hands[0].cards) == 3


@pytest.mark.django_db
def test_a_refusal_writes_nothing_and_keeps_the_state(table, alice):
    tell(table, alice, "sit", seat=1)
    actor = actors.actor_for(table.pk)
    before = actor.state.state.copy()
    with pytest.raises(Refused) as refused:
        tell(table, alice, "bet", amount=5)
    assert refused.value.code == "bad_amount"
    assert actor.state.state == before
    assert recovered(table) == before


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_commands_told_at_once_are_applied_in_order(make_table, make_user):
    table = await database_sync_to_async(make_table)()
    ann, bob, cid = [await database_sync_to_async(make_user)(name) for name in ("ann", "bob", "cid")]
    first = await actors.perform(
        table_id=table.pk, user=ann, action={"action": "sit", "seat": 1}, expected_version=0
    )
    # Side by side in the betting window, each against the version it saw: all three are applied, in order.
    sits = [
        actors.perform(
            table_id=table.pk, user=user, action={"action": "sit", "seat": n}, expected_version=first
        )
        for n, user in ((2, bob), (3, cid))
    ]
    bet = actors.perform(
        table_id=table.pk, user=ann, action={"action": "bet", "amount": 10}, expected_version=first
    )
    versions = await asyncio.gather(*sits, bet)
    assert versions == [first + 1, first + 2, first + 3]
    rows = await database_sync_to_async(
        lambda: list(ActionLog.objects.filter(table=table).values_list("version_after", "action"))
    )()
    assert rows == [(first + 3, {"action": "bet", "seat": 1, "amount": 10})]


# --- the actor map, the consumers and the deadline timers ------------------------------------------------


async def db(function, *args, **kwargs):
    return await database_sync_to_async(function)(*args, **kwargs)


def timeouts(table) -> int:
    return TableEvent.objects.filter(table=table, kind="timeout").count()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_consumer_hands_actions_to_the_tables_actor(make_table, alice):
    table = await db(make_table)
    cookie = await db(session_cookie, alice)
    client = CommunicatorClient("alice", f"/ws/tables/{table.pk}/?format=json", cookie=cookie)
    assert await client.connect()
    await client.receive()
    try:
        state = await move(client, "sit", seat=1)
        actor = actors.BlackjackActor.actors[table.pk]
        assert actor.state.state.version == state["v"] == await db(version_of, table)
        # A refusal keeps its code and changes nothing, in the database or in memory.
        await client.send({"action": "bet", "amount": 5, "v": state["v"]})
        assert (await client.error())["code"] == "bad_amount"
        assert actor.state.state.version == await db(version_of, table) == state["v"]
    finally:
        await client.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_an_idle_actor_leaves_the_map(make_table, alice, monkeypatch):
    monkeypatch.setattr(actors.BlackjackActor, "idle_seconds", 0.05)
    table = await db(make_table)
    await actors.perform(
        table_id=table.pk, user=alice, action={"action": "sit", "seat": 1}, expected_version=0
    )
    first = actors.BlackjackActor.actors[table.pk]
    await asyncio.sleep(0.2)
    assert table.pk not in actors.BlackjackActor.actors
    # The next command makes a new actor, which loads the table afresh.
    version = await db(version_of, table)
    await actors.perform(
        table_id=table.pk, user=alice, action={"action": "bet", "amount": 10}, expected_version=version
    )
    assert actors.BlackjackActor.actors[table.pk] is not first
    # The new actor counts no socket of hers: it marks her seat (her grace period runs), then takes the bet.
    assert actors.BlackjackActor.actors[table.pk].state.state.version == version + 2
    assert (await db(Seat.objects.get, table=table, number=1)).disconnected_at is not None


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_an_actor_counting_open_sockets_stays_in_the_map(make_table, alice, monkeypatch):
    monkeypatch.setattr(actors.BlackjackActor, "idle_seconds", 0.05)
    table = await db(make_table)
    actor = actors.actor_for(table.pk)
    await actor.presence(alice.pk, "tab-1", connected=True, holder=process.name())
    await asyncio.sleep(0.2)
    assert actors.BlackjackActor.actors[table.pk] is actor  # its count of her socket would be lost with it
    await actor.presence(alice.pk, "tab-1", connected=False, holder=process.name())
    await asyncio.sleep(0.2)
    assert table.pk not in actors.BlackjackActor.actors


async def wait_for(predicate, seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if await db(predicate):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within the time allowed")


@pytest.fixture
def timers_on(settings):
    """Deadlines are enforced as in a server (in the tests' process the clock and the actors' timers are
    off)."""
    settings.LIVE_TIMERS = True


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_actors_timer_applies_the_deadline_once(make_table, alice, timers_on):
    table = await db(make_table, betting_seconds=1)
    sat = await actors.perform(
        table_id=table.pk, user=alice, action={"action": "sit", "seat": 1}, expected_version=0
    )
    deadline = actors.BlackjackActor.actors[table.pk].state.state.deadline
    assert deadline is not None
    await wait_for(lambda: timeouts(table) == 1)  # the timer rang and the expiry was committed
    actor = actors.BlackjackActor.actors[table.pk]
    assert actor.state.state.version == await db(version_of, table) > sat
    # The clock's sweep comes by later with the same deadline: it is applied already.
    assert await db(store.run, table.pk, flow.Expire(sat), now=deadline) is None
    assert await db(clock.sweep, now=deadline) == 0
    assert await db(timeouts, table) == 1
    assert (await db(audit_ledger)).ok


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_deadline_another_writer_applied_first_is_not_applied_again_by_the_timer(
    make_table, alice, timers_on
):
    table = await db(make_table, betting_seconds=1)
    sat = await actors.perform(
        table_id=table.pk, user=alice, action={"action": "sit", "seat": 1}, expected_version=0
    )
    actor = actors.BlackjackActor.actors[table.pk]
    deadline = actor.state.state.deadline
    # Another writer applies the deadline behind the actor's back, before its timer rings.
    assert await db(store.run, table.pk, flow.Expire(sat), now=deadline) is not None
    expired = await db(version_of, table)
    # The timer rings with the actor still at the version it armed for: its expiry is decided on the state in
    # memory, the fence finds the table moved on, the actor reloads and the expiry of `sat` is a no-op.
    assert actor.state.state.version == sat
    await asyncio.sleep((deadline - timezone.now()).total_seconds() + 0.3)
    await actor.tell(lambda loaded: flow.Expire(sat))  # and once more through the mailbox, to be sure
    assert await db(timeouts, table) == 1
    assert await db(version_of, table) == expired
    assert actor.state is None or actor.state.state.version == expired


# --- the fence as the first statement of the write pipeline (PostgreSQL) ---------------------------------


@pytest.mark.postgres  # a pipeline needs PostgreSQL
@pytest.mark.django_db(transaction=True)  # no test transaction around: its savepoints would be counted
def test_an_ordinary_action_is_one_round_trip_before_commit(table, alice, bob):
    tell(table, alice, "sit", seat=1)
    seen = tell(table, bob, "sit", seat=2)
    sit = actors.player_action(bob, {"action": "sit", "seat": 3}, seen)
    with round_trips() as trips, CaptureQueriesContext(connection) as queries:
        # No chips move, no row is made: the fence and the writes go in one pipeline (psycopg sends BEGIN
        # with its first statement), then COMMIT: two round trips.
        assert actors.actor_for(table.pk).handle(sit) == seen + 1
    sql = [query["sql"] for query in queries]
    assert [len(trip) for trip in trips] == [len(sql) - 2], sql  # every statement between BEGIN and COMMIT
    assert [sql[0], sql[-1]] == ["BEGIN", "COMMIT"], sql
    assert sql[1].startswith("WITH fenced AS (UPDATE"), sql
    assert not [statement for statement in sql if statement.lstrip().upper().startswith("SELECT")], sql


@pytest.mark.postgres  # a pipeline needs PostgreSQL
@pytest.mark.django_db
def test_the_fence_in_the_pipeline_catches_another_writer(table, alice, bob, carol, act, monkeypatch):
    seen = tell(table, alice, "sit", seat=1)
    actor = actors.actor_for(table.pk)
    act(table, bob, "sit", seat=2)  # behind the actor's back
    firsts = []
    write = store.write

    def spy(loaded, outcome, **options):
        firsts.append(options.get("first") is not None)
        return write(loaded, outcome, **options)

    monkeypatch.setattr(store, "write", spy)
    # Carol's sit, decided on the state in memory, is fenced in its pipeline; the actor reloads and decides
    # it again on the table as it is.
    assert actor.handle(actors.player_action(carol, {"action": "sit", "seat": 3}, seen)) == seen + 2
    assert firsts == [True, True]
    assert comparable(actor.state.state) == recovered(table)
    assert {n: seat.player.id for n, seat in actor.state.state.seats.items() if seat.player} == {
        1: alice.pk,
        2: bob.pk,
        3: carol.pk,
    }


@pytest.mark.postgres  # a pipeline needs PostgreSQL
@pytest.mark.django_db
def test_a_fence_miss_reported_while_the_pipeline_is_sent_ends_the_pipeline_cleanly(
    table, alice, bob, carol, act, monkeypatch, caplog
):
    """psycopg may report the fence's error while the pipeline's later statements are being sent (the server
    answered meanwhile, as on a loaded machine): the actor still reloads and goes on, and psycopg has no
    error left to log as it ends the pipeline ("error ignored terminating <psycopg.Pipeline ...>")."""
    seen = tell(table, alice, "sit", seat=1)
    actor = actors.actor_for(table.pk)
    act(table, bob, "sit", seat=2)  # behind the actor's back: the fence misses
    execute = psycopg.Cursor.execute
    answered = []

    def execute_then_wait(self, query, params=None, **options):
        result = execute(self, query, params, **options)
        if not answered and isinstance(query, str) and query.startswith("WITH fenced"):
            # The server's answer to the fence arrives before the rest of the pipeline is sent.
            answered.append(bool(select.select([self.connection.fileno()], [], [], 5)[0]))
        return result

    monkeypatch.setattr(psycopg.Cursor, "execute", execute_then_wait)
    with caplog.at_level(logging.WARNING, logger="psycopg"):
        assert actor.handle(actors.player_action(carol, {"action": "sit", "seat": 3}, seen)) == seen + 2
    assert answered == [True]
    assert [record.getMessage() for record in caplog.records if record.name.startswith("psycopg")] == []
    assert comparable(actor.state.state) == recovered(table)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_sweep_leaves_a_deadline_to_this_processs_actor_unless_it_is_overdue(
    make_table, alice, timers_on
):
    table = await db(make_table, betting_seconds=30)
    await actors.perform(
        table_id=table.pk, user=alice, action={"action": "sit", "seat": 1}, expected_version=0
    )
    deadline = actors.BlackjackActor.actors[table.pk].state.state.deadline
    assert await db(clock.sweep, now=deadline) == 0
    # Overdue past the grace (the actor is stuck, say), the sweep applies it, fenced like the actor.
    late = deadline + live_clock.OWNED_GRACE
    assert await db(clock.sweep, now=late) == 1
    assert await db(timeouts, table) == 1
    # The actor's lease was not handed back: the actor still owns the table.
    assert await db(lambda: Table.objects.values_list("owner", flat=True).get(pk=table.pk)) == process.name()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_sweep_applies_a_deadline_this_processs_actor_does_not_know_of(
    make_table, alice, bob, timers_on
):
    table = await db(make_table, betting_seconds=30)
    sat = await actors.perform(
        table_id=table.pk, user=alice, action={"action": "sit", "seat": 1}, expected_version=0
    )
    actor = actors.BlackjackActor.actors[table.pk]
    # Another writer moves the table on behind the actor's back: its timer is set for a version gone by.
    await db(
        services.perform,
        table_id=table.pk,
        user=bob,
        action={"action": "sit", "seat": 2},
        expected_version=sat,
    )
    deadline = await db(lambda: Table.objects.get(pk=table.pk).deadline)
    assert not actor.armed_for(await db(version_of, table))
    assert await db(clock.sweep, now=deadline) == 1
    assert await db(timeouts, table) == 1
