import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from accounts import services
from accounts.audit import audit_ledger
from accounts.models import LedgerEntry, Wallet
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db
User = get_user_model()


def register(client, username="newcomer", email="", password=PASSWORD, password2=None):
    data = {"username": username, "email": email, "password1": password, "password2": password2 or password}
    return client.post(reverse("register"), data)


def test_register_logs_in_and_lands_on_profile_with_starting_chips(client):
    response = register(client)
    assert response.status_code == 302
    assert response.url == reverse("profile")
    profile = client.get(response.url)
    assert profile.context["user"].username == "newcomer"
    assert profile.context["wallet_balance"] == 10_000
    assert 'data-balance="10000"' in profile.text
    assert "10,000" in profile.text


def test_registration_grants_exactly_one_ledger_pair():
    user = User.objects.create_user("fresh", password=PASSWORD)
    wallet = Wallet.objects.get(user=user)
    assert wallet.balance == 10_000
    player_entry = LedgerEntry.objects.get(wallet=wallet)
    assert (player_entry.kind, player_entry.amount, player_entry.balance_after) == ("grant", 10_000, 10_000)
    pair = LedgerEntry.objects.filter(transfer=player_entry.transfer)
    assert sorted(pair.values_list("wallet__kind", "amount")) == [("issuer", -10_000), ("player", 10_000)]
    assert LedgerEntry.objects.count() == 2
    assert audit_ledger().ok


def test_open_wallet_twice_does_not_grant_twice(player):
    again = services.open_wallet(user=player)
    assert again.pk == player.wallet.pk
    assert again.balance == 10_000
    assert LedgerEntry.objects.filter(wallet__user=player).count() == 1


def test_createsuperuser_gets_a_wallet(monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", PASSWORD)
    call_command("createsuperuser", username="root", email="root@example.com", interactive=False, verbosity=0)
    assert Wallet.objects.get(user__username="root").balance == 10_000
    assert audit_ledger().ok


@pytest.mark.parametrize(
    ("fields", "error_field"),
    [
        ({"password2": "Something-else-42"}, "password2"),
        ({"password": "password", "password2": "password"}, "password2"),
        ({"password": "12345678901", "password2": "12345678901"}, "password2"),
        ({"username": "bad name!"}, "username"),
        ({"email": "not-an-address"}, "email"),
    ],
)
def test_registration_rejects_bad_input(client, fields, error_field):
    response = register(client, **fields)
    assert response.status_code == 200
    assert error_field in response.context["form"].errors
    assert not User.objects.exists()
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("username", ["Dealer", "house", "Ann_the_Bold"])
def test_registration_refuses_a_name_the_house_or_another_player_shows(client, player, username):
    player.display_name = "ann_the_bold"
    player.save()
    response = register(client, username=username)
    assert "another player's or the house's" in " ".join(response.context["form"].errors["username"])
    assert User.objects.count() == 1


def test_registration_rejects_taken_username_and_email_ignoring_case(client, player):
    response = register(client, username="ALICE")
    assert "username" in response.context["form"].errors
    response = register(client, username="alice2", email="Alice@Example.com")
    assert "email" in response.context["form"].errors
    assert User.objects.count() == 1


def test_register_form_has_csrf_token(client):
    response = client.get(reverse("register"))
    assert "csrfmiddlewaretoken" in response.text


def test_logged_in_user_is_sent_from_register_to_profile(client, player):
    client.force_login(player)
    assert client.get(reverse("register")).url == reverse("profile")
