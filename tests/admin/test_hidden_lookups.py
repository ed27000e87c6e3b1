"""The admin hides a round's engine state (the hole card of a round in play) and a shoe's server seed (the
whole order of a shoe in play), and no filter in a list's address can be used to guess them: a list showing a
row only when the guess is right would be an oracle. Staff who are not superusers (the table managers) can
view rounds and shoes."""

import pytest
from django.urls import reverse

from blackjack.models import Round, Shoe
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


def listed(client, name, query):
    response = client.get(reverse(f"admin:{name}_changelist"), query)
    if response.status_code != 200:
        return response.status_code
    return [obj.pk for obj in response.context["cl"].result_list]


@pytest.fixture
def in_play(table, alice, act, scripted_shoe):
    """alice has bet: the dealer's hole card is the king of clubs, face down."""
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["9d", "Kc"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=20)
    rnd = Round.objects.get(table=table)
    assert rnd.settled_at is None
    assert rnd.state["dealer_cards"][1] == "Kc"
    return rnd


@pytest.mark.parametrize(
    ("name", "lookup"),
    [
        ("tables_round", "state__dealer_cards__1"),
        ("tables_round", "state__icontains"),
        ("tables_table", "current_round__state__dealer_cards__1"),
        ("tables_table", "current_round__state__icontains"),
    ],
)
def test_the_hole_card_cannot_be_guessed_from_a_list(manager_client, in_play, name, lookup):
    right = listed(manager_client, name, {lookup: "Kc"})
    wrong = listed(manager_client, name, {lookup: "2c"})
    assert right == wrong == 400  # the lookup itself is refused (400): nothing to compare


@pytest.mark.parametrize(
    ("name", "lookup"),
    [
        ("tables_shoe", "server_seed__startswith"),
        ("tables_shoe", "server_seed"),
        ("tables_round", "shoe__server_seed__startswith"),
        ("tables_table", "shoes__server_seed__startswith"),
        ("tables_table", "next_server_seed__startswith"),
    ],
)
def test_the_server_seed_cannot_be_guessed_from_a_list(manager_client, in_play, name, lookup):
    shoe = Shoe.objects.get(pk=in_play.shoe_id)
    seed = shoe.table.next_server_seed if lookup.startswith("next_") else shoe.server_seed
    right = listed(manager_client, name, {lookup: seed[:8]})
    wrong = listed(manager_client, name, {lookup: ("1" if seed[0] == "0" else "0") + seed[1:8]})
    assert right == wrong == 400


def test_the_lists_filters_still_work(manager_client, in_play):
    assert listed(manager_client, "tables_round", {"phase__exact": in_play.phase}) == [in_play.pk]
    assert listed(manager_client, "tables_round", {"table__id__exact": in_play.table_id}) == [in_play.pk]
    assert listed(manager_client, "tables_shoe", {"retired_at__isnull": "True"}) == [in_play.shoe_id]


def test_password_hashes_cannot_be_guessed_from_the_user_list(admin_client, alice):
    """Django's own UserAdmin refuses it; kept so an override of `lookup_allowed` cannot lose that."""
    assert listed(admin_client, "accounts_user", {"password__startswith": alice.password[:12]}) == 400
    assert listed(admin_client, "accounts_user", {"username__exact": "alice"}) == [alice.pk]
