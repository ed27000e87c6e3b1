"""The Durak pages: opening a table, the table page, the lobby's Durak rows, the leaderboard, a player's
history, its exports and a finished game's replay rebuilt from the action log."""

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from cards.fairness import seed_hash
from durak import actor as durak_actor
from durak.engine.rules import VARIANTS
from durak.models import DurakGame, DurakRating, DurakSeat, DurakTable, Status
from durak.table import Sit
from tests.durak.live.conftest import play_out, ready_command, seat_and_start

pytestmark = pytest.mark.django_db


def test_a_player_opens_a_durak_table_and_it_is_in_the_lobby(client, alice):
    client.force_login(alice)
    form = {
        "name": "Friday fools",
        "variant": "perevodnoy",
        "attack": "neighbours",
        "limit": "five_first_bout",
        "seats": 4,
        "stake": 25,
        "rated": "on",
        "turn_seconds": 20,
    }
    response = client.post(reverse("durak_open"), form)
    table = DurakTable.objects.get()
    assert response.url == reverse("durak_table", args=[table.pk])
    assert DurakSeat.objects.filter(table=table).count() == 4
    lobby = client.get(reverse("lobby")).content.decode()
    assert "Friday fools" in lobby
    assert "Perevodnoy" in lobby
    assert "0 of 4" in lobby
    page = client.get(response.url).content.decode()
    assert 'ws-connect="/ws/durak/' in page
    assert "Sit down" in page
    # The waiting room shows the next deck's committed server seed (its hash), before anyone is ready.
    assert f'data-next-seed-hash="{seed_hash(table.next_server_seed)}"' in page
    assert table.next_server_seed not in page


def test_bad_options_are_refused_and_no_table_is_made(client, alice):
    client.force_login(alice)
    for bad in ({"seats": 7}, {"seats": 1}, {"variant": "bridge"}, {"stake": -5}, {"turn_seconds": 2}):
        form = {"name": "x", "variant": "podkidnoy", "attack": "all_sides", "limit": "six", "seats": 2}
        form |= {"stake": 0, "turn_seconds": 30} | bad
        response = client.post(reverse("durak_open"), form)
        assert response.status_code == 200, bad
        assert response.context["form"].errors, bad
    assert not DurakTable.objects.exists()


def test_leaderboard_history_and_a_replay_that_ends_in_the_stored_state(
    client, alice, bob, open_durak, settings
):
    settings.DURAK_LEADERBOARD_MIN_OPPONENTS = 1
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    play_out(actor, {0: alice, 1: bob})
    game = DurakGame.objects.get()
    client.force_login(alice)
    board = client.get(reverse("durak_leaderboard"), {"variant": "podkidnoy"}).content.decode()
    assert "Alice" in board
    assert "Bob" in board
    history = client.get(reverse("durak_history")).content.decode()
    assert reverse("durak_replay", args=[game.pk]) in history
    replay = client.get(reverse("durak_replay", args=[game.pk]))
    assert replay.context["matches"]
    assert len(replay.context["steps"]) == game.actions.count() + 1
    client.force_login(
        type(alice).objects.create_user(username="carol", password="Durak-tests-1")
    )  # not a player of it
    assert client.get(reverse("durak_replay", args=[game.pk])).status_code == 404


def test_staff_see_durak_tables_and_games_in_the_admin_read_only(client, alice, bob, open_durak, make_user):
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    play_out(actor, {0: alice, 1: bob})
    staff = make_user("staff", is_staff=True, is_superuser=True)
    client.force_login(staff)
    for name in ("duraktable", "durakgame", "durakaction", "durakrating"):
        listing = client.get(reverse(f"admin:durak_{name}_changelist"))
        assert listing.status_code == 200, name
    page = client.get(reverse("admin:durak_duraktable_change", args=[table.pk]))
    assert page.status_code == 200
    assert b"Durak test" in page.content
    response = client.post(reverse("admin:durak_duraktable_change", args=[table.pk]), {"name": "Renamed"})
    assert response.status_code == 403
    assert DurakTable.objects.get().name == "Durak test"


def test_ratings_and_leaderboards_are_per_variant(client, alice, bob, open_durak, settings):
    settings.DURAK_LEADERBOARD_MIN_OPPONENTS = 1
    actor = seat_and_start(open_durak(variant="perevodnoy"), alice, bob)
    play_out(actor, {0: alice, 1: bob})
    game = DurakGame.objects.get()
    rows = DurakRating.objects.filter(user__in=[alice, bob])
    assert {row.variant for row in rows} == {"perevodnoy"}
    assert all(row.games == 1 for row in rows)
    if game.fool is not None:
        winner = rows.get(user_id=game.players[1 - game.fool])
        assert winner.streak == winner.best_streak == 1
        assert rows.get(user_id=game.players[game.fool]).fools == 1
    board = client.get(reverse("durak_leaderboard"), {"variant": "perevodnoy"}).content.decode()
    assert "Alice" in board
    assert "Bob" in board
    assert "Win streak" in board
    assert "Alice" not in client.get(reverse("durak_leaderboard")).content.decode()  # Podkidnoy's
    assert client.get(reverse("durak_leaderboard"), {"variant": "poker"}).status_code == 404


