"""Prepared queries (blackjack_site.prepared): the same rows as the ORM, converted alike, for any argument."""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, signals

from blackjack_site.prepared import (
    Batch,
    Prepared,
    cache_relation,
    field_names,
    insert,
    model_rows,
    related_models,
    returning_together,
    rows_together,
    save_changed,
    save_changed_together,
    snapshot,
)
from tables.engine.rules import PRESETS
from tables.models import Presence, RulePreset, Seat, Table, TableEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def tables(django_user_model):
    preset = RulePreset.objects.create(name="Prepared", rules=PRESETS["Vegas Strip"].to_dict())
    made = [Table.objects.create(name=f"t{n}", preset=preset, min_bet=10, max_bet=500) for n in range(3)]
    user = django_user_model.objects.create_user(username="pat")
    Seat.objects.create(table=made[1], number=3, user=user)
    Presence.objects.create(table=made[1], user=user, channel_name="c1")
    for n in range(4):
        TableEvent.objects.create(table=made[1], kind=TableEvent.Kind.ACTION, text=f"e{n}")
    return made


def test_rows_equal_the_orm_for_each_argument_with_dates_and_json_converted(tables):
    def build(table_id):
        return Table.objects.filter(pk=table_id).values_list("name", "created_at", "preset__rules")

    prepared = Prepared(build, arity=1)
    for table in tables:
        assert prepared.rows(table.pk) == list(build(table.pk))
    _name, created_at, rules = prepared.rows(tables[0].pk)[0]
    assert created_at == tables[0].created_at
    assert isinstance(rules, dict)
    assert prepared.rows(-1) == []


def test_an_argument_may_appear_twice_and_slices_and_order_hold(tables):
    def seats(table_id):
        present = Presence.objects.filter(table_id=table_id, user_id=OuterRef("user_id"))
        return (
            Seat.objects.filter(table_id=table_id)
            .annotate(here=Exists(present))
            .values_list("number", "user_id", "here")
        )

    assert Prepared(seats, arity=1).rows(tables[1].pk) == [(3, tables[1].seat_set.get().user_id, True)]
    events = Prepared(
        lambda table_id: TableEvent.objects.filter(table_id=table_id).order_by("-id").values_list("text")[:2],
        arity=1,
    )
    assert events.rows(tables[1].pk) == [("e3",), ("e2",)]
    assert events.rows(tables[0].pk) == []


def test_an_argument_that_does_not_reach_the_sql_unchanged_is_refused(tables):
    prepared = Prepared(lambda table_id: Table.objects.filter(pk=table_id + 1).values_list("id"), arity=1)
    with pytest.raises(ValueError, match="unchanged"):
        prepared.rows(tables[0].pk)


def test_models_built_from_rows_equal_loaded_ones_with_relations_cached(tables, django_assert_num_queries):
    table = tables[1]
    rows = Prepared(
        lambda table_id: Table.objects.filter(pk=table_id).values_list(
            *field_names(Table), *field_names(RulePreset, "preset__")
        ),
        arity=1,
    ).rows(table.pk)
    built, preset = related_models(rows[0], (Table, RulePreset))
    cache_relation(built, "preset", preset)
    with django_assert_num_queries(0):
        assert built.preset.name == "Prepared"
    loaded = Table.objects.get(pk=table.pk)
    for field in Table._meta.concrete_fields:
        assert getattr(built, field.attname) == getattr(loaded, field.attname)
    plain = Prepared(
        lambda table_id: Table.objects.filter(pk=table_id).values_list(*field_names(Table)), arity=1
    )
    assert model_rows(Table, plain.rows(table.pk)) == [loaded]


@pytest.mark.parametrize("model", [Table, RulePreset, Seat, Presence, TableEvent, get_user_model()])
def test_instances_made_from_rows_are_those_from_db_makes(tables, model):
    """The direct way of making instances leaves them as `Model.from_db` does: the same attributes, loaded,
    from this database; and they save, compare and reach their relations as loaded ones do."""
    rows = list(model.objects.order_by("pk").values_list(*field_names(model)))
    made = model_rows(model, rows)
    loaded = [model.from_db("default", field_names(model), row) for row in rows]
    assert made == list(model.objects.order_by("pk"))
    for fast, slow in zip(made, loaded, strict=True):
        assert type(fast) is model
        assert {k: v for k, v in vars(fast).items() if k != "_state"} == {
            k: v for k, v in vars(slow).items() if k != "_state"
        }
        assert (fast._state.adding, fast._state.db) == (False, "default")
    if model is Seat:
        seat = made[0]
        assert seat.table == tables[1]
        assert seat.user.username == "pat"
        seat.ready = True
        seat.save()
        assert Seat.objects.get(pk=seat.pk).ready


