import io

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError
from django.db import connection

from accounts import services
from accounts.audit import audit_ledger


def run_audit_command(capsys):
    """Run `manage.py audit_ledger` the way the shell does; return (exit code, stdout, stderr)."""
    command = load_command_class("accounts", "audit_ledger")
    try:
        command.run_from_argv(["manage.py", "audit_ledger"])
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_ledger_exits_zero_with_summary(transactional_db, player, other_player, capsys):
    services.stake(user=player, amount=300)
    services.pay(user=other_player, amount=120)
    code, out, err = run_audit_command(capsys)
    assert code == 0, err
    assert "wallets: 4" in out
    assert "entries: 8" in out
    assert "chips in play (players): 19,820" in out
    assert "chips issued (grants and adjustments): 20,000" in out
    assert "house result: +180" in out
    assert "ledger OK" in out


def test_corrupted_balance_exits_non_zero_and_lists_it(transactional_db, player, capsys):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE accounts_wallet SET balance = balance + 7 WHERE user_id = %s", [player.pk])
    wallet_id = player.wallet.pk
    code, _out, err = run_audit_command(capsys)
    assert code == 1
    assert f"wallet {wallet_id} (user #{player.pk}): balance 10007 but its entries sum to 10000" in err
    assert "balances sum to 7, not 0" in err
    assert "2 discrepancies" in err


@pytest.mark.django_db
def test_broken_balance_after_chain_is_found(player):
    services.stake(user=player, amount=100)
    entry_id = player.wallet.entries.order_by("id").first().pk
    with connection.cursor() as cursor:
        cursor.execute("UPDATE accounts_ledgerentry SET balance_after = 9999 WHERE id = %s", [entry_id])
    report = audit_ledger()
    assert report.discrepancies == [
        f"entry {entry_id} (wallet {player.wallet.pk}): balance_after 9999, chain gives 10000"
    ]


@pytest.mark.django_db
def test_one_sided_entry_is_found(player):
    entry = services.stake(user=player, amount=100)
    with connection.cursor() as cursor:
        # Remove the house side and repair the house balance: only the double-entry check can notice.
        house_side = "DELETE FROM accounts_ledgerentry WHERE transfer = %s AND id <> %s"
        cursor.execute(house_side, [entry.transfer.hex, entry.pk])
        cursor.execute("UPDATE accounts_wallet SET balance = 0 WHERE kind = 'house'")
        cursor.execute("UPDATE accounts_wallet SET balance = balance + 100 WHERE kind = 'issuer'")
    report = audit_ledger()
    assert any(f"transfer {entry.transfer}: 1 entries summing to -100" in p for p in report.discrepancies)


@pytest.mark.django_db
def test_summary_figures(player, other_player):
    services.stake(user=player, amount=1_000)
    services.pay(user=other_player, amount=400)
    report = audit_ledger()
    assert report.ok
    assert (report.wallets, report.entries, report.chips_in_play, report.issued, report.house_result) == (
        4,
        8,
        19_400,
        20_000,
        600,
    )
    assert report.total == 0


@pytest.mark.django_db
def test_negative_player_balance_is_reported_even_without_the_constraint(player):
    with connection.cursor() as cursor:
        # Switch the database's own guard off (for this test's transaction) to show the audit's second line.
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA ignore_check_constraints = ON")
        else:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses while FK checks are pending
            cursor.execute("ALTER TABLE accounts_wallet DROP CONSTRAINT wallet_player_balance_non_negative")
        try:
            cursor.execute("UPDATE accounts_wallet SET balance = -5 WHERE user_id = %s", [player.pk])
        finally:
            if connection.vendor == "sqlite":
                cursor.execute("PRAGMA ignore_check_constraints = OFF")
    report = audit_ledger()
    assert f"wallet {player.wallet.pk} (user #{player.pk}): negative balance -5" in report.discrepancies


@pytest.mark.django_db
def test_call_command_raises_on_discrepancy(player):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE accounts_wallet SET balance = balance - 1 WHERE kind = 'house'")
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="2 discrepancies"):
        call_command("audit_ledger", stdout=out, stderr=err)
    assert "house wallet" in err.getvalue()
    assert "balances sum to -1, not 0" in err.getvalue()
