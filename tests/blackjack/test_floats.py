"""Each table's house float (`blackjack.services.floats`): funded when the table is made, every bet and
payment of the table against it (never the house's row), a float that cannot cover a settlement topped up in
the settlement's own transaction (on the services and the actor paths), swept back to the house when the table
closes, rebalanced in the background; the audit sums every wallet, floats included, to zero."""

import pytest
from django.urls import reverse

from accounts import services as wallet
from accounts.audit import audit_ledger
from accounts.models import LedgerEntry, Wallet
from blackjack import actors, operations
from blackjack.models import Phase, Table
from blackjack.services import floats
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db

TARGET = 500 * 7 * floats.BETS_PER_SEAT  # the `table` fixture: bets up to 500, seven seats


def float_of(table) -> int:
    return Wallet.objects.get(kind="float", game="blackjack", table_ref=table.pk).balance


def house() -> int:
    return Wallet.objects.get(kind="house").balance


def house_rows() -> int:
    return LedgerEntry.objects.filter(wallet__kind="house").count()


def test_a_new_table_has_its_float_funded_from_the_house(table):
    assert float_of(table) == TARGET
    assert house() == -TARGET
    assert audit_ledger().ok


def test_a_round_moves_chips_against_the_tables_float_only(table, alice, act, scripted_shoe, balance):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["Td", "7c"]))  # 19 against 17: alice wins
    rows = house_rows()
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=100)
    assert float_of(table) == TARGET + 100
    act(table, alice, "stand")
    assert (balance(alice), float_of(table)) == (10_100, TARGET - 100)
    assert house_rows() == rows  # the house's row was not touched by play
    assert audit_ledger().ok


@pytest.mark.parametrize("path", ["services", "actor"])
def test_a_float_that_cannot_cover_a_settlement_is_topped_up_in_it(
    path, table, alice, bob, act, scripted_shoe, balance
):
    # alice's blackjack pays 3:2, bob's 19 beats 17; the float is emptied after the bets.
    scripted_shoe(table, deal_cards(["As", "Kh"], ["Ts", "9h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=200)
    wallet.set_float(game="blackjack", table_ref=table.pk, chips=0, memo="test: emptied")
    if path == "services":
        act(table, bob, "bet", amount=100)
        act(table, bob, "stand")
    else:
        actor = actors.actor_for(table.pk)
        for name in ("bet", "stand"):
            version = Table.objects.values_list("version", flat=True).get(pk=table.pk)
            action = {"action": name, **({"amount": 100} if name == "bet" else {})}
            actor.handle(actors.player_action(bob, action, version))
    assert Table.objects.get(pk=table.pk).phase == Phase.SETTLED
    assert (balance(alice), balance(bob)) == (10_300, 10_100)
    assert float_of(table) == TARGET  # topped up to its target beyond the payments
    top_up = LedgerEntry.objects.filter(kind="float", wallet__kind="float").latest("pk")
    assert (top_up.memo, top_up.amount) == ("Top-up for a payment", TARGET + 500 + 200 - 100)
    assert audit_ledger().ok


def test_closing_an_idle_table_sweeps_its_float_to_the_house(table):
    operations.close_table(table_id=table.pk)
    assert (float_of(table), house()) == (0, 0)
    assert audit_ledger().ok


def test_closing_mid_round_keeps_the_float_until_the_round_is_over(table, alice, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=100)
    operations.close_table(table_id=table.pk)
    assert float_of(table) == TARGET + 100
    assert floats.rebalance() == 0  # the round is under way
    act(table, alice, "stand")
    assert floats.rebalance() == 1
    assert float_of(table) == 0
    assert audit_ledger().ok


def test_rebalance_brings_far_floats_back_to_target_and_leaves_the_others(make_table):
    low, high, fine = make_table(name="low"), make_table(name="high"), make_table(name="fine")
    wallet.set_float(game="blackjack", table_ref=low.pk, chips=TARGET // 5, memo="test")
    wallet.set_float(game="blackjack", table_ref=high.pk, chips=TARGET * 3, memo="test")
    wallet.set_float(game="blackjack", table_ref=fine.pk, chips=TARGET * 3 // 2, memo="test")
    assert floats.rebalance() == 2
    assert (float_of(low), float_of(high), float_of(fine)) == (TARGET, TARGET, TARGET * 3 // 2)
    assert floats.rebalance() == 0
    assert audit_ledger().ok


def test_staff_see_each_tables_float_in_the_admin(admin_client, table):
    page = admin_client.get(reverse("admin:tables_table_changelist"))
    assert page.context["cl"].result_list.get(pk=table.pk).float_chips == TARGET
    assert f"{TARGET:,}" in page.text
    assert f"?game=blackjack&amp;table={table.pk}" in page.text  # linked to the table's ledger rows
