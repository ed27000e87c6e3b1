"""Quick play (`durak.quick`): one tap seats a player at a public table of the chosen variant, stake and
number of players with a free seat (the fullest first), or at a new table of theirs with bots in the other
seats; what cannot be staked is refused and changes nothing."""

import pytest
from django.urls import reverse

from cards.errors import Refused
from durak.actor import load
from durak.models import DurakTable
from durak.quick import quick_play
from durak.services import QUICK_OPTIONS, open_table

pytestmark = pytest.mark.django_db(transaction=True)


def seated(table_id: int) -> list:
    return [(seat.user_id, seat.is_bot) for seat in load(table_id).seats]


def test_with_no_table_of_the_options_a_new_one_is_filled_with_bots(alice):
    table_id = quick_play(user=alice, variant="perevodnoy", stake=10, players=3)
    table = DurakTable.objects.get(pk=table_id)
    assert (table.variant, table.stake, table.seats, table.created_by) == ("perevodnoy", 10, 3, alice)
    assert seated(table_id) == [(alice.pk, False), (None, True), (None, True)]
    assert load(table_id).opener == alice.pk  # she starts it: her seed goes into the deck


def test_a_player_is_seated_at_the_fullest_table_of_the_options_with_a_free_seat(alice, bob, make_user):
    carol, dan = make_user("carol"), make_user("dan")
    options = {"variant": "podkidnoy", "stake": 0, "seats": 3, **QUICK_OPTIONS}
    full = quick_play(user=bob, variant="podkidnoy", stake=0, players=3)  # bob and two bots
    first = open_table(user=carol, name="First", **options).pk
    second = open_table(user=dan, name="Second", **options).pk
    open_table(user=carol, name="Other stake", **{**options, "stake": 10})
    assert quick_play(user=dan, variant="podkidnoy", stake=0, players=3) == first  # both empty: the older
    assert seated(first)[0] == (dan.pk, False)
    assert seated(second)[0] == (None, False)
    # A bot's seat is not free (bob's table is full): the fullest with room is the one dan sits at.
    assert quick_play(user=alice, variant="podkidnoy", stake=0, players=3) == first
    assert seated(first)[1] == (alice.pk, False)
    assert full not in (first, second)
    # Playing again while seated there: another table, not a second seat at the same one.
    assert quick_play(user=alice, variant="podkidnoy", stake=0, players=3) == second


def test_a_stake_the_player_cannot_cover_is_refused_and_nothing_is_made(alice):
    with pytest.raises(Refused) as refused:
        quick_play(user=alice, variant="podkidnoy", stake=1000, players=2)  # a new account's limit is 500
    assert refused.value.code == "stake_limit"
    assert not DurakTable.objects.exists()


def test_the_lobby_offers_quick_play_and_it_leads_to_the_table(client, alice):
    client.force_login(alice)
    assert "Quick play: Durak" in client.get(reverse("lobby")).content.decode()
    response = client.post(reverse("durak_quick_play"), {"variant": "passport", "stake": "0", "players": "2"})
    table = DurakTable.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("durak_table", args=[table.pk])
    bad = client.post(reverse("durak_quick_play"), {"variant": "chess", "stake": "0", "players": "2"})
    assert bad.status_code == 302
    assert DurakTable.objects.count() == 1
