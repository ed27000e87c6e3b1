"""The daily grant is for broke players: chips staked at a table count as the player's, or a player could
stake their balance, claim the grant and lower the bet again."""

import pytest
from django.urls import reverse

from accounts import selectors
from accounts import services as wallet
from accounts.audit import audit_ledger
from blackjack.models import Phase, Table
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


@pytest.fixture
def betting(make_table, alice, act):
    """alice holds two seats at a table with a high limit; betting stays open until her second seat bets."""
    table = make_table(max_bet=10_000)
    act(table, alice, "sit", seat=1)
    act(table, alice, "sit", seat=2)
    return table


def test_a_player_with_most_chips_on_the_table_cannot_claim(betting, alice, act, balance):
    act(betting, alice, "bet", seat=1, amount=9_500)
    assert Table.objects.get(pk=betting.pk).phase == Phase.BETTING
    assert (balance(alice), selectors.chips_in_play(user_id=alice.pk)) == (500, 9_500)
    with pytest.raises(wallet.DailyGrantRefused) as refused:
        wallet.claim_daily_grant(user=alice)
    assert refused.value.code == "balance_too_high"
    assert "you have 10,000 (9,500 of them in play)" in refused.value.message
    act(betting, alice, "bet", seat=1, amount=10)  # the bet lowered: its chips come back, none were made
    assert balance(alice) == 9_990
    assert audit_ledger().ok


def test_a_broke_player_is_topped_up_to_the_floor_counting_the_chips_in_play(betting, alice, act, balance):
    wallet.stake(user=alice, amount=9_100)  # spent elsewhere: 900 left
    act(betting, alice, "bet", seat=1, amount=300)
    assert selectors.chips_in_play(user_id=alice.pk) == 300
    entry = wallet.claim_daily_grant(user=alice)
    assert (entry.amount, balance(alice)) == (100, 700)  # 700 in the wallet and 300 on the table: 1,000
    assert audit_ledger().ok


def test_chips_of_a_settled_round_are_no_longer_in_play(table, alice, act, balance, scripted_shoe, client):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=100)
    assert selectors.chips_in_play(user_id=alice.pk) == 100
    client.force_login(alice)
    assert "100 in play at a table" in client.get(reverse("profile")).text
    act(table, alice, "stand")  # 19 against 17: paid
    assert Table.objects.get(pk=table.pk).phase == Phase.SETTLED
    assert (selectors.chips_in_play(user_id=alice.pk), balance(alice)) == (0, 10_100)
    assert "in play at a table" not in client.get(reverse("profile")).text
