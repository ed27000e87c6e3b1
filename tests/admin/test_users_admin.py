"""Users and money in the staff admin: balance adjustments through `accounts.services.adjust`, suspension,
who may reach what (superuser, table manager, player), and a ledger nothing in the admin can change."""

import pytest
from django.test import TestCase
from django.urls import reverse
from django.utils import timezone

from accounts.audit import audit_ledger
from accounts.models import LedgerEntry
from blackjack.models import Phase, Round, Seat, Table
from blackjack.services import staff
from cards.errors import Refused
from live import clock
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db

USERS = reverse("admin:accounts_user_changelist")


def adjust(client, users, follow=False, **fields):
    data = {"action": "adjust_balance", "_selected_action": [user.pk for user in users]}
    return client.post(USERS, data | fields, follow=follow)


def adjustments(user):
    return LedgerEntry.objects.filter(wallet__user=user, kind="adjustment")


def test_staff_grant_chips_with_a_reason_and_the_ledger_audit_stays_clean(admin_client, root, alice, balance):
    form = adjust(admin_client, [alice])
    assert form.status_code == 200
    assert "Grant or take chips" in form.text
    assert "10,000" in form.text  # alice's balance now

    done = adjust(admin_client, [alice], apply="1", amount="2500", reason="Goodwill after a disconnect")
    assert done.status_code == 302
    entry = adjustments(alice).get()
    assert (entry.amount, entry.memo, entry.created_by) == (2_500, "Goodwill after a disconnect", root)
    assert balance(alice) == 12_500

    adjust(admin_client, [alice], apply="1", amount="-500", reason="Duplicate grant")
    assert balance(alice) == 12_000
    report = audit_ledger()
    assert report.ok, report.discrepancies


def test_an_adjustment_needs_a_reason_and_cannot_overdraw(admin_client, alice, balance):
    missing = adjust(admin_client, [alice], apply="1", amount="100", reason="")
    assert missing.status_code == 200
    assert "This field is required" in missing.text
    zero = adjust(admin_client, [alice], apply="1", amount="0", reason="nothing")
    assert "non-zero amount" in zero.text

    overdraw = adjust(admin_client, [alice], apply="1", amount="-20000", reason="too much", follow=True)
    assert "Not enough chips" in overdraw.text
    assert not adjustments(alice).exists()
    assert balance(alice) == 10_000
    assert audit_ledger().ok


def test_the_balance_is_read_only(admin_client, alice):
    page = admin_client.get(reverse("admin:accounts_user_change", args=[alice.pk]))
    assert "10000" in page.text.replace(",", "")
    assert 'name="balance"' not in page.text
    assert 'name="suspended"' not in page.text  # through the actions, which free the seats


def test_a_table_manager_edits_tables_and_presets_but_not_money_or_users(manager_client, table, alice):
    assert manager_client.get(reverse("admin:tables_table_changelist")).status_code == 200
    assert manager_client.get(reverse("admin:tables_table_change", args=[table.pk])).status_code == 200
    assert manager_client.get(reverse("admin:tables_rulepreset_add")).status_code == 200
    assert manager_client.get(reverse("admin:tables_round_changelist")).status_code == 200
    close = {"action": "close_tables", "_selected_action": [table.pk]}
    assert manager_client.post(reverse("admin:tables_table_changelist"), close).status_code == 302
    assert not Table.objects.get(pk=table.pk).is_open

    assert manager_client.get(USERS).status_code == 403
    assert manager_client.get(reverse("admin:accounts_user_change", args=[alice.pk])).status_code == 403
    assert manager_client.get(reverse("admin:accounts_ledgerentry_changelist")).status_code == 403
    assert manager_client.get(reverse("admin:accounts_wallet_changelist")).status_code == 403
    response = adjust(manager_client, [alice], apply="1", amount="1000000", reason="self-service")
    assert response.status_code == 403
    assert not adjustments(alice).exists()
    index = manager_client.get(reverse("admin:index"))
    assert "Users" not in index.text
    assert "Ledger" not in index.text


