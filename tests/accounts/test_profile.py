import pytest
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts import services
from accounts.avatars import AVATAR_CHOICES
from accounts.context_processors import wallet as wallet_context
from accounts.models import DISPLAY_NAME_MAX_LENGTH

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, player):
    client.force_login(player)
    return client


def save_profile(client, display_name="", avatar="spade", email=""):
    return client.post(reverse("profile"), {"display_name": display_name, "avatar": avatar, "email": email})


def test_profile_needs_log_in(client):
    response = client.get(reverse("profile"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_profile_shows_balance_entries_and_every_avatar(logged_in):
    response = logged_in.get(reverse("profile"))
    assert response.status_code == 200
    assert 'id="profile-balance" data-balance="10000"' in response.text
    assert "Welcome grant" in response.text
    for key, _label in AVATAR_CHOICES:
        assert f"/static/avatars/{key}.svg" in response.text


@pytest.mark.parametrize(
    "name",
    ["Lucky Lou", "Zoë", "O'Brien", "J.-P. Smith", "a_b", "7", "x" * 40, "नमस्ते", "Ана Мария", "李小龙"],
)
def test_good_display_names_are_saved_and_shown(logged_in, player, name):
    response = save_profile(logged_in, display_name=name, avatar="crown")
    assert response.status_code == 302
    player.refresh_from_db()
    assert (player.display_name, player.avatar, player.public_name) == (name, "crown", name)
    assert f"<h1>{name}</h1>".replace("'", "&#x27;") in logged_in.get(reverse("profile")).text


@pytest.mark.parametrize(
    "name",
    [
        "<script>alert(1)</script>",
        "Bob <b>",
        "two  spaces",
        "-dash",
        "tab\tname",
        "zero\u200bwidth",
        "bidi\u202eevil",
        "\u0301accent first",
        "Ace ♠",
        "trailing.",
        "x" * (DISPLAY_NAME_MAX_LENGTH + 1),
        "bob",  # another player's username
        "BOB",
        "Bobby Tables",  # another player's display name
        "bobby tables",
        "Dealer",  # the house's
        "HOUSE",
    ],
)
def test_bad_display_names_are_refused(logged_in, player, other_player, name):
    other_player.display_name = "Bobby Tables"
    other_player.save()
    response = save_profile(logged_in, display_name=name)
    assert response.status_code == 200
    assert "display_name" in response.context["form"].errors
    player.refresh_from_db()
    assert player.display_name == ""
    # The page header keeps showing the stored name, never the refused input.
    assert "<h1>alice</h1>" in response.text
    assert "<script>alert" not in response.text


def test_decomposed_accents_are_stored_composed(logged_in, player):
    save_profile(logged_in, display_name="Zoe\u0308")
    player.refresh_from_db()
    assert player.display_name == "Zoë"


def test_surrounding_spaces_are_trimmed(logged_in, player):
    save_profile(logged_in, display_name="  Ace  ")
    player.refresh_from_db()
    assert player.display_name == "Ace"


def test_own_username_is_an_allowed_display_name(logged_in, player):
    assert save_profile(logged_in, display_name="Alice").status_code == 302


def test_empty_display_name_falls_back_to_username(logged_in, player):
    save_profile(logged_in, display_name="Ace")
    save_profile(logged_in, display_name="")
    player.refresh_from_db()
    assert player.public_name == "alice"


@pytest.mark.parametrize("avatar", ["dragon", "", "../../etc/passwd", "SPADE"])
def test_avatar_must_be_one_of_the_choices(logged_in, player, avatar):
    response = save_profile(logged_in, avatar=avatar)
    assert response.status_code == 200
    assert "avatar" in response.context["form"].errors
    player.refresh_from_db()
    assert player.avatar == "spade"


def test_email_can_be_set_but_not_to_another_accounts(logged_in, player, other_player):
    other_player.email = "bob@example.com"
    other_player.save()
    response = save_profile(logged_in, email="BOB@example.com")
    assert "email" in response.context["form"].errors
    assert save_profile(logged_in, email="alice@new.example").status_code == 302
    player.refresh_from_db()
    assert player.email == "alice@new.example"


def test_context_processor_uses_one_query_and_none_when_anonymous(player):
    from django.contrib.auth.models import AnonymousUser

    request = RequestFactory().get("/")
    request.user = player
    with CaptureQueriesContext(connection) as queries:
        assert wallet_context(request) == {"wallet_balance": 10_000}
    assert len(queries) == 1
    request.user = AnonymousUser()
    with CaptureQueriesContext(connection) as queries:
        assert wallet_context(request) == {"wallet_balance": None}
    assert len(queries) == 0


def test_nav_shows_the_balance(logged_in, player):
    services.stake(user=player, amount=1_234)
    response = logged_in.get(reverse("profile"))
    assert '<span id="nav-balance" data-balance="8766">8,766</span>' in response.text
