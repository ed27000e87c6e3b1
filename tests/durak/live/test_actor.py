"""The Durak table actor: state in memory, one fenced write per accepted command, refusals that change
nothing, the deadline played by the bot, exactly-once, and the chips and ratings of a game's end."""

import asyncio
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import services as wallet
from accounts.audit import audit_ledger
from accounts.models import LedgerEntry
from cards.errors import Refused
from durak import actor as durak_actor
from durak import bot, services
from durak.models import DurakAction, DurakGame, DurakRating, DurakTable
from durak.table import Act, AddBot, Expire, Leave, Sit, timeout_action
from tests.durak.live.conftest import play_out, ready_command, seat_and_start, start_command

pytestmark = pytest.mark.django_db


def stored(table_id):
    return durak_actor.load(table_id)


def test_the_state_in_memory_equals_the_stored_state_after_every_command(open_durak, alice):
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    assert actor.state == stored(table.pk)
    steps = 0
    while actor.state.status == "playing" and steps < 6:
        version = actor.state.version
        seat = actor.state.to_act()
        if actor.state.seats[seat].is_bot:
            actor.handle(Expire(version))
        else:
            move = bot.choose(actor.state.game.state, seat)
            actor.handle(Act(alice.pk, {k: v for k, v in move.items() if k != "player"}))
        assert actor.state.version == version + 1
        assert actor.state == stored(table.pk)
        steps += 1
    assert DurakAction.objects.count() == steps


def test_a_refusal_changes_nothing(open_durak, alice, bob):
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    before = actor.state
    state = before.game.state
    leader, waiting = (alice, bob) if state.attacker == 0 else (bob, alice)
    not_held = state.hands[1 - state.attacker][0]  # a card of the other hand
    cases = [
        (Act(waiting.pk, {"action": "attack", "card": state.hands[1 - state.attacker][0]}), "not_your_turn"),
        (Act(leader.pk, {"action": "attack", "card": not_held}), "not_in_hand"),
        (Act(alice.pk, {"action": "fly"}), "bad_message"),
        (Sit(alice.pk, "Alice"), "already_seated"),
        (start_command(alice), "game_in_play"),
        (Act(alice.pk, {"action": "take"}, expected=before.version - 1), "stale_version"),
    ]
    for command, code in cases:
        with pytest.raises(Refused) as refused:
            actor.handle(command)
        assert refused.value.code == code, command
        assert actor.state is before
        assert stored(table.pk) == before
    assert DurakAction.objects.count() == 0


def test_one_fenced_write_per_command(open_durak, alice):
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    if actor.state.to_act() == 0:  # alice leads: she plays first, so that the bot's move is next
        move = bot.choose(actor.state.game.state, 0)
        actor.handle(Act(alice.pk, {k: v for k, v in move.items() if k != "player"}))
    version = actor.state.version
    with CaptureQueriesContext(connection) as queries:
        assert actor.handle(Expire(version)) == version + 1
    writes = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    assert writes[0].startswith('UPDATE "durak_duraktable"') or writes[0].startswith(
        "UPDATE durak_duraktable"
    )
    assert f"WHERE id = {table.pk} AND version = {version}" in writes[0]
    assert not any(sql.startswith("SELECT") for sql in writes)  # decided from memory
    assert len(writes) == 3  # the fence, the game's state, the action log row


def test_a_change_by_another_writer_is_caught_by_the_fence(open_durak, alice, bob):
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    # Another writer (another process's actor) moves the table: this actor's memory is stale. (It counts no
    # sockets of its own: without marks on load, the versions are the commands'.)
    other = durak_actor.DurakActor(table.pk, marks_on_load=False)
    other.handle(Sit(bob.pk, "Bob"))
    version = actor.handle(Leave(alice.pk))
    assert version == 3
    assert [seat.user_id for seat in stored(table.pk).seats] == [None, bob.pk, None]


def test_an_expiry_is_applied_once(open_durak, alice):
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    version = actor.state.version
    later = timezone.now() + timedelta(minutes=5)
    assert actor.handle(Expire(version), now=later) == version + 1  # the bot (or the table for alice) moves
    assert actor.handle(Expire(version), now=later) is None  # the same deadline again: nothing
    assert DurakAction.objects.filter(version=version + 1).count() == 1


