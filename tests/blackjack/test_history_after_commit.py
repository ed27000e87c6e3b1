"""A settled round's history is recorded after the settlement commits, in a transaction of its own: a failure
there is logged, and the chips, the results and the table's next round are not held up by it."""

import pytest

from accounts.audit import audit_ledger
from blackjack.history import recording
from blackjack.history.records import PlayerRound
from blackjack.models import Phase, Round, Table
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


def test_a_failure_in_history_recording_neither_rolls_back_nor_stalls_the_settlement(
    table, alice, act, scripted_shoe, balance, monkeypatch, caplog
):
    def broken_recording(**kwargs):
        raise RuntimeError("a bug in the statistics")

    monkeypatch.setattr(recording, "record_round", broken_recording)
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7c", "Kd"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=100)
    act(table, alice, "stand")  # 19 against 17: the settlement pays 200
    rnd = Round.objects.get(table=table, number=1)
    assert rnd.settled_at is not None
    assert rnd.results["seats"][0]["net"] == 100
    assert balance(alice) == 10_100
    assert Table.objects.get(pk=table.pk).phase == Phase.SETTLED
    assert "recording its history failed" in caplog.text
    assert not PlayerRound.objects.exists()
    assert audit_ledger().ok
    act(table, alice, "ready")  # the table goes on
    assert Table.objects.get(pk=table.pk).phase == Phase.BETTING


def test_history_is_recorded_once_the_settlement_has_committed(table, alice, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7c", "Kd"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=100)
    act(table, alice, "stand")
    assert list(PlayerRound.objects.values_list("user_id", "net")) == [(alice.pk, 100)]
