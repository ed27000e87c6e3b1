"""Crash recovery: the round lives in the database, so a restarted process continues it; a round whose stored
state cannot be loaded is voided and every stake refunded."""

import pytest

from accounts.audit import audit_ledger
from accounts.models import LedgerEntry
from tables import selectors, services
from tables.models import Phase, Round, Shoe, Table, TableEvent
from tests.tables.conftest import deal_cards

pytestmark = pytest.mark.django_db


def fresh(table: Table) -> Table:
    return Table.objects.select_related("current_round").get(pk=table.pk)


@pytest.fixture
def mid_round(table, alice, bob, act, scripted_shoe):
    """alice and bob bet 100 each; alice doubled (9 + T = 19, stake 200); bob's turn is next."""
    scripted_shoe(table, deal_cards(["5s", "4h"], ["Tc", "8d"], dealer=["7h", "Tc"], then=["Ts", "2c"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=100)
    act(table, alice, "double")  # 9 + T = 19, stake 200
    return table


def test_a_round_resumes_from_the_database(mid_round, alice, bob, act, balance):
    table = mid_round
    # A restart: nothing survives but the database; recovery finds nothing to void.
    assert services.recover_tables() == 0
    t = fresh(table)
    assert t.phase == Phase.PLAYING
    assert t.current_round.state["turn"] == [2, 0]
    act(table, bob, "stand")
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    assert (balance(alice), balance(bob)) == (10_200, 10_100)
    replayed = selectors.replay_round(round_id=t.current_round_id).to_dict()
    del replayed["shoe"]
    assert replayed == t.current_round.state
    assert audit_ledger().ok


@pytest.mark.parametrize(
    "corrupt",
    [
        {"garbage": True},
        "not even an object",
        {"phase": "playing"},
    ],
)
def test_a_corrupt_round_is_voided_and_refunded_at_recovery(mid_round, alice, bob, balance, corrupt):
    table = mid_round
    rnd = fresh(table).current_round
    assert (balance(alice), balance(bob)) == (9_800, 9_900)
    Round.objects.filter(pk=rnd.pk).update(state=corrupt)
    assert services.recover_tables() == 1
    rnd.refresh_from_db()
    assert rnd.voided
    assert rnd.results["refunds"] == {str(alice.pk): 200, str(bob.pk): 100}
    assert (balance(alice), balance(bob)) == (10_000, 10_000)
    refunds = LedgerEntry.objects.filter(round_ref=rnd.pk, kind="refund", wallet__user__isnull=False)
    assert refunds.count() == 2
    t = fresh(table)
    assert t.phase == Phase.BETTING  # both still seated: the next round opens
    assert t.current_round_id != rnd.pk
    assert Shoe.objects.get(pk=rnd.shoe_id).retired_at is not None
    assert TableEvent.objects.filter(table=table, text__contains="voided").exists()
    assert audit_ledger().ok
    assert services.recover_tables() == 0  # voided once, never twice


def test_a_corrupt_round_found_by_an_action_is_voided(mid_round, alice, bob, act, balance):
    table = mid_round
    rnd = fresh(table).current_round
    Round.objects.filter(pk=rnd.pk).update(state={"seats": "?"})
    with pytest.raises(services.ActionRefused) as refused:
        act(table, bob, "stand")
    assert refused.value.code == "illegal_action"
    assert Round.objects.get(pk=rnd.pk).voided
    assert (balance(alice), balance(bob)) == (10_000, 10_000)
    assert audit_ledger().ok


def test_a_corrupt_round_found_by_the_clock_is_voided(mid_round, alice, bob, balance, at):
    table = mid_round
    Round.objects.filter(pk=fresh(table).current_round_id).update(state={})
    assert services.expire_due(now=at(3600)) >= 1
    assert (balance(alice), balance(bob)) == (10_000, 10_000)
    assert audit_ledger().ok


def test_a_round_that_runs_out_of_cards_is_voided(make_table, alice, act, balance, monkeypatch):
    table = make_table()
    act(table, alice, "sit", seat=1)
    # A shoe of five cards cannot finish a round that draws more.
    monkeypatch.setattr(services, "_shoe_order", lambda shoe: ["2s", "2h", "2d", "2c", "3s"])
    act(table, alice, "bet", amount=50)
    act(table, alice, "hit")  # 2 + 2 + 3: the last card
    rnd = fresh(table).current_round
    with pytest.raises(services.ActionRefused) as refused:
        act(table, alice, "hit")
    assert refused.value.code == "illegal_action"
    assert Round.objects.get(pk=rnd.pk).voided
    assert balance(alice) == 10_000
    assert audit_ledger().ok
