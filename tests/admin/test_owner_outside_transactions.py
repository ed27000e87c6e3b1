"""A staff operation on a table a live process owns waits for the owner's answer outside any transaction: the
owner commits in a transaction of its own, which the caller's would hold up (SQLite's write lock) until the
caller gave up. Inside one it is refused at once, for every game (`live.route.outside_transactions`)."""

import time

import pytest
from django.db import transaction

from blackjack import operations
from blackjack.models import Table
from durak import operations as durak_operations
from durak.models import DurakTable, Status
from tests.durak.live.conftest import open_durak_table
from tests.fake_owner import lease

pytestmark = pytest.mark.django_db

ELSEWHERE = "live.elsewhere.1"


def refused_at_once(operation) -> None:
    started = time.monotonic()
    with transaction.atomic(), pytest.raises(RuntimeError, match="inside a transaction"):
        operation()
    assert time.monotonic() - started < 1.0


def test_a_blackjack_staff_edit_in_a_transaction_is_refused_at_once(table):
    lease(Table, table, ELSEWHERE)
    refused_at_once(lambda: operations.update_table(table_id=table.pk, min_bet=25))
    refused_at_once(lambda: operations.close_table(table_id=table.pk))
    assert Table.objects.get(pk=table.pk).min_bet == 10


def test_a_durak_staff_operation_in_a_transaction_is_refused_at_once(alice):
    table = open_durak_table(alice, seats=3)
    lease(DurakTable, table, ELSEWHERE)
    refused_at_once(lambda: durak_operations.close_table(table_id=table.pk))
    assert DurakTable.objects.get(pk=table.pk).status != Status.CLOSED


def test_a_table_nobody_owns_is_edited_in_the_callers_transaction(table):
    with transaction.atomic():
        operations.update_table(table_id=table.pk, min_bet=25)
    assert Table.objects.get(pk=table.pk).min_bet == 25
