"""Quarantine (`live.quarantine`, blackjack's stop: `blackjack.services.quarantine`): a table whose commands
keep failing outside the engine (here a settlement whose write raises, injected) is stopped after `FAILURES`
in a row on every path (a player's action through the services or the table actor, the clock's expiry through
the services or the actor's timer): the round is voided and every stake refunded exactly, everyone stands up,
the table is closed and marked for staff with the reason, the players read a notice, an error with the
traceback is logged; staff reopening it clears it. A single failure does not quarantine."""

import logging
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.audit import audit_ledger
from blackjack import actors, services
from blackjack.models import Phase, Round, Seat, Table, TableEvent
from blackjack.services import store
from blackjack.services.quarantine import NOTICE as TABLE_NOTICE
from live import clock, quarantine
from live.lease import OwnedElsewhere
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


class Broken(RuntimeError):
    """The injected failure."""


@pytest.fixture(autouse=True)
def _fresh_counts():
    quarantine._failures.clear()
    actors.forget_actors()
    yield
    quarantine._failures.clear()
    actors.forget_actors()


@pytest.fixture
def failing_settlements(monkeypatch):
    """Every write of an outcome that settles a round raises (the first `times` of them; all by default)."""
    real = store.write
    calls = {"failed": 0, "times": None}

    def write(loaded, out, **kwargs):
        if out.settled is not None and (calls["times"] is None or calls["failed"] < calls["times"]):
            calls["failed"] += 1
            raise Broken("the settlement's write broke")
        return real(loaded, out, **kwargs)

    monkeypatch.setattr(store, "write", write)
    return calls


@pytest.fixture
def dealt(table, alice, bob, act, scripted_shoe):
    """alice (100) and bob (50) dealt, alice stood: bob's stand settles the round."""
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "8d"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=50)
    act(table, alice, "stand")
    assert Table.objects.get(pk=table.pk).phase == Phase.PLAYING
    return table


def version_of(table) -> int:
    return Table.objects.values_list("version", flat=True).get(pk=table.pk)


def through_services(table, user):
    return services.perform(
        table_id=table.pk, user=user, action={"action": "stand"}, expected_version=version_of(table)
    )


def through_actor(table, user):
    """One command as the actor's mailbox applies it (`TableActor.apply`, on its database thread)."""
    build = actors.player_action(user, {"action": "stand"}, version_of(table))
    return actors.actor_for(table.pk).apply(build)


def assert_quarantined(table, alice, bob, balance):
    table = Table.objects.get(pk=table.pk)
    assert table.quarantined_at is not None
    assert "Broken: the settlement's write broke" in table.quarantine_reason
    assert not table.is_open
    assert Round.objects.get(table=table, number=1).voided
    assert (balance(alice), balance(bob)) == (10_000, 10_000)  # every stake back, nothing else
    assert not Seat.objects.filter(table=table, user__isnull=False).exists()
    assert TableEvent.objects.filter(table=table, text=TABLE_NOTICE).exists()
    assert audit_ledger().ok


@pytest.mark.parametrize("path", [through_services, through_actor], ids=["services", "actor"])
def test_a_players_command_failing_three_times_quarantines_the_table(
    path, dealt, alice, bob, balance, failing_settlements, caplog
):
    for _ in range(quarantine.FAILURES - 1):
        with pytest.raises(Broken):
            path(dealt, bob)
        assert Table.objects.get(pk=dealt.pk).phase == Phase.PLAYING  # nothing written, stakes held
    with (
        caplog.at_level(logging.ERROR, logger="live.quarantine"),
        pytest.raises(quarantine.Quarantined) as refused,
    ):
        path(dealt, bob)
    assert (refused.value.code, refused.value.message) == ("table_closed", quarantine.NOTICE)
    assert_quarantined(dealt, alice, bob, balance)
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert f"table {dealt.pk} quarantined" in record.getMessage()
    assert record.exc_info[0] is Broken  # the traceback for the alert


def test_the_clocks_expiry_failing_three_times_quarantines_the_table(
    dealt, alice, bob, balance, failing_settlements
):
    later = timezone.now() + timedelta(seconds=dealt.turn_seconds + 1)
    for _ in range(quarantine.FAILURES - 1):
        assert clock.sweep(now=later) == 0  # bob's turn times out: the settlement fails, logged
    assert clock.sweep(now=later) == 1
    assert_quarantined(dealt, alice, bob, balance)