def test_a_resent_command_is_applied_once(open_durak, alice, bob):
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    state = actor.state.game.state
    leader = alice if state.attacker == 0 else bob
    card = state.hands[state.attacker][0]
    command = Act(leader.pk, {"action": "attack", "card": card}, expected=actor.state.version)
    actor.handle(command)
    with pytest.raises(Refused, match="moved on"):
        actor.handle(command)
    assert DurakAction.objects.count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_turn_timer_moves_for_a_player_who_stalls(open_durak, alice, settings):
    settings.LIVE_TIMERS = True
    table = await database_sync_to_async(open_durak)(turn_seconds=1)
    actor = durak_actor.actor_for(table.pk)
    await actor.tell(Sit(alice.pk, "Alice"))
    await actor.tell(AddBot(alice.pk))
    await actor.tell(start_command(alice))

    async def until(condition, seconds: float = 5.0) -> None:
        for _ in range(int(seconds / 0.02)):
            if condition():
                return
            await asyncio.sleep(0.02)
        raise AssertionError("waited in vain")

    # The bot moves at once (DURAK_BOT_SECONDS is 0 here); then it is alice's move, and she stalls.
    await until(lambda: actor.state.to_act() == 0)
    version, state = actor.state.version, actor.state.game.state
    await until(lambda: actor.armed_for(version))  # set once the mailbox has served the move
    await until(lambda: actor.state.version > version)
    logged = await database_sync_to_async(DurakAction.objects.get)(version=version + 1)
    assert logged.seat == 0
    assert logged.by_bot
    assert logged.action == timeout_action(state, 0)  # she leads the cheapest card, takes, or is done


def test_stakes_go_to_the_pot_and_the_fool_pays_the_others(open_durak, alice, bob, make_user, balance):
    carol = make_user("carol", display_name="Carol")
    table = open_durak(seats=3, stake=101)
    actor = seat_and_start(table, alice, bob, carol)
    assert [balance(u) for u in (alice, bob, carol)] == [10_000 - 101] * 3
    users = {0: alice, 1: bob, 2: carol}
    play_out(actor, users)
    game = DurakGame.objects.get()
    assert game.finished
    assert game.pot == 303
    fool = game.fool
    balances = [balance(users[s]) for s in range(3)]
    assert sum(balances) == 30_000  # nothing created or lost
    if fool is None:
        assert balances == [10_000] * 3
    else:
        assert balances[fool] == 10_000 - 101
        first_out, second_out = [s for s in game.state["out"] if s != fool]
        assert balances[first_out] == 10_000 + 51  # 101 // 2 = 50, and the odd chip to the first out
        assert balances[second_out] == 10_000 + 50
    assert audit_ledger().ok
    assert LedgerEntry.objects.filter(game="durak", table_ref=table.pk).count() == 2 * (
        3 + (3 if fool is None else 2)
    )
    ratings = {r.user_id: r for r in DurakRating.objects.all()}
    assert len(ratings) == 3
    assert all(r.games == 1 for r in ratings.values())
    if fool is not None:
        assert ratings[users[fool].pk].rating < 1500 < ratings[users[first_out].pk].rating


def test_a_player_who_cannot_cover_the_stake_is_refused_and_nothing_moves(open_durak, alice, bob, balance):
    # Accounts past a new account's stake limit (`accounts.limits`): only Bob's chips are short.
    type(alice).objects.filter(pk__in=[alice.pk, bob.pk]).update(
        date_joined=timezone.now() - timedelta(days=30)
    )
    table = open_durak(stake=5_000)
    staff = type(alice).objects.create_user("staff", is_staff=True)
    wallet.adjust(user=bob, amount=-9_000, staff=staff, reason="test: Bob is short")
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    actor.handle(Sit(bob.pk, "Bob"))
    actor.handle(ready_command(bob))
    before = actor.state
    with pytest.raises(Refused) as refused:
        actor.handle(start_command(alice))
    assert refused.value.code == "insufficient_chips"
    assert refused.value.message == "Bob cannot cover the stake of 5,000."
    assert actor.state is None  # a commit that failed drops the memory: the next command reads the table
    assert stored(table.pk) == before
    assert (balance(alice), balance(bob)) == (10_000, 1_000)
    assert not DurakGame.objects.exists()
    assert audit_ledger().ok


def test_bots_play_without_chips_so_a_game_against_bots_gives_the_stake_back(open_durak, alice, balance):
    table = open_durak(stake=100)
    actor = seat_and_start(table, alice, bots=1)
    assert balance(alice) == 9_900
    play_out(actor, {0: alice} if actor.state.seats[0].user_id == alice.pk else {1: alice})
    game = DurakGame.objects.get()
    assert game.finished
    # Whoever is the fool, no other player won chips: Alice's stake comes back (a bot's seat wins none).
    assert balance(alice) == 10_000
    assert audit_ledger().ok