def test_even_with_user_permissions_moving_chips_needs_the_wallet_permission(manager_client, manager, alice):
    from django.contrib.auth.models import Permission

    manager.user_permissions.add(*Permission.objects.filter(codename__in=["view_user", "change_user"]))
    page = manager_client.get(USERS)
    assert page.status_code == 200
    assert "adjust_balance" not in page.text  # the action is not offered
    adjust(manager_client, [alice], apply="1", amount="1000", reason="no")
    assert not adjustments(alice).exists()


def test_a_player_cannot_reach_the_admin(client, alice):
    client.force_login(alice)
    for url in (reverse("admin:index"), USERS, reverse("admin:tables_table_changelist")):
        response = client.get(url)
        assert response.status_code == 302
        assert response.url.startswith(reverse("admin:login"))


def test_suspended_players_cannot_sit_or_act_and_leave_after_the_round(
    admin_client, table, alice, bob, act, scripted_shoe
):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["9s", "8h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=100)
    assert Table.objects.get(pk=table.pk).phase == Phase.PLAYING

    response = admin_client.post(USERS, {"action": "suspend", "_selected_action": [alice.pk]})
    assert response.status_code == 302
    alice.refresh_from_db()
    assert alice.suspended
    seat = Seat.objects.get(table=table, number=1)
    assert (seat.user, seat.leaving_after_round) == (alice, True)  # her chips are in play
    for name, args in (("stand", {}), ("sit", {"seat": 3}), ("bet", {"amount": 10})):
        with pytest.raises(Refused) as refused:
            act(table, alice, name, **args)
        assert refused.value.code == "suspended"

    # Her turn times out (she stands on 19), bob stands: the round is paid and her seat freed.
    clock.sweep(now=Table.objects.get(pk=table.pk).deadline)
    act(table, bob, "stand")
    assert Round.objects.get(table=table).results["seats"][0]["net"] == 100
    assert Seat.objects.get(table=table, number=1).user is None
    assert audit_ledger().ok
    with pytest.raises(Refused) as refused:  # no longer seated: her account row is read
        act(table, alice, "sit", seat=3)
    assert refused.value.code == "suspended"

    admin_client.post(USERS, {"action": "unsuspend", "_selected_action": [alice.pk]})
    alice.refresh_from_db()
    assert not alice.suspended
    act(table, alice, "sit", seat=3)


def test_a_suspended_player_between_rounds_stands_up_at_once(admin_client, table, alice, act):
    act(table, alice, "sit", seat=1)
    admin_client.post(USERS, {"action": "suspend", "_selected_action": [alice.pk]})
    assert not Seat.objects.filter(user=alice).exists()
    assert Table.objects.get(pk=table.pk).phase == Phase.WAITING


def test_staff_cannot_suspend_themselves(admin_client, root):
    response = admin_client.post(USERS, {"action": "suspend", "_selected_action": [root.pk]}, follow=True)
    assert "cannot suspend themselves" in response.text
    root.refresh_from_db()
    assert not root.suspended


def test_nothing_in_the_admin_changes_or_deletes_a_ledger_entry(admin_client, alice):
    entry = LedgerEntry.objects.filter(wallet__user=alice).first()
    listing = reverse("admin:accounts_ledgerentry_changelist")
    page = admin_client.get(listing)
    assert page.status_code == 200
    assert "delete_selected" not in page.text
    response = admin_client.post(
        listing, {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"}
    )
    assert response.status_code in (200, 302)
    change = reverse("admin:accounts_ledgerentry_change", args=[entry.pk])
    assert admin_client.post(change, {"amount": 1, "memo": "edited"}).status_code == 403
    delete = reverse("admin:accounts_ledgerentry_delete", args=[entry.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert admin_client.get(reverse("admin:accounts_ledgerentry_add")).status_code == 403
    kept = LedgerEntry.objects.get(pk=entry.pk)
    assert (kept.amount, kept.memo) == (entry.amount, entry.memo)


def test_the_ledger_filters_by_user_kind_table_and_date(
    admin_client, root, alice, bob, table, act, scripted_shoe
):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["Td", "7c"]))  # no natural: the round stays open
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=40)
    adjust(admin_client, [bob], apply="1", amount="5", reason="test")
    listing = reverse("admin:accounts_ledgerentry_changelist")

    def rows(**query):
        response = admin_client.get(listing, query)
        assert response.status_code == 200, query
        return list(response.context["cl"].result_list)

    assert {entry.kind for entry in rows(q="alice")} == {"grant", "bet"}
    assert {entry.memo for entry in rows(kind__exact="adjustment")} == {"test"}
    assert [entry.amount for entry in rows(game="blackjack", table=table.pk, kind__exact="bet")] == [40, -40]
    # and its float's funding
    assert {entry.kind for entry in rows(game="blackjack", table=table.pk)} == {"bet", "float"}
    assert {entry.kind for entry in rows(game="blackjack")} == {"bet", "float"}
    assert rows(game="durak") == []
    today = timezone.now()
    assert (
        len(rows(created_at__year=today.year, created_at__month=today.month)) == 12
    )  # 3 grants, bet, adjustment, the table's float funded
    assert rows(created_at__year=today.year - 1) == []
    assert {entry.wallet.user for entry in rows(q="bob")} == {bob}


def test_rounds_are_read_only_filterable_and_link_to_their_replay(
    admin_client, table, alice, act, scripted_shoe
):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=20)
    act(table, alice, "stand")
    rnd = Round.objects.get(table=table)
    listing = admin_client.get(reverse("admin:tables_round_changelist"), {"table__id__exact": table.pk})
    assert list(listing.context["cl"].result_list) == [rnd]
    assert reverse("round_replay", args=[rnd.pk]) in listing.text
    page = admin_client.get(reverse("admin:tables_round_change", args=[rnd.pk]))
    assert page.status_code == 200
    assert 'name="min_bet"' not in page.text
    assert '"state"' not in page.text
    shoes = admin_client.get(reverse("admin:tables_shoe_changelist"), {"q": rnd.shoe.seed_hash})
    assert list(shoes.context["cl"].result_list) == [rnd.shoe]
    assert rnd.shoe.server_seed not in shoes.text