def test_the_actors_timer_failing_three_times_quarantines_the_table(
    dealt, alice, bob, balance, failing_settlements
):
    Table.objects.filter(pk=dealt.pk).update(
        deadline=timezone.now() - timedelta(seconds=1)
    )  # bob's turn is up
    actor = actors.actor_for(dealt.pk)
    for _ in range(quarantine.FAILURES - 1):
        assert actor.expire(version_of(dealt)) == 0  # what the timer puts in the mailbox; failures logged
    assert actor.expire(version_of(dealt)) == 1  # the table was stopped
    assert_quarantined(dealt, alice, bob, balance)


def test_a_table_whose_voiding_fails_too_is_closed_with_its_stakes_held(
    dealt, alice, bob, balance, monkeypatch, caplog
):
    def broken(loaded, out, **kwargs):
        raise Broken("every write of this table breaks")

    monkeypatch.setattr(store, "write", broken)
    for _ in range(quarantine.FAILURES - 1):
        with pytest.raises(Broken):
            through_services(dealt, bob)
    version = version_of(dealt)
    with pytest.raises(quarantine.Quarantined) as refused:
        through_services(dealt, bob)
    assert refused.value.message == quarantine.STUCK_NOTICE
    table = Table.objects.get(pk=dealt.pk)
    assert (table.is_open, table.deadline, table.version) == (False, None, version + 1)
    assert "stopping it failed too" in table.quarantine_reason
    assert (balance(alice), balance(bob)) == (9_900, 9_950)  # held in the round, for staff
    assert not Round.objects.get(table=table, number=1).voided
    assert "stopping it failed; closed with the stakes held" in caplog.text
    assert audit_ledger().ok


def test_one_failure_then_success_does_not_quarantine(dealt, alice, bob, balance, failing_settlements):
    failing_settlements["times"] = quarantine.FAILURES - 1
    for _ in range(quarantine.FAILURES - 1):
        with pytest.raises(Broken):
            through_services(dealt, bob)
    through_services(dealt, bob)  # the failure was transient: the round settles
    table = Table.objects.get(pk=dealt.pk)
    assert (table.phase, table.is_open, table.quarantined_at) == (Phase.SETTLED, True, None)
    assert (balance(alice), balance(bob)) == (10_100, 10_050)
    assert quarantine._failures == {}  # the count was cleared by the success
    assert audit_ledger().ok


def test_failures_that_are_not_in_a_row_do_not_add_up(dealt, alice, bob, act, balance, failing_settlements):
    failing_settlements["times"] = 1
    with pytest.raises(Broken):
        through_services(dealt, bob)
    through_services(dealt, bob)
    assert quarantine._failures == {}
    assert Table.objects.get(pk=dealt.pk).quarantined_at is None


def test_a_database_that_cannot_be_reached_is_not_the_tables_fault(table):
    from django.db import OperationalError

    for _ in range(quarantine.FAILURES + 1):
        assert quarantine.failed("blackjack", table.pk, OperationalError("connection refused")) is None
    assert Table.objects.get(pk=table.pk).quarantined_at is None


def test_staff_find_quarantined_tables_in_the_admin_and_reopening_clears_it(
    admin_client, dealt, alice, bob, act, failing_settlements
):
    for _ in range(quarantine.FAILURES - 1):
        with pytest.raises(Broken):
            through_services(dealt, bob)
    with pytest.raises(quarantine.Quarantined):
        through_services(dealt, bob)
    changelist = reverse("admin:tables_table_changelist")
    listed = admin_client.get(changelist, {"quarantined": "yes"}).context["cl"].result_list
    assert [table.pk for table in listed] == [dealt.pk]
    assert list(admin_client.get(changelist, {"quarantined": "no"}).context["cl"].result_list) == []
    page = admin_client.get(reverse("admin:tables_table_change", args=[dealt.pk]))
    assert "the settlement&#x27;s write broke" in page.text

    admin_client.post(changelist, {"action": "reopen_tables", "_selected_action": [dealt.pk]})
    table = Table.objects.get(pk=dealt.pk)
    assert (table.is_open, table.quarantined_at, table.quarantine_reason) == (True, None, "")
    act(table, alice, "sit", seat=1)  # open to play again


def test_a_lease_another_process_holds_is_no_failure_of_the_table(table):
    """A process that lost its tables (paused past its leases) still gets commands for them: they go to the
    owner, and must not quarantine a table this process does not own."""

    def owned_elsewhere():
        raise OwnedElsewhere(table.pk, "live.other-process")

    for _ in range(quarantine.FAILURES):
        with pytest.raises(OwnedElsewhere):
            quarantine.watch("blackjack", table.pk, owned_elsewhere)
    assert Table.objects.get(pk=table.pk).quarantined_at is None
