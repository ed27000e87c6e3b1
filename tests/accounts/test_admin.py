import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts import services
from accounts.models import LedgerEntry, Wallet
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def admin_client_(client, make_user):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


def test_user_list_and_page_show_the_balance_read_only(admin_client_, player):
    services.stake(user=player, amount=2_500)
    listing = admin_client_.get(reverse("admin:accounts_user_changelist"))
    assert listing.status_code == 200
    assert "7500" in listing.text.replace(",", "")
    page = admin_client_.get(reverse("admin:accounts_user_change", args=[player.pk]))
    assert page.status_code == 200
    assert "Display name" in page.text
    assert 'name="balance"' not in page.text  # shown, not editable


def test_adding_a_user_in_the_admin_opens_a_wallet(admin_client_):
    response = admin_client_.post(
        reverse("admin:accounts_user_add"),
        {"username": "added", "password1": PASSWORD, "password2": PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Wallet.objects.get(user__username="added").balance == 10_000


def test_wallets_and_ledger_are_read_only(admin_client_, player):
    entry = LedgerEntry.objects.filter(wallet__user=player).get()
    assert admin_client_.get(reverse("admin:accounts_ledgerentry_changelist")).status_code == 200
    assert admin_client_.get(reverse("admin:accounts_wallet_changelist")).status_code == 200
    assert admin_client_.get(reverse("admin:accounts_ledgerentry_add")).status_code == 403
    assert admin_client_.get(reverse("admin:accounts_wallet_add")).status_code == 403
    view = admin_client_.get(reverse("admin:accounts_ledgerentry_change", args=[entry.pk]))
    assert view.status_code == 200
    assert 'name="amount"' not in view.text
    posted = admin_client_.post(reverse("admin:accounts_ledgerentry_change", args=[entry.pk]), {"amount": 1})
    assert posted.status_code == 403
    assert (
        admin_client_.post(reverse("admin:accounts_ledgerentry_delete", args=[entry.pk])).status_code == 403
    )
    assert admin_client_.post(reverse("admin:accounts_user_delete", args=[player.pk])).status_code == 403
    assert LedgerEntry.objects.get(pk=entry.pk).amount == 10_000
