"""A suspended or closed account can do nothing at a Durak table that moves chips or rating: no seat, no
ready or start, no bot, no move, no new table; their seat in a game is played out by the bot and settles as
the seat does, any other seat is freed at once (staff's `Release`)."""

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse

from accounts.audit import audit_ledger
from cards.errors import Refused
from durak import actor as durak_actor
from durak import remote
from durak.models import DurakGame, DurakSeat, DurakTable
from durak.table import Act, AddBot, Sit
from tests.durak.live.conftest import open_durak_table, play_out, ready_command, seat_and_start, start_command

# Transactional: the staff action reaches the table's actor through its owner's mailbox, on other threads.
pytestmark = pytest.mark.django_db(transaction=True)

USERS = reverse("admin:accounts_user_changelist")


@pytest.fixture
def admin_client(client, django_user_model):
    root = django_user_model.objects.create_user("root", is_staff=True, is_superuser=True)
    client.force_login(root)
    return client


def suspend(admin_client, user) -> None:
    response = admin_client.post(USERS, {"action": "suspend", "_selected_action": [user.pk]})
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.suspended


def refused_code(actor, command) -> str:
    before = actor.state
    with pytest.raises(Refused) as refused:
        actor.handle(command)
    assert actor.state is before  # nothing changed
    return refused.value.code


def test_a_player_suspended_mid_game_is_played_out_by_the_bot_and_can_do_nothing(
    admin_client, open_durak, alice, bob, balance
):
    table = open_durak(stake=100)
    actor = seat_and_start(table, alice, bob)
    suspend(admin_client, alice)
    mine = actor.state.seat_of(alice.pk)
    assert mine.away
    assert mine.barred
    for move in ({"action": "take"}, {"action": "done"}, {"action": "attack", "card": "6s"}):
        assert refused_code(actor, Act(alice.pk, move)) == "suspended"
    play_out(actor, {1 - mine.number: bob})
    assert DurakGame.objects.get().finished
    assert balance(alice) + balance(bob) == 20_000  # her stake settled as the seat did
    assert audit_ledger().ok
    assert not DurakSeat.objects.filter(user=alice).exists()  # freed after the game
    for command in (Sit(alice.pk, "Alice", barred=True), ready_command(alice)):
        code = refused_code(actor, command)
        assert code in ("suspended", "not_seated")
    with pytest.raises(Refused) as refused:
        open_durak_table(alice)
    assert refused.value.code == "suspended"


def test_a_player_suspended_between_games_is_stood_up_at_once(admin_client, open_durak, alice, bob):
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    actor.handle(Sit(bob.pk, "Bob"))
    suspend(admin_client, alice)
    assert DurakSeat.objects.get(table=table, number=0).user is None
    assert DurakSeat.objects.get(table=table, number=1).user == bob
    # An actor that loaded the table before the suspension is fenced, and its reload reads her seat free.
    assert durak_actor.load(table.pk).seat_of(alice.pk) is None


def test_a_seat_loaded_after_the_suspension_is_barred(open_durak, alice, bob, django_user_model):
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    actor.handle(Sit(bob.pk, "Bob"))
    django_user_model.objects.filter(pk=alice.pk).update(suspended=True)  # her seat not released (yet)
    durak_actor.forget_actors()
    actor = durak_actor.actor_for(table.pk)
    actor.handle(ready_command(bob))
    for command in (ready_command(alice), start_command(alice), AddBot(alice.pk)):
        assert refused_code(actor, command) == "suspended"
    assert not DurakGame.objects.exists()


def test_a_closed_account_is_stood_up_like_a_suspended_one(open_durak, alice, bob):
    table = open_durak()
    seat_and_start(table, alice, bob)
    alice.is_active = False
    alice.save()
    assert remote.release_user_seats(user=alice) == 1
    seat = durak_actor.load(table.pk).seat_of(alice.pk)
    assert seat.away
    assert seat.barred


def test_a_table_nobody_owns_is_released_by_an_actor_made_for_it(open_durak, alice, bob):
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    actor.handle(Sit(bob.pk, "Bob"))
    durak_actor.forget_actors()
    DurakTable.objects.filter(pk=table.pk).update(owner="", lease_until=None)
    assert remote.release_user(table.pk, alice.pk) is not None
    assert durak_actor.load(table.pk).seat_of(alice.pk) is None
    assert DurakTable.objects.get(pk=table.pk).owner == ""  # the lease handed back


def test_the_open_form_refuses_a_suspended_player(client, alice, django_user_model):
    django_user_model.objects.filter(pk=alice.pk).update(suspended=True)
    client.force_login(alice)
    form = {"name": "x", "variant": "podkidnoy", "attack": "all_sides", "limit": "six", "seats": 2}
    response = client.post(reverse("durak_open"), form | {"stake": 0, "turn_seconds": 30, "rated": "on"})
    assert response.status_code == 200
    assert "suspended" in response.text
    assert not DurakTable.objects.exists()


@pytest.mark.asyncio
async def test_a_suspended_player_reconnecting_on_the_same_session_is_refused(
    open_durak, alice, bob, connect, django_user_model
):
    table = await database_sync_to_async(open_durak)(seats=3)
    await database_sync_to_async(django_user_model.objects.filter(pk=alice.pk).update)(suspended=True)
    player = await connect(table, alice)  # her session still logs her in
    await player.act("sit")
    error = await player.error()
    assert error["code"] == "suspended"
    seats = await database_sync_to_async(list)(DurakSeat.objects.filter(table=table, user=alice))
    assert seats == []
