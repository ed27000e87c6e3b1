"""The staff's report of one-sided chip flows (admin: "Chip flow between players"): pairs of players whose
chips in the staked Durak games they finished together went one way, as when accounts are made only to lose
their starting chips to one player (issue 34). Read-only, staff only."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from durak import services
from tests.durak.live.conftest import open_durak_table, record_game

pytestmark = pytest.mark.django_db
PAGE = "admin:durak_chip_flow"


@pytest.fixture(autouse=True)
def _thresholds(settings):
    settings.CHIP_FLOW_DAYS = 90
    settings.CHIP_FLOW_MIN_GAMES = 3
    settings.CHIP_FLOW_MIN_SHARE_PERCENT = 80
    settings.CHIP_FLOW_MIN_NET = 1_000


@pytest.fixture
def players(make_user, alice, bob):
    carol, dave, erin = (make_user(name) for name in ("carol", "dave", "erin"))
    return alice, bob, carol, dave, erin


@pytest.fixture
def table(alice):
    return open_durak_table(alice, stake=500)


def lose_to(table, winner, loser, *, when=None):
    """A two-player game at a 500 stake in which `loser` is the fool: 500 chips from them to `winner`."""
    record_game(table, [winner, loser], fool=1, stake=500, payouts=[1_000, 0], rated=False, when=when)


def flows():
    return services.one_sided_flows(
        since=timezone.now() - timedelta(days=90), min_games=3, min_share=0.8, min_net=1_000
    )


def test_a_player_who_always_loses_to_another_shows_the_pair_and_balanced_pairs_do_not(table, players):
    alice, bob, carol, dave, erin = players
    for _ in range(3):
        lose_to(table, alice, bob)  # bob always takes and loses to alice
    for winner, loser in [(carol, dave), (dave, carol), (carol, dave), (dave, carol)]:
        lose_to(table, winner, loser)  # even
    lose_to(table, erin, alice)
    lose_to(table, erin, alice)  # one-sided, but two games only
    record_game(table, [bob, None], fool=1, stake=500, payouts=[500, 0], rated=False)  # a bot's loss: refunds
    [flow] = flows()
    assert (flow.taker, flow.giver, flow.games, flow.taken, flow.given) == (alice.pk, bob.pk, 3, 1_500, 0)
    assert (flow.net, flow.one_way) == (1_500, 1.0)


def test_the_fool_of_a_larger_game_pays_each_player_who_went_out_their_share(table, players):
    alice, bob, carol, *_ = players
    for _ in range(3):
        # carol is the fool of three players: 250 + 250 of her 500 to alice and bob
        record_game(table, [alice, bob, carol], fool=2, stake=500, payouts=[750, 750, 0], rated=False)
    lose_to(table, carol, alice)  # 500 back to carol: alice's flow from her is 750 one way, 500 the other
    pairs = {
        (flow.taker, flow.giver): flow
        for flow in services.one_sided_flows(
            since=timezone.now() - timedelta(days=1), min_games=3, min_share=0.5, min_net=1
        )
    }
    assert (pairs[(bob.pk, carol.pk)].taken, pairs[(bob.pk, carol.pk)].games) == (750, 3)
    assert (pairs[(alice.pk, carol.pk)].taken, pairs[(alice.pk, carol.pk)].given) == (750, 500)
    assert {(alice.pk, bob.pk), (bob.pk, alice.pk)}.isdisjoint(pairs)  # both went out: nothing moved


def test_the_largest_net_comes_first_and_old_games_drop_out(table, players):
    alice, bob, carol, dave, erin = players
    for _ in range(3):
        lose_to(table, alice, bob)
    for _ in range(4):
        lose_to(table, carol, dave)
    for _ in range(3):
        lose_to(table, erin, bob, when=timezone.now() - timedelta(days=91))
    assert [(flow.taker, flow.giver) for flow in flows()] == [(carol.pk, dave.pk), (alice.pk, bob.pk)]


def test_staff_see_the_pairs_with_links_to_the_accounts(client, table, players, make_user):
    alice, bob, *_ = players
    for _ in range(3):
        lose_to(table, alice, bob)
    client.force_login(make_user("boss", is_staff=True, is_superuser=True))
    index = client.get(reverse("admin:index")).content.decode()
    assert reverse(PAGE) in index
    page = client.get(reverse(PAGE))
    assert page.status_code == 200
    body = page.content.decode()
    assert reverse("admin:accounts_user_change", args=[alice.pk]) in body
    assert reverse("admin:accounts_user_change", args=[bob.pk]) in body
    assert "1,500" in body
    assert "100 %" in body


def test_players_and_staff_without_the_permission_get_no_access(client, table, players, make_user):
    alice, bob, *_ = players
    for _ in range(3):
        lose_to(table, alice, bob)
    client.force_login(alice)
    response = client.get(reverse(PAGE))
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))
    manager = make_user("manager", is_staff=True)  # staff, but no view permission on Durak games
    client.force_login(manager)
    assert client.get(reverse(PAGE)).status_code == 403
    assert reverse(PAGE) not in client.get(reverse("admin:index")).content.decode()
    manager.user_permissions.add(Permission.objects.get(codename="view_durakgame"))
    assert client.get(reverse(PAGE)).status_code == 200