def test_the_lobby_filters_by_game(client, open_durak):
    open_durak(name="Fools corner")
    everything = client.get(reverse("lobby")).content.decode()
    assert 'id="lobby-tables"' in everything
    assert "Fools corner" in everything
    durak = client.get(reverse("lobby"), {"game": "durak"}).content.decode()
    assert 'id="lobby-tables"' not in durak
    assert "Fools corner" in durak
    assert "game=durak" in durak  # the live updates keep the filter
    blackjack = client.get(reverse("lobby"), {"game": "blackjack"}).content.decode()
    assert 'id="lobby-tables"' in blackjack
    assert 'id="durak-tables"' not in blackjack
    assert 'id="durak-tables"' in client.get(reverse("lobby"), {"game": "poker"}).content.decode()


def test_a_player_exports_every_finished_game_with_its_seeds_as_csv_and_json(client, alice, bob, open_durak):
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    play_out(actor, {0: alice, 1: bob})
    game = DurakGame.objects.get()
    client.force_login(alice)
    history = client.get(reverse("durak_history")).content.decode()
    assert reverse("durak_history_export", args=["csv"]) in history

    response = client.get(reverse("durak_history_export", args=["json"]))
    assert response["Content-Disposition"].startswith('attachment; filename="durak-history-alice-')
    exported = json.loads(b"".join(response.streaming_content))
    assert exported["player"] == "alice"
    [row] = exported["games"]
    seat = game.players.index(alice.pk)
    assert (row["game_id"], row["seat"], row["players"]) == (game.pk, seat + 1, 2)
    assert row["result"] == ("draw" if game.fool is None else "fool" if game.fool == seat else "out")
    assert (row["server_seed"], row["server_seed_hash"], row["client_seed"]) == (
        game.server_seed,
        game.server_seed_hash,
        game.client_seed,
    )
    assert row["net"] == row["payout"] - row["stake"]

    lines = b"".join(client.get(reverse("durak_history_export", args=["csv"])).streaming_content).decode()
    header, data = list(csv.reader(io.StringIO(lines)))
    assert header[:2] == ["game_id", "table_id"]
    assert dict(zip(header, data, strict=True))["server_seed"] == game.server_seed

    assert client.get("/durak/history/export.xml").status_code == 404
    client.logout()
    assert client.get(reverse("durak_history_export", args=["csv"])).status_code == 302  # log in first


def test_a_table_name_that_looks_like_a_formula_is_quoted_in_the_csv(client, alice, bob, open_durak):
    table = open_durak()
    DurakTable.objects.filter(pk=table.pk).update(name="=HYPERLINK(1)")
    actor = seat_and_start(DurakTable.objects.get(pk=table.pk), alice, bob)
    play_out(actor, {0: alice, 1: bob})
    client.force_login(alice)
    lines = b"".join(client.get(reverse("durak_history_export", args=["csv"])).streaming_content).decode()
    header, data = list(csv.reader(io.StringIO(lines)))
    assert dict(zip(header, data, strict=True))["table"] == "'=HYPERLINK(1)"


def test_make_run_seeds_a_durak_table_of_each_variant_that_plays(client, alice, bob):
    """`seed_demo` (run by `make run`) opens one Durak table of each variant, once; the site's own tables
    have no opener, so a game starts when every seated player is ready; a demo table that closed is opened
    again."""
    call_command("seed_demo", verbosity=0)
    call_command("seed_demo", verbosity=0)
    tables = DurakTable.objects.exclude(status=Status.CLOSED)
    assert sorted(tables.values_list("variant", flat=True)) == sorted(VARIANTS)
    for table in tables:
        assert table.created_by_id is None
        assert DurakSeat.objects.filter(table=table).count() == table.seats
    lobby = client.get(reverse("lobby"), {"game": "durak"}).content.decode()
    assert all(table.name in lobby for table in tables)
    client.force_login(alice)
    passport = tables.get(variant="passport")
    assert client.get(reverse("durak_table", args=[passport.pk])).status_code == 200

    actor = durak_actor.actor_for(passport.pk)
    for user in (alice, bob):
        actor.handle(Sit(user.pk, user.public_name))
    actor.handle(ready_command(alice))
    assert actor.state.status == "waiting"
    actor.handle(ready_command(bob))
    assert actor.state.status == "playing"

    DurakTable.objects.filter(pk=passport.pk).update(status=Status.CLOSED)
    call_command("seed_demo", verbosity=0)
    assert DurakTable.objects.filter(name=passport.name).exclude(status=Status.CLOSED).count() == 1


def test_the_open_forms_of_both_games_say_which_game_they_open(client, alice):
    client.force_login(alice)
    durak = client.get(reverse("durak_open")).content.decode()
    assert "<title>Open a Durak table" in durak
    assert "<h1>Open a Durak table</h1>" in durak
    assert 'name="variant"' in durak
    blackjack = client.get(reverse("open_table")).content.decode()
    assert "<h1>Open a blackjack table</h1>" in blackjack
    assert 'name="variant"' not in blackjack
