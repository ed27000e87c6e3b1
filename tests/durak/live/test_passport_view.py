"""A Passport table with more seats than players in its match: the page and every browser view render (each
seat shows its own passport, a seat outside the match none), during the game and after it."""

from dataclasses import replace

import pytest
from django.urls import reverse

from durak import actor as durak_actor
from durak.rendering import region
from durak.table import Sit
from durak.view import table_view
from tests.durak.live.conftest import play_out, seat_and_start

pytestmark = pytest.mark.django_db


def rendered(table, user_id) -> str:
    return str(region("page", {"view": table_view(table, user_id)}))


def test_a_passport_table_with_an_empty_seat_and_a_player_sitting_out_renders(
    client, open_durak, alice, bob, make_user
):
    carol = make_user("carol", display_name="Carol")
    table = open_durak(variant="passport", seats=4)
    actor = seat_and_start(table, alice, bots=1)  # two play: seats 3 and 4 are empty
    actor.handle(Sit(bob.pk, "Bob"))  # bob sits the game out
    assert len(actor.state.match.passports) == 2
    for viewer in (alice, bob, carol, None):
        html = rendered(actor.state, viewer.pk if viewer else None)
        assert html.count("passport 6") == 2
    view = table_view(actor.state, bob.pk)
    assert [seat["passport"] for seat in view["seats"]] == ["6", "6", None, None]
    client.force_login(carol)
    assert client.get(reverse("durak_table", args=[table.pk])).status_code == 200

    play_out(actor, {actor.state.seat_of(alice.pk).number: alice})
    for viewer in (alice, bob, carol, None):
        html = rendered(actor.state, viewer.pk if viewer else None)
        assert 'id="durak-result"' in html
    assert table_view(actor.state, bob.pk)["game"]["paid_you"] is None
    client.force_login(bob)
    assert client.get(reverse("durak_table", args=[table.pk])).status_code == 200
    durak_actor.forget_actors()


def test_a_promoted_passport_reads_as_players_write_it(open_durak, alice, bob):
    table = open_durak(variant="passport")
    actor = seat_and_start(table, alice, bob)
    promoted = replace(actor.state, match=replace(actor.state.match, passports=("T", "6")))
    html = rendered(promoted, alice.pk)
    assert "passport 10" in html
    assert "passport T" not in html
