"""The coach's notes on a player's play are that player's own unless they choose to show them."""

import pytest
from django.urls import reverse

from tests.blackjack.conftest import PASSWORD, deal_cards

pytestmark = pytest.mark.django_db


@pytest.fixture
def insured(table, alice, scripted_shoe, play_round):
    """Alice took insurance on 18 against an ace: one priced mistake."""
    scripted_shoe(table, deal_cards(["Ts", "8h"], dealer=["As", "7d"]))
    play_round(table, [(alice, 1, 100)], [(alice, "insurance", {"accept": True}), (alice, "stand", {})])


def coach_of(client, user):
    page = client.get(reverse("player_profile", args=[user.username])).content.decode()
    return page[page.index('id="coach"') :]


def test_another_player_sees_the_coach_notes_only_once_shown(client, insured, alice, bob):
    assert client.login(username=bob.username, password=PASSWORD)
    private = coach_of(client, alice)
    assert "keeps the coach's notes private" in private
    assert "instead of" not in private  # no costliest decision
    assert "decisions differed" not in private

    alice.show_mistakes = True
    alice.save(update_fields=["show_mistakes"])
    shown = coach_of(client, alice)
    assert "<strong>insure</strong> instead of <strong>decline</strong>" in shown
    assert "decisions differed" in shown


def test_the_player_always_sees_their_own_notes_and_may_show_them(client, insured, alice):
    assert client.login(username=alice.username, password=PASSWORD)
    assert "<strong>insure</strong> instead of" in coach_of(client, alice)
    profile = client.get(reverse("profile")).content.decode()
    assert "Only you see these notes" in profile
    form = {"display_name": "", "avatar": alice.avatar, "email": "", "show_mistakes": "on"}
    assert client.post(reverse("profile"), form).status_code == 302
    alice.refresh_from_db()
    assert alice.show_mistakes is True
    client.logout()
    assert "<strong>insure</strong> instead of" in coach_of(client, alice)  # a visitor too, once shown
