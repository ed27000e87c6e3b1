"""The table page's preferences on the account: set through `POST /accounts/preferences/`, rendered into the
table page of any browser the player logs in from; a refused change changes nothing."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from accounts.preferences import DEFAULTS
from blackjack import services
from blackjack.engine.rules import PRESETS
from blackjack.models import RulePreset

pytestmark = pytest.mark.django_db
URL = "/accounts/preferences/"


def post(client, body, **extra):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(URL, data, content_type="application/json", **extra)


def test_changes_are_stored_and_reach_the_table_page_in_another_browser(client, player):
    assert reverse("preferences") == URL
    client.force_login(player)
    answer = post(client, {"sound": True})
    assert answer.status_code == 200
    assert answer.json() == {"preferences": {**DEFAULTS, "sound": True}}
    assert post(client, {"hint": True, "auto_rebet": True}).json()["preferences"] == {
        "hint": True,
        "auto_rebet": True,
        "sound": True,
    }
    assert post(client, {"sound": False}).json()["preferences"]["sound"] is False
    player.refresh_from_db()
    assert player.preferences == {"sound": False, "hint": True, "auto_rebet": True}

    other = Client()  # another browser, the same account
    other.force_login(player)
    preset = RulePreset.objects.create(name="Vegas Strip", rules=PRESETS["Vegas Strip"].to_dict())
    table = services.create_table(name="Prefs", preset=preset, min_bet=10, max_bet=500)
    page = other.get(reverse("table", args=[table.pk])).content.decode()
    assert '<script id="preferences" type="application/json">' in page
    assert '{"hint": true, "auto_rebet": true, "sound": false}' in page


@pytest.mark.parametrize(
    "body",
    [{"volume": True}, {"sound": "yes"}, {"sound": 1}, {}, [], "not json", {"hint": True, "colour": "red"}],
)
def test_a_bad_change_is_refused_and_changes_nothing(client, player, body):
    client.force_login(player)
    post(client, {"hint": True})
    answer = post(client, body)
    assert answer.status_code == 400
    assert answer.json()["error"]
    player.refresh_from_db()
    assert player.preferences == {"hint": True}


def test_only_a_logged_in_player_with_a_csrf_token_may_change_them(player):
    assert post(Client(), {"sound": True}).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(player)
    assert post(strict, {"sound": True}).status_code == 403  # no CSRF token
    assert Client().get(URL).status_code in (403, 405)
    player.refresh_from_db()
    assert player.preferences == {}
