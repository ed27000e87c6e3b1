"""The history pages render, show what they should, and hide what they must."""

import pytest
from django.urls import reverse

from tests.blackjack.conftest import PASSWORD, deal_cards

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(table, alice, bob, scripted_shoe, play_round):
    scripted_shoe(table, [*deal_cards(["Ts", "7h"], ["9c", "2d"], dealer=["6s", "Td"]), "Kc", "9h"])
    return play_round(table, [(alice, 1, 100), (bob, 2, 50)], [(alice, "stand", {}), (bob, "double", {})])


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)


def test_every_page_renders(client, played, alice):
    login(client, alice)
    for url in (
        reverse("blackjack_leaderboard"),
        reverse("blackjack_leaderboard") + "?board=week",
        reverse("blackjack_history"),
        reverse("round_replay", args=[played.pk]),
        reverse("player_profile", args=["bob"]),
        reverse("fairness"),
        reverse("profile"),
    ):
        response = client.get(url)
        assert response.status_code == 200, url


def test_the_profile_shows_the_players_statistics_and_balance_chart(client, played, alice):
    login(client, alice)
    page = client.get(reverse("profile")).content.decode()
    assert 'id="player-stats"' in page
    assert "Your balance after each chip movement" in page
    assert "<polyline" in page


def test_a_public_profile_shows_no_balance_and_no_email(client, played, alice, bob):
    from accounts.models import Wallet

    bob.email = "bob@example.com"
    bob.save()
    Wallet.objects.filter(user=bob).update(balance=12_345)
    login(client, alice)
    page = client.get(reverse("player_profile", args=["bob"])).content.decode()
    assert 'id="player-stats"' in page
    assert "bob@example.com" not in page
    assert "12,345" not in page
    assert "12345" not in page
    assert "Your balance" not in page


def test_suspended_and_deactivated_players_have_no_public_profile(client, played, bob, alice):
    bob.suspended = True
    bob.save()
    assert client.get(reverse("player_profile", args=["bob"])).status_code == 404
    alice.is_active = False
    alice.save()
    assert client.get(reverse("player_profile", args=["alice"])).status_code == 404