def test_a_model_with_an_init_signal_receiver_is_made_by_from_db(tables):
    made = []

    def receiver(sender, instance, **kwargs):
        made.append(instance)

    signals.post_init.connect(receiver, sender=Table)
    try:
        found = model_rows(Table, Table.objects.order_by("pk").values_list(*field_names(Table)))
    finally:
        signals.post_init.disconnect(receiver, sender=Table)
    assert made == found == tables


@pytest.mark.django_db(transaction=True)
def test_each_thread_compiles_for_its_own_connection(tables):
    prepared = Prepared(lambda table_id: Table.objects.filter(pk=table_id).values_list("name"), arity=1)
    assert prepared.rows(tables[2].pk) == [("t2",)]
    seen = []

    def other_thread():
        from django.db import connection

        seen.append(prepared.rows(tables[0].pk))
        connection.close()

    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()
    assert seen == [[("t0",)]]


def seat_rows(table):
    return list(Seat.objects.filter(table=table).order_by("number").values_list(*field_names(Seat)))


def test_save_changed_writes_only_what_changed(tables, django_assert_num_queries):
    seat = Seat.objects.get(table=tables[1], number=3)
    before = snapshot(seat)
    with django_assert_num_queries(0):
        save_changed(seat, before)
    seat.ready, seat.missed_rounds = True, 2
    with django_assert_num_queries(1) as queries:
        save_changed(seat, before)
    assert '"ready"' in queries[0]["sql"]
    assert '"missed_rounds"' in queries[0]["sql"]
    assert '"client_seed"' not in queries[0]["sql"]
    assert Seat.objects.values_list("ready", "missed_rounds").get(pk=seat.pk) == (True, 2)


def test_rows_changed_alike_are_saved_together(tables, django_user_model, django_assert_num_queries):
    table = tables[0]
    users = [django_user_model.objects.create_user(username=f"p{n}") for n in range(4)]
    for number, user in enumerate(users, start=1):
        Seat.objects.create(table=table, number=number, user=user, ready=True)
    seats = list(Seat.objects.filter(table=table).order_by("number"))
    befores = [snapshot(seat) for seat in seats]
    for seat in seats[:3]:
        seat.ready = False  # alike: one statement
    seats[3].missed_rounds = 1  # different: its own statement
    expected = [tuple(getattr(seat, name) for name in field_names(Seat)) for seat in seats]

    with django_assert_num_queries(2) as queries:
        save_changed_together(list(zip(seats, befores, strict=True)))
    assert " IN (" in queries[0]["sql"]
    assert '"ready"' in queries[0]["sql"]
    assert '"missed_rounds"' in queries[1]["sql"]
    assert " IN (" not in queries[1]["sql"]
    assert seat_rows(table) == expected
    with django_assert_num_queries(0):
        save_changed_together([(seat, snapshot(seat)) for seat in seats])


@pytest.mark.parametrize("ids", [False, True])
def test_insert_writes_rows_in_one_statement_with_their_ids_when_asked(
    tables, ids, django_assert_num_queries
):
    events = [TableEvent(table=tables[2], kind=TableEvent.Kind.ROUND, text=f"new {n}") for n in range(3)]
    with django_assert_num_queries(1):
        insert(TableEvent, events, ids=ids)
    stored = list(TableEvent.objects.filter(table=tables[2]).order_by("id").values_list("id", "text"))
    assert [text for _, text in stored] == ["new 0", "new 1", "new 2"]
    if ids:
        assert [(event.pk, event.text) for event in events] == stored
        assert not any(event._state.adding for event in events)
    else:
        assert [event.pk for event in events] == [None, None, None]


