import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts import services
from accounts.audit import audit_ledger
from accounts.models import LedgerEntry, Wallet

pytestmark = pytest.mark.django_db


def spend_down_to(user, balance):
    services.stake(user=user, amount=Wallet.objects.get(user=user).balance - balance)


def test_refused_at_or_above_the_floor(player):
    spend_down_to(player, 1_000)
    with pytest.raises(services.DailyGrantRefused) as refused:
        services.claim_daily_grant(user=player)
    assert refused.value.code == "balance_too_high"
    assert "under 1,000" in refused.value.message
    assert Wallet.objects.get(user=player).last_daily_grant_at is None


def test_tops_up_to_exactly_the_floor(player):
    spend_down_to(player, 37)
    entry = services.claim_daily_grant(user=player)
    assert (entry.kind, entry.amount, entry.balance_after) == ("grant", 963, 1_000)
    assert LedgerEntry.objects.get(transfer=entry.transfer, wallet__kind="issuer").amount == -963
    assert Wallet.objects.get(user=player).balance == 1_000
    assert audit_ledger().ok


def test_refused_twice_within_24_hours_then_allowed(player):
    start = timezone.now()
    spend_down_to(player, 0)
    services.claim_daily_grant(user=player, now=start)
    spend_down_to(player, 0)
    with pytest.raises(services.DailyGrantRefused) as refused:
        services.claim_daily_grant(user=player, now=start + timedelta(hours=23, minutes=59))
    assert refused.value.code == "too_soon"
    assert refused.value.next_claim_at == start + timedelta(hours=24)
    assert "1 min" in refused.value.message
    with pytest.raises(services.DailyGrantRefused) as refused:
        services.claim_daily_grant(user=player, now=start + timedelta(hours=2))
    assert "22 h 00 min" in refused.value.message
    assert Wallet.objects.get(user=player).balance == 0

    entry = services.claim_daily_grant(user=player, now=start + timedelta(hours=24))
    assert entry.balance_after == 1_000
    assert Wallet.objects.get(user=player).last_daily_grant_at == start + timedelta(hours=24)


def test_moving_the_last_claim_back_a_day_allows_a_new_claim(player):
    spend_down_to(player, 0)
    services.claim_daily_grant(user=player)
    spend_down_to(player, 500)
    a_day_ago = timezone.now() - timedelta(hours=24, seconds=1)
    Wallet.objects.filter(user=player).update(last_daily_grant_at=a_day_ago)
    assert services.claim_daily_grant(user=player).amount == 500


def test_profile_button_claims_and_explains_refusals(client, player):
    client.force_login(player)
    refused = client.post(reverse("claim_grant"), follow=True)
    assert "The daily grant is for players with under 1,000 chips; you have 10,000." in refused.text
    spend_down_to(player, 10)
    claimed = client.post(reverse("claim_grant"), follow=True)
    assert "Daily grant claimed: 990 chips. Your balance is 1,000." in claimed.text
    spend_down_to(player, 10)
    again = client.post(reverse("claim_grant"), follow=True)
    # Waits are rounded up to the minute: just after a claim, the whole day remains.
    assert "You already claimed your grant. You can claim again in 24 h 00 min." in again.text
    assert "next claim from" in again.text
    assert Wallet.objects.get(user=player).balance == 10


def test_a_second_click_right_after_a_claim_says_it_was_claimed(client, player):
    # The claim lifts the chips to the floor: the refusal is about the claim, not about having too many chips.
    client.force_login(player)
    spend_down_to(player, 10)
    client.post(reverse("claim_grant"))
    again = client.post(reverse("claim_grant"), follow=True)
    assert "You claimed today&#x27;s grant already; the next one is from" in again.text
    assert "under 1,000 chips; you have" not in again.text
    button = re.search(r'<button[^>]*id="claim-grant"[^>]*>', again.text).group(0)
    assert "disabled" in button


def test_claim_needs_post_and_log_in(client, player):
    assert client.post(reverse("claim_grant")).url.startswith(reverse("login"))
    client.force_login(player)
    assert client.get(reverse("claim_grant")).status_code == 405