def test_a_player_who_leaves_is_played_by_the_bot_and_still_settles(open_durak, alice, bob, balance):
    table = open_durak(stake=50)
    actor = seat_and_start(table, alice, bob)
    actor.handle(Leave(bob.pk))
    assert actor.state.seats[1].away
    play_out(actor, {0: alice})  # bob's seat: the bot, through expiries
    game = DurakGame.objects.get()
    assert balance(alice) + balance(bob) == 20_000
    assert stored(table.pk).seats[1].user_id is None  # his seat is free after the game
    assert DurakAction.objects.filter(game=game, seat=1, by_bot=False).count() == 0
    assert DurakTable.objects.get().status == "waiting"


def test_an_idle_actor_with_a_game_in_play_keeps_its_timer(open_durak, alice, settings):
    settings.LIVE_TIMERS = True
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    actor.evict()
    assert durak_actor.DurakActor.actors.get(table.pk) is actor  # the turn timer still has to ring here
    play_out(actor, {actor.state.seat_of(alice.pk).number: alice})
    assert actor.state.ready_deadline is not None  # the bot is ready: Alice has a minute to be ready too
    actor.evict()
    assert durak_actor.DurakActor.actors.get(table.pk) is actor
    actor.handle(Leave(alice.pk))  # the table closes: no timer left
    actor.evict()
    assert table.pk not in durak_actor.DurakActor.actors


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_version_another_process_committed_is_what_a_read_here_finds(open_durak, alice, bob):
    table = await database_sync_to_async(open_durak)(seats=3)
    actor = durak_actor.actor_for(table.pk)
    await actor.tell(Sit(alice.pk, "Alice"))
    elsewhere = durak_actor.DurakActor(table.pk, marks_on_load=False)  # another process's actor
    await elsewhere.tell(Sit(bob.pk, "Bob"))
    assert actor.state.version == 1
    seen = await database_sync_to_async(durak_actor.load)(table.pk)  # what a viewer here is shown
    assert seen.version == 2
    assert seen.seats[1].user_id == bob.pk


@pytest.mark.parametrize("variant", ["podkidnoy", "passport"])
def test_the_match_carries_to_the_next_game(open_durak, alice, bob, variant):
    table = open_durak(variant=variant)
    actor = seat_and_start(table, alice, bob)
    play_out(actor, {0: alice, 1: bob})
    first = DurakGame.objects.get()
    match = actor.state.match
    assert match.fools == (first.fool,)
    assert stored(table.pk).match == match
    if variant == "passport":
        promoted = first.state["promoted"]
        assert match.passports == tuple("T" if seat in promoted else "6" for seat in range(2))
    actor.handle(ready_command(bob))
    actor.handle(start_command(alice, seed="cd" * 32))
    second = actor.state.game
    assert second.match == match
    assert second.state.passports == match.passports
    if first.fool is not None:
        assert second.state.attacker == (first.fool + 1) % 2  # left of the previous fool


def test_a_version_already_in_the_action_log_is_never_written_twice(open_durak, alice):
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    version = actor.state.version
    game = DurakGame.objects.get()
    DurakAction.objects.create(game=game, version=version + 1, seat=0, action={"action": "take"})
    with pytest.raises(Refused) as refused:
        actor.handle(Expire(version), now=timezone.now() + timedelta(minutes=5))
    assert refused.value.code == "stale_version"
    assert stored(table.pk).version == version  # the fence's update went with the failed transaction
    assert DurakAction.objects.filter(version=version + 1).count() == 1


def test_a_table_closes_when_its_last_player_leaves_between_games(open_durak, alice, bob):
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    actor.handle(Sit(bob.pk, "Bob"))
    actor.handle(AddBot(alice.pk))
    actor.handle(Leave(alice.pk))
    assert actor.state.status == "waiting"  # bob is still there
    actor.handle(Leave(bob.pk))
    closed = stored(table.pk)
    assert closed.status == "closed"
    assert all(seat.empty for seat in closed.seats)  # the bot left with them
    with pytest.raises(Refused, match="closed"):
        actor.handle(Sit(alice.pk, "Alice"))
    assert services.lobby_section(1) == {"durak_tables": []}


def test_a_move_against_a_version_only_marks_replaced_is_applied_and_never_twice(open_durak, alice, bob):
    """A player's socket dropping and coming back (two versions of marks) refuses no other player's move; a
    move resent after it was applied is refused, marks or not."""
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    state = actor.state.game.state
    leader, other = (alice, bob) if state.attacker == 0 else (bob, alice)
    seen = actor.state.version
    actor.count_socket(other.pk, "tab", True)
    assert actor.count_socket(other.pk, "tab", False) == seen + 2
    command = Act(leader.pk, {"action": "attack", "card": state.hands[state.attacker][0]}, expected=seen)
    assert actor.handle(command) == seen + 3
    actor.count_socket(other.pk, "tab", True)  # marks after the move
    with pytest.raises(Refused, match="moved on"):
        actor.handle(command)
    assert DurakAction.objects.count() == 1
