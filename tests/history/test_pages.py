"""The history pages render, show what they should, and hide what they must."""

import pytest
from django.urls import reverse

from tests.tables.conftest import PASSWORD, deal_cards

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
        reverse("leaderboard"),
        reverse("leaderboard") + "?board=week",
        reverse("history"),
        reverse("round_replay", args=[played.pk]),
        reverse("player_profile", args=["bob"]),
        reverse("fairness"),
        reverse("profile"),
    ):
        response = client.get(url)
        assert response.status_code == 200, url
