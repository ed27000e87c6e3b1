"""On PostgreSQL, where row locks are real: concurrent actions and expiries on one table serialise.

Run with DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db>:
`pytest tests/blackjack -m postgres --create-db`.
"""

import threading
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, connections, transaction
from django.utils import timezone

from accounts.audit import audit_ledger
from accounts.models import LedgerEntry
from blackjack import services
from blackjack.models import Table
from live import clock
from tests.blackjack.conftest import deal_cards

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def run_together(*calls):
    """Start every call at the same moment, each in its own thread (own connection); return results/errors."""
    barrier = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def worker(index, call):
        try:
            barrier.wait()
            outcomes[index] = ("ok", call())
        except Exception as exc:
            outcomes[index] = ("error", exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcomes


@pytest.mark.parametrize("attempt", range(5))
def test_two_players_betting_at_the_same_moment_both_bet_once(
    table, alice, bob, act, balance, scripted_shoe, attempt
):
    # Cards that leave the round in play once both have bet (a shuffled shoe dealt both a blackjack now and
    # then, which settled the round at once and paid them).
    scripted_shoe(table, deal_cards(["Ts", "7h"], ["9s", "8h"], dealer=["9c", "7d"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    version = Table.objects.get(pk=table.pk).version

    def bet(user, amount):
        return lambda: services.perform(
            table_id=table.pk, user=user, action={"action": "bet", "amount": amount}, expected_version=version
        )

    outcomes = run_together(bet(alice, 100), bet(bob, 200))
    assert [kind for kind, _ in outcomes] == ["ok", "ok"], outcomes
    assert sorted(value for _, value in outcomes) == [version + 1, version + 2]  # one after the other
    assert (balance(alice), balance(bob)) == (9_900, 9_800)
    assert LedgerEntry.objects.filter(kind="bet").count() == 4  # two movements: player row + house row each
    assert audit_ledger().ok


@pytest.mark.parametrize("attempt", range(3))
def test_the_same_turn_action_from_two_tabs_applies_once(table, alice, act, balance, scripted_shoe, attempt):
    scripted_shoe(table, deal_cards(["6s", "5h"], dealer=["9c", "7d"], then=["Td"]))  # 11 against a 9
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", seat=1, amount=100)
    table.refresh_from_db()
    assert table.phase == "playing"
    version = table.version

    def double():
        return services.perform(
            table_id=table.pk, user=alice, action={"action": "double", "seat": 1}, expected_version=version
        )

    outcomes = run_together(double, double)
    kinds = sorted(kind for kind, _ in outcomes)
    assert kinds == ["error", "ok"], outcomes
    error = next(value for kind, value in outcomes if kind == "error")
    assert error.code == "stale_version"
    assert LedgerEntry.objects.filter(kind="bet", wallet__user=alice).count() == 2  # the bet and one double
    assert audit_ledger().ok


def test_a_double_click_applies_once(table, alice, act, balance):
    act(table, alice, "sit", seat=1)
    act(table, alice, "sit", seat=2)
    version = Table.objects.get(pk=table.pk).version

    def bet():
        return services.perform(
            table_id=table.pk,
            user=alice,
            action={"action": "bet", "amount": 50, "seat": 1},
            expected_version=version,
        )

    outcomes = run_together(bet, bet, bet)
    assert sorted(kind for kind, _ in outcomes) == ["error", "error", "ok"]
    assert balance(alice) == 9_950


def test_two_clocks_apply_a_deadline_once(table, alice, act):
    act(table, alice, "sit", seat=1)
    moment = Table.objects.get(pk=table.pk).deadline + timedelta(seconds=1)
    outcomes = run_together(*(lambda: clock.sweep(now=moment) for _ in range(4)))
    assert sorted(value for _, value in outcomes) == [0, 0, 0, 1], outcomes
    t = Table.objects.select_related("current_round").get(pk=table.pk)
    assert t.current_round.number == 2
    assert t.deadline > timezone.now()


def test_an_action_locks_its_table_and_not_the_preset_it_shares(make_table, alice, bob, act):
    first, second = make_table(), make_table()
    assert first.preset_id == second.preset_id
    act(first, alice, "sit", seat=1)
    act(second, bob, "sit", seat=1)
    locked, release = threading.Event(), threading.Event()

    def hold_first_table():
        try:
            with transaction.atomic():
                services.load.begin(first.pk)  # as an action does: the table's row lock, held
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_first_table)
    holder.start()
    try:
        assert locked.wait(10)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '2s'")
            # The shared preset row is not locked by the other table's action...
            preset_row = "SELECT id FROM tables_rulepreset WHERE id = %s FOR UPDATE NOWAIT"
            cursor.execute(preset_row, [second.preset_id])
            # ...and the other table's action goes on while it runs.
            act(second, bob, "bet", amount=10)
        with pytest.raises(OperationalError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT id FROM tables_table WHERE id = %s FOR UPDATE NOWAIT", [first.pk])
    finally:
        release.set()
        holder.join(10)


def raw_connection():
    """A connection of its own, outside Django: another server process's, as far as this one can tell."""
    import psycopg

    settings = connection.settings_dict
    return psycopg.connect(
        dbname=settings["NAME"], user=settings["USER"], host=settings["HOST"], port=settings["PORT"] or 5432
    )


def test_a_lapsed_owner_paused_mid_pipeline_with_the_row_locked_is_cut_off_and_the_lease_taken(table):
    """A process stopped between sending a pipeline's statements and their Sync keeps the table's row locked
    with its backend "active" (never ended by idle_in_transaction_session_timeout): taking the lapsed lease
    ends that backend instead of waiting for the process to wake up."""
    import psycopg

    from live import lease

    lapsed = timezone.now() - timedelta(seconds=1)
    Table.objects.filter(pk=table.pk).update(owner="live.paused.1.abcd", epoch=3, lease_until=lapsed)
    stale = raw_connection()
    holder = stale.info.backend_pid
    try:
        stale.execute("BEGIN")
        with stale.pipeline():
            cursor = stale.cursor()
            cursor.execute(
                f"UPDATE {Table._meta.db_table} SET version = version WHERE id = %s RETURNING id", [table.pk]
            )
            assert cursor.fetchone() == (table.pk,)  # the server answered; the pipeline's Sync is not sent
            with connection.cursor() as probe:
                probe.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", [holder])
                assert probe.fetchone() == ("active",)
            with transaction.atomic():
                epoch = lease.acquire(Table, table.pk, now=timezone.now(), me="live.taker.2.abcd")
            assert epoch == 4
            assert Table.objects.values_list("owner", "epoch").get(pk=table.pk) == ("live.taker.2.abcd", 4)
            with connection.cursor() as probe:
                probe.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [holder])
                assert probe.fetchone() == (0,)  # its backend was ended
    except psycopg.OperationalError:
        pass  # the ended connection fails once its pipeline ends, as the paused process's does on waking
    finally:
        stale.close()


def test_taking_a_live_lease_whose_row_its_owner_holds_waits_then_names_the_owner(table):
    """A live owner writing its row is waited for (each wait bounded), never cut off."""
    from live import lease
    from live.lease import OwnedElsewhere

    until = timezone.now() + timedelta(seconds=30)
    Table.objects.filter(pk=table.pk).update(owner="live.live.1.abcd", epoch=2, lease_until=until)
    owner = raw_connection()
    try:
        owner.execute(f"UPDATE {Table._meta.db_table} SET version = version WHERE id = %s", [table.pk])
        ends = threading.Timer(1.5, owner.commit)  # the owner's write ends after more than one lock wait
        ends.start()
        with pytest.raises(OwnedElsewhere) as owned, transaction.atomic():
            lease.acquire(Table, table.pk, now=timezone.now(), me="live.taker.2.abcd")
        ends.join()
        assert owned.value.owner == "live.live.1.abcd"
        assert not owner.closed  # not cut off
        assert Table.objects.values_list("owner", "epoch").get(pk=table.pk) == ("live.live.1.abcd", 2)
    finally:
        owner.close()
