"""The action log of a round: numbered 1, 2, 3, ... in the order applied, counted on the round
(`Round.logged`) so no action reads the log to number itself; a refused action numbers nothing. The migration
that added the counter sets it for the rounds logged before."""

import importlib

import pytest
from django.apps import apps

from blackjack.models import ActionLog, Round, Table
from cards.errors import Refused
from tests.blackjack.conftest import deal_cards

counter_migration = importlib.import_module("blackjack.migrations.0007_round_logged")


def logged(rnd: Round) -> list[tuple[int, str]]:
    return [
        (seq, action["action"])
        for seq, action in ActionLog.objects.filter(round=rnd).order_by("seq").values_list("seq", "action")
    ]


def current_round(table: Table) -> Round:
    return Table.objects.get(pk=table.pk).current_round


def test_actions_are_numbered_in_order_and_counted_on_the_round(table, alice, bob, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "7h"], ["9c", "2d"], dealer=["6s", "Td"], then=["Kc", "9h"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=50)
    with pytest.raises(Refused):
        act(table, bob, "stand")  # alice's turn: refused, and no number taken
    act(table, alice, "stand")
    act(table, bob, "double")
    rnd = current_round(table)
    assert [action for _seq, action in logged(rnd)][:2] == ["bet", "bet"]
    assert [seq for seq, _action in logged(rnd)] == list(range(1, len(logged(rnd)) + 1))
    assert [action for _seq, action in logged(rnd)][-2:] == ["stand", "double"]
    assert rnd.logged == len(logged(rnd))

    act(table, alice, "ready")
    act(table, bob, "ready")
    act(table, alice, "bet", amount=10)
    following = current_round(table)
    assert following.pk != rnd.pk
    assert logged(following) == [(1, "bet")]
    assert following.logged == 1


def test_the_migration_counts_the_rounds_logged_before(table, alice, act):
    act(table, alice, "sit", seat=1)
    empty = current_round(table)
    act(table, alice, "bet", amount=10)
    played = current_round(table)
    assert played.pk == empty.pk
    Round.objects.update(logged=0)
    other = Round.objects.create(
        table=table,
        number=played.number + 1,
        shoe=played.shoe,
        start_position=0,
        state={},
        rules={},
        min_bet=10,
        max_bet=500,
    )

    counter_migration.count_logged_actions(apps, None)

    assert Round.objects.get(pk=played.pk).logged == len(logged(played)) > 0
    assert Round.objects.get(pk=other.pk).logged == 0
