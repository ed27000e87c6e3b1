"""Durak tables in the staff admin (issue 34, item 5; issue 31, staff tools for every game): close, reopen and
stand a player up through the table's owner; a live game's hands, talon and server seeds are never shown, nor
filtered on."""

import pytest
from django.urls import reverse

from durak.actor import DurakActor
from durak.models import DurakGame, DurakSeat, DurakTable, Status
from durak.table import Sit
from tests.durak.live.conftest import open_durak_table, play_out, seat_and_start

pytestmark = pytest.mark.django_db(transaction=True)


def action(client, name: str, model: str, rows) -> None:
    url = reverse(f"admin:durak_{model}_changelist")
    response = client.post(url, {"action": name, "_selected_action": [row.pk for row in rows]})
    assert response.status_code == 302, response.content[:500]


def test_staff_close_a_table_between_games_and_open_it_again(admin_client, alice, bob):
    table = open_durak_table(alice, seats=3)
    actor = DurakActor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    actor.handle(Sit(bob.pk, "Bob"))
    action(admin_client, "close_tables", "duraktable", [table])
    closed = DurakTable.objects.get(pk=table.pk)
    assert closed.status == Status.CLOSED
    assert not DurakSeat.objects.filter(table=table, user__isnull=False).exists()
    assert actor.state.status == "closed"  # the owner applied it: its memory is the row
    action(admin_client, "reopen_tables", "duraktable", [table])
    assert DurakTable.objects.get(pk=table.pk).status == Status.WAITING


def test_a_table_closed_during_a_game_closes_when_the_game_ends(admin_client, alice, bob):
    table = open_durak_table(alice, seats=3)
    actor = seat_and_start(table, alice, bob)
    action(admin_client, "close_tables", "duraktable", [table])
    assert DurakTable.objects.get(pk=table.pk).status == Status.PLAYING
    assert DurakTable.objects.get(pk=table.pk).closing
    play_out(actor, {0: alice, 1: bob})
    ended = DurakTable.objects.get(pk=table.pk)
    assert ended.status == Status.CLOSED
    assert not ended.closing
    assert DurakGame.objects.get(table=table).finished


def test_staff_stand_a_player_up_and_the_bot_finishes_the_game(admin_client, alice, bob):
    table = open_durak_table(alice, seats=3)
    actor = seat_and_start(table, alice, bob)
    seat = DurakSeat.objects.get(table=table, user=bob)
    action(admin_client, "stand_up", "durakseat", [seat])
    mine = actor.state.seat_of(bob.pk)
    assert mine.away
    assert mine.barred
    play_out(actor, {actor.state.seat_of(alice.pk).number: alice})
    assert DurakSeat.objects.filter(table=table, user=bob).count() == 0


def test_a_live_game_shows_no_hands_nor_seeds_and_they_cannot_be_filtered_on(admin_client, alice, bob):
    table = open_durak_table(alice, seats=2)
    actor = seat_and_start(table, alice, bob)
    game = DurakGame.objects.get(table=table)
    row = DurakTable.objects.get(pk=table.pk)
    page = admin_client.get(reverse("admin:durak_durakgame_change", args=[game.pk])).content.decode()
    hand = actor.state.game.state.hands[0]
    assert game.server_seed not in page
    assert not any(f'"{card}"' in page or f"'{card}'" in page for card in hand)
    table_page = admin_client.get(reverse("admin:durak_duraktable_change", args=[table.pk])).content.decode()
    assert row.next_server_seed not in table_page
    assert row.private_token not in table_page
    for model, lookup, value in [
        ("duraktable", "next_server_seed__startswith", row.next_server_seed[0]),
        ("duraktable", "private_token", row.private_token),
        ("durakgame", "server_seed__startswith", game.server_seed[0]),
        ("durakgame", "state__contains", "h"),
    ]:
        response = admin_client.get(reverse(f"admin:durak_{model}_changelist"), {lookup: value})
        assert response.status_code == 400, (model, lookup)
    # Once over, a game's seed is revealed in the admin too.
    play_out(actor, {0: alice, 1: bob})
    finished = admin_client.get(reverse("admin:durak_durakgame_change", args=[game.pk])).content.decode()
    assert game.server_seed in finished


def test_a_table_s_own_page_stays_read_only(admin_client, alice):
    table = open_durak_table(alice)
    response = admin_client.post(
        reverse("admin:durak_duraktable_change", args=[table.pk]), {"name": "Renamed"}
    )
    assert response.status_code == 403
    assert DurakTable.objects.get(pk=table.pk).name == "Durak test"