def check_a_batch(tables, django_assert_num_queries) -> None:
    """Writes wait in a batch until it is flushed, then reach the database in one statement on PostgreSQL
    and one by one elsewhere; a failing statement fails the flush and its transaction with it."""
    table = Table.objects.get(pk=tables[0].pk)
    before = snapshot(table)
    table.name = "renamed"
    batch = Batch()
    with django_assert_num_queries(0):
        save_changed(table, before, batch=batch)
        insert(TableEvent, [TableEvent(table=table, kind=TableEvent.Kind.ROUND, text="batched")], batch=batch)
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 2):
        batch.flush()
    assert Table.objects.get(pk=table.pk).name == "renamed"
    assert TableEvent.objects.filter(table=table, text="batched").count() == 1

    taken = Seat.objects.get(table=tables[1], number=3)
    table.name = "never"
    batch = Batch()
    save_changed(table, snapshot(Table.objects.get(pk=table.pk)), batch=batch)
    insert(Seat, [Seat(table=tables[1], number=3, user=taken.user)], batch=batch)  # seat 3 is taken
    with pytest.raises(IntegrityError), transaction.atomic():
        batch.flush()
    assert Table.objects.get(pk=table.pk).name == "renamed"


def test_a_batch_flushes_its_writes_together(tables, django_assert_num_queries):
    check_a_batch(tables, django_assert_num_queries)


@pytest.mark.postgres
def test_a_batch_is_one_statement_on_postgresql(tables, django_assert_num_queries):
    check_a_batch(tables, django_assert_num_queries)


def check_reads_together(tables, django_assert_num_queries) -> None:
    """Several prepared reads, and a batch's writes followed by a read, give what they give one by one: in one
    round trip on PostgreSQL, one statement each elsewhere; a read after writes sees them."""
    names = Prepared(
        lambda table_id: Table.objects.filter(pk=table_id).values_list("name", "created_at"), arity=1
    )
    seats = Prepared(
        lambda table_id: (
            Seat.objects.filter(table_id=table_id).order_by("number").values_list("number", "user_id")
        ),
        arity=1,
    )
    events = Prepared(
        lambda table_id: TableEvent.objects.filter(table_id=table_id).order_by("id").values_list("text"),
        arity=1,
    )
    apart = [
        names.rows(tables[1].pk),
        seats.rows(tables[1].pk),
        events.rows(tables[0].pk),
        events.rows(tables[1].pk),
    ]
    together = 1 if connection.vendor == "postgresql" else 4
    with django_assert_num_queries(together):
        found = rows_together(
            (names, (tables[1].pk,)),
            (seats, (tables[1].pk,)),
            (events, (tables[0].pk,)),
            (events, (tables[1].pk,)),
        )
    assert found == apart
    assert found[0][0][1] == Table.objects.get(pk=tables[1].pk).created_at  # converted (a date on SQLite)
    assert found[2] == []

    batch = Batch()
    insert(TableEvent, [TableEvent(table=tables[1], kind=TableEvent.Kind.ROUND, text="e4")], batch=batch)
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 3):
        rows = batch.flush((events, (tables[1].pk,)), (seats, (tables[1].pk,)))
    assert rows == [[(f"e{n}",) for n in range(5)], apart[1]]
    with django_assert_num_queries(1):
        assert Batch().flush((seats, (tables[1].pk,))) == [apart[1]]  # nothing to write: the read alone
    assert Batch().flush() == []


def test_reads_go_together(tables, django_assert_num_queries):
    check_reads_together(tables, django_assert_num_queries)


@pytest.mark.postgres
def test_reads_go_together_in_one_round_trip_on_postgresql(tables, django_assert_num_queries):
    check_reads_together(tables, django_assert_num_queries)


def check_returning_together(tables, django_assert_num_queries) -> None:
    """Statements with RETURNING run in order and give each one's rows: one round trip on PostgreSQL."""

    def rename(q):
        return (
            f"UPDATE {q(Table._meta.db_table)} SET {q('name')} = {q('name')} || %s WHERE {q('id')} = %s "
            f"RETURNING {q('id')}, {q('name')}"
        )

    first, second = tables[0].pk, tables[1].pk
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 2):
        found = returning_together(
            ("rename a table", rename, ["-a", first]),
            ("rename a table", rename, ["-b", 999_999]),  # no such row: nothing back
        )
    assert found == [[(first, "t0-a")], []]
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 2):
        found = returning_together(
            ("rename a table", rename, ["-c", second]),
            ("rename a table", rename, ["-d", second]),  # sees the first statement's change
        )
    assert found == [[(second, "t1-c")], [(second, "t1-c-d")]]


def test_statements_with_returning_go_together(tables, django_assert_num_queries):
    check_returning_together(tables, django_assert_num_queries)


@pytest.mark.postgres
def test_statements_with_returning_go_together_on_postgresql(tables, django_assert_num_queries):
    check_returning_together(tables, django_assert_num_queries)
