"""services.perform: seats, bets, the deal and play through the one entry point, with refusals that leave the
table, the round and every balance as they were."""

import pytest

from accounts.audit import audit_ledger
from blackjack import services
from blackjack.models import ActionLog, Phase, Round, Seat, Table, TableEvent
from cards.errors import Refused
from tests.blackjack.conftest import deal_cards

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
    with pytest.raises(Refused) as refused:
        act(table, bob, "hit")
    assert refused.value.code == "not_your_turn"
    with pytest.raises(Refused) as refused:
        act(table, bob, "hit", seat=1)
    assert refused.value.code == "not_your_turn"
    with pytest.raises(Refused) as refused:
        act(table, alice, "split")
    assert refused.value.code == "illegal_action"
    assert snapshot(table, alice, bob) == before


def test_a_stale_or_repeated_action_is_refused_and_never_applied_twice(table, alice, bob, act, balance):
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)  # betting stays open (no deal) while bob has not bet
    version = fresh(table).version
    services.perform(
        table_id=table.pk, user=alice, action={"action": "bet", "amount": 40}, expected_version=version
    )
    before = snapshot(table, alice)
    for expected in (version, version - 1, None, "1"):
        with pytest.raises(Refused) as refused:
            services.perform(
                table_id=table.pk,
                user=alice,
                action={"action": "bet", "amount": 40},
                expected_version=expected,
            )
        assert refused.value.code == "stale_version"
    assert snapshot(table, alice) == before
    assert balance(alice) == 9_960


def test_anonymous_and_spectators_cannot_act(table, alice, bob, act):
    from django.contrib.auth.models import AnonymousUser

    act(table, alice, "sit", seat=1)
    before = snapshot(table, alice, bob)
    with pytest.raises(Refused) as refused:
        act(table, AnonymousUser(), "bet", amount=10)
    assert refused.value.code == "not_authenticated"
    with pytest.raises(Refused) as refused:
        act(table, bob, "bet", amount=10)
    assert refused.value.code == "not_your_turn"
    with pytest.raises(Refused) as refused:
        act(table, bob, "bet", amount=10, seat=1)
    assert refused.value.code == "not_your_turn"
    with pytest.raises(Refused) as refused:
        act(table, bob, "leave")
    assert refused.value.code == "illegal_action"
    assert snapshot(table, alice, bob) == before


def test_seat_refusals(make_table, alice, bob, act):
    table = make_table(seats=3, seats_per_player=1)
    act(table, alice, "sit", seat=2)
    before = snapshot(table, alice, bob)
    for args, code in (
        ({"seat": 2}, "seat_taken"),
        ({"seat": 4}, "bad_message"),
        ({"seat": 0}, "bad_message"),
        ({}, "bad_message"),
    ):
        with pytest.raises(Refused) as refused:
            act(table, bob, "sit", **args)
        assert refused.value.code == code
    with pytest.raises(Refused) as refused:
        act(table, alice, "sit", seat=3)
    assert refused.value.code == "illegal_action"  # one seat per player here
    assert snapshot(table, alice, bob) == before
    Table.objects.filter(pk=table.pk).update(is_open=False)
    with pytest.raises(Refused) as refused:
        act(table, bob, "sit", seat=3)
    assert refused.value.code == "table_closed"


def test_bet_amounts_outside_the_limits_are_refused(table, alice, act):
    act(table, alice, "sit", seat=1)
    before = snapshot(table, alice)
    for amount, code in ((9, "bad_amount"), (501, "bad_amount"), (0, "bad_amount"), ("10", "bad_message")):
        with pytest.raises(Refused) as refused:
            act(table, alice, "bet", amount=amount)
        assert refused.value.code == code
    assert snapshot(table, alice) == before


def test_insufficient_chips_leaves_nothing_behind(table, alice, bob, act, balance):
    from accounts.services import stake

    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    stake(user=alice, amount=9_950)  # alice has 50 chips left
    before = snapshot(table, alice, bob)
    with pytest.raises(Refused) as refused:
        act(table, alice, "bet", amount=100)
    assert refused.value.code == "insufficient_chips"
    assert snapshot(table, alice, bob) == before
    assert balance(alice) == 50


def test_a_double_without_the_chips_is_refused(table, alice, act, balance, scripted_shoe):
    from accounts.services import stake

    scripted_shoe(table, deal_cards(["5s", "6h"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    stake(user=alice, amount=9_900)
    act(table, alice, "bet", amount=100)  # her last 100 chips
    before = snapshot(table, alice)
    with pytest.raises(Refused) as refused:
        act(table, alice, "double")
    assert refused.value.code == "insufficient_chips"
    assert snapshot(table, alice) == before
    act(table, alice, "hit")  # hitting costs nothing


def test_lowering_a_bet_refunds_the_difference(table, alice, bob, act, balance):
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=300)
    act(table, alice, "bet", seat=1, amount=100)
    assert balance(alice) == 9_900
    assert audit_ledger().ok


def test_open_table_within_the_bounds(alice):
    from tests.blackjack.conftest import preset_row

    preset_row("European")
    table = services.open_table(
        user=alice, name=" Late night ", preset="European", min_bet=5, max_bet=200, private=True
    )
    assert (table.name, table.is_private, table.created_by, table.preset.name) == (
        "Late night",
        True,
        alice,
        "European",
    )
    assert Seat.objects.filter(table=table).count() == table.seats
    assert len(table.private_token) >= 20
    for kwargs, code in (
        ({"min_bet": 0, "max_bet": 10}, "bad_amount"),
        ({"min_bet": 50, "max_bet": 10}, "bad_amount"),
        ({"min_bet": 10, "max_bet": 10_001}, "bad_amount"),
        ({"min_bet": "5", "max_bet": 10}, "bad_amount"),
        ({"min_bet": 5, "max_bet": 10, "preset": "Nowhere"}, "bad_message"),
        ({"min_bet": 5, "max_bet": 10, "name": ""}, "bad_message"),
    ):
        args = {"name": "t", "preset": "European", "private": False} | kwargs
        with pytest.raises(Refused) as refused:
            services.open_table(user=alice, **args)
        assert refused.value.code == code
