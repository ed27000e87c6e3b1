"""A Durak table nobody holds (issue 31, item 3; issue 34, item 7): between games, a seated player with no
socket at the table loses the seat after the grace, an idle one once the ready deadline passes, and a table
whose players all left leaves the lobby."""

from datetime import timedelta

import pytest
from django.utils import timezone

from durak import actor as durak_actor
from durak import services
from durak.models import DurakSeat, DurakTable, Status
from durak.table import READY_SECONDS, Expire, Ready, Sit

pytestmark = pytest.mark.django_db


def test_players_who_closed_their_pages_between_games_are_stood_up_and_the_table_leaves_the_lobby(
    open_durak, alice, bob
):
    table = open_durak(seats=2)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    actor.handle(Sit(bob.pk, "Bob"))
    actor.count_socket(alice.pk, "a1", True)
    actor.count_socket(bob.pk, "b1", True)
    assert services.lobby_section(1)["durak_tables"][0]["taken"] == 2  # full
    actor.count_socket(alice.pk, "a1", False)
    actor.count_socket(bob.pk, "b1", False)
    assert actor.state.deadline is not None  # their graces run
    later = timezone.now() + timedelta(seconds=actor.grace_seconds + 1)
    actor.handle(Expire(actor.state.version), now=later)
    stored = DurakTable.objects.get(pk=table.pk)
    assert stored.status == Status.CLOSED
    assert not DurakSeat.objects.filter(table=table, user__isnull=False).exists()
    assert services.lobby_section(1)["durak_tables"] == []


def test_a_player_who_stays_but_never_gets_ready_stands_up_and_the_others_play(
    open_durak, alice, bob, make_user
):
    carol = make_user("carol")
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    for user in (alice, bob, carol):
        actor.handle(Sit(user.pk, user.public_name))
        actor.count_socket(user.pk, user.username, True)
    for user in (alice, bob):
        actor.handle(Ready(user.pk, fresh_seed="ab" * 32, seed=user.username))
    assert actor.state.status == "waiting"  # Carol holds the table
    deadline = actor.state.ready_deadline
    assert deadline is not None
    assert deadline - timezone.now() <= timedelta(seconds=READY_SECONDS)
    actor.handle(Expire(actor.state.version, fresh_seed="cd" * 32), now=deadline)
    assert actor.state.status == "playing"
    assert actor.state.game.players == (alice.pk, bob.pk)
    assert actor.state.seat_of(carol.pk) is None
    assert not DurakSeat.objects.filter(table=table, user=carol).exists()
