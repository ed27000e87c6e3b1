"""services.perform: seats, bets, the deal and play through the one entry point, with refusals that leave the
table, the round and every balance as they were."""

import pytest

from accounts.audit import audit_ledger
from tables import services
from tables.models import ActionLog, Phase, Round, Seat, Table, TableEvent
from tests.tables.conftest import deal_cards

pytestmark = pytest.mark.django_db


def fresh(table: Table) -> Table:
    return Table.objects.get(pk=table.pk)


def snapshot(table: Table, *users) -> tuple:
    """Everything a refused action must leave untouched."""
    from accounts.models import LedgerEntry, Wallet

    t = fresh(table)
    rnd = Round.objects.filter(pk=t.current_round_id).values("state", "phase", "deadline").first()
    seats = list(Seat.objects.filter(table=table).values_list("number", "user_id", "ready", "sitting_out"))
    balances = list(
        Wallet.objects.filter(user__in=users).values_list("user_id", "balance").order_by("user_id")
    )
    return (
        t.version,
        t.phase,
        t.deadline,
        rnd,
        seats,
        balances,
        LedgerEntry.objects.count(),
        ActionLog.objects.count(),
    )


def test_sitting_down_opens_betting_with_a_countdown(table, alice, act):
    version = act(table, alice, "sit", seat=3)
    t = fresh(table)
    assert version == t.version == 1
    assert t.phase == Phase.BETTING
    assert t.deadline is not None
    assert round((t.deadline - t.current_round.started_at).total_seconds()) == t.betting_seconds
    assert Seat.objects.get(table=table, number=3).user == alice
    assert t.current_round.seats == [3]


def test_two_players_play_a_round_to_settlement(table, alice, bob, act, balance, scripted_shoe):
    # alice 10+7 = 17 stands; bob 9+2 = 11 doubles and draws a ten = 21; dealer 6+10 draws 9 = 25 busts.
    scripted_shoe(table, deal_cards(["Ts", "7h"], ["9c", "2d"], dealer=["6s", "Td"], then=["Kc", "9h"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    assert fresh(table).phase == Phase.BETTING  # still waiting for bob
    act(table, bob, "bet", amount=50)
    t = fresh(table)
    assert t.phase == Phase.PLAYING
    state = t.current_round.state
    assert state["turn"] == [1, 0]
    assert "shoe" not in state
    act(table, alice, "stand")
    act(table, bob, "double")
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    assert t.deadline is not None
    rnd = t.current_round
    assert rnd.settled_at is not None
    nets = {row["seat"]: row["net"] for row in rnd.results["seats"]}
    assert nets == {1: 100, 2: 100}
    assert balance(alice) == 10_100
    assert balance(bob) == 10_100
    texts = list(TableEvent.objects.filter(table=table).order_by("id").values_list("text", flat=True))
    assert "Bob doubles on 11: Kc, 21 (seat 2)." in texts
    assert "Dealer busts with 25." in texts
    report = audit_ledger()
    assert report.ok, report.discrepancies


def test_out_of_turn_and_other_seat_actions_are_refused_untouched(table, alice, bob, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "7h"], ["9c", "2d"], dealer=["6s", "Td"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=100)
    before = snapshot(table, alice, bob)
    with pytest.raises(services.ActionRefused) as refused:
        act(table, bob, "hit")
    assert refused.value.code == "not_your_turn"
    with pytest.raises(services.ActionRefused) as refused:
        act(table, bob, "hit", seat=1)
    assert refused.value.code == "not_your_turn"
    with pytest.raises(services.ActionRefused) as refused:
        act(table, alice, "split")
    assert refused.value.code == "illegal_action"
    assert snapshot(table, alice, bob) == before
