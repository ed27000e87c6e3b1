"""Statements sent together (storage.batch): the same effects and rows as one by one, in one round trip
on PostgreSQL; a failing statement fails the whole; plain SQL of model columns written as the ORM writes."""

from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, connection, transaction

from blackjack.engine.rules import PRESETS
from blackjack.models import RulePreset, Seat, Table, TableEvent
from storage.batch import Batch, ModelStatement, returning_together
from tests.blackjack.conftest import round_trips

pytestmark = pytest.mark.django_db

_RENAME = "UPDATE tables_table SET name = name || %s WHERE id = %s RETURNING id, name"
_INSERT_EVENT = ModelStatement(
    TableEvent,
    ("table", "round", "kind", "text", "created_at"),
    "INSERT INTO {table} ({columns}) VALUES {row}",
)
_UPDATE_TABLE = ModelStatement(
    Table, ("name", "deadline", "window_actors", "current_round"), "UPDATE {table} SET {set} WHERE id = %s"
)


def trips(count: int) -> int:
    """The round trips of `count` statements sent together: one on PostgreSQL, one each elsewhere."""
    return 1 if connection.vendor == "postgresql" else count


@pytest.fixture
def tables(django_user_model):
    preset = RulePreset.objects.create(name="Batched", rules=PRESETS["Vegas Strip"].to_dict())
    made = [Table.objects.create(name=f"t{n}", preset=preset, min_bet=10, max_bet=500) for n in range(2)]
    Seat.objects.create(table=made[1], number=3, user=django_user_model.objects.create_user(username="pat"))
    return made


def check_a_batch(tables) -> None:
    """Writes wait in a batch until it is flushed, then reach the database in order; a failing statement
    fails the flush and its transaction with it."""
    table = tables[0]
    moment = datetime(2026, 1, 2, 3, 4, 5, 678_000, tzinfo=UTC)
    batch = Batch()
    with round_trips() as sent:
        batch.add(
            _UPDATE_TABLE.sql, [*_UPDATE_TABLE.params(["renamed", moment, {"1": [2, 3]}, None]), table.pk]
        )
        rows = [(table.pk, None, TableEvent.Kind.ROUND, f"batched {n}", moment) for n in range(2)]
        batch.add(_INSERT_EVENT.rows(2), [param for row in rows for param in _INSERT_EVENT.params(row)])
        assert sent == []
        batch.flush()
    assert len(sent) == trips(2)
    stored = Table.objects.get(pk=table.pk)
    assert (stored.name, stored.deadline, stored.window_actors) == ("renamed", moment, {"1": [2, 3]})
    events = TableEvent.objects.filter(table=table).order_by("id")
    assert [(event.text, event.created_at) for event in events] == [
        ("batched 0", moment),
        ("batched 1", moment),
    ]

    taken = Seat.objects.get(table=tables[1], number=3)
    batch = Batch()
    batch.add(_UPDATE_TABLE.sql, [*_UPDATE_TABLE.params(["never", None, {}, None]), table.pk])
    batch.add(  # seat 3 is taken
        "INSERT INTO tables_seat (table_id, number, user_id, missed_rounds, sitting_out, ready, "
        "leaving_after_round, client_seed) VALUES (%s, 3, %s, 0, false, false, false, '')",
        [tables[1].pk, taken.user_id],
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        batch.flush()
    assert Table.objects.get(pk=table.pk).name == "renamed"


def test_a_batch_flushes_its_writes_in_order(tables):
    check_a_batch(tables)


@pytest.mark.postgres
def test_a_batch_is_one_round_trip_on_postgresql(tables):
    check_a_batch(tables)


def check_returning_together(tables) -> None:
    """Statements with RETURNING run in order and give each one's rows."""
    first, second = tables[0].pk, tables[1].pk
    with round_trips() as sent:
        found = returning_together((_RENAME, ["-a", first]), (_RENAME, ["-b", 999_999]))  # no such row
    assert found == [[(first, "t0-a")], []]
    assert len(sent) == trips(2)
    # The second sees the first one's change.
    found = returning_together((_RENAME, ["-c", second]), (_RENAME, ["-d", second]))
    assert found == [[(second, "t1-c")], [(second, "t1-c-d")]]


def test_statements_with_returning_go_together(tables):
    check_returning_together(tables)


@pytest.mark.postgres
def test_statements_with_returning_go_together_on_postgresql(tables):
    check_returning_together(tables)