def deactivate(client, user):
    """Untick "active" on the user's admin page, the admin's way to close an account (its seats are released
    once the change is committed: here, when the test's transaction would commit)."""
    data = {
        "username": user.username,
        "display_name": user.display_name,
        "avatar": user.avatar,
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(reverse("admin:accounts_user_change", args=[user.pk]), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    user.refresh_from_db()
    assert not user.is_active


def test_a_deactivated_player_is_stood_up_and_an_open_websocket_cannot_play(
    admin_client, table, alice, bob, act, balance
):
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    deactivate(admin_client, alice)
    assert Seat.objects.get(table=table, number=1).user is None  # no chips in play: at once
    # A websocket opened before keeps the user it authenticated: the service reads the account again.
    with pytest.raises(Refused) as refused:
        act(table, alice, "sit", seat=3)
    assert refused.value.code == "suspended"
    assert balance(alice) == 10_000


def test_a_player_deactivated_mid_round_leaves_after_it_and_cannot_act(
    admin_client, table, alice, bob, act, balance, scripted_shoe
):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["9s", "8h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=100)
    deactivate(admin_client, alice)
    seat = Seat.objects.get(table=table, number=1)
    assert (seat.user, seat.leaving_after_round) == (alice, True)  # her chips are in play
    with pytest.raises(Refused) as refused:
        act(table, alice, "double")
    assert refused.value.code == "suspended"
    clock.sweep(now=Table.objects.get(pk=table.pk).deadline)  # her turn times out: she stands on 19
    act(table, bob, "stand")
    assert Seat.objects.get(table=table, number=1).user is None
    assert balance(alice) == 10_100
    assert audit_ledger().ok


def test_a_suspended_player_cannot_open_a_table(alice, django_user_model):
    django_user_model.objects.filter(pk=alice.pk).update(suspended=True)
    alice.refresh_from_db()
    with pytest.raises(Refused) as refused:
        staff.open_table(user=alice, name="Mine", preset="Vegas Strip", min_bet=1, max_bet=100, private=False)
    assert refused.value.code == "suspended"
    assert not Table.objects.filter(created_by=alice).exists()
