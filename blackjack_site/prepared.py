"""Queries compiled to SQL once per process, then run many times with new parameters.

Every table action and every table version reads the same few rows (the table, its seats, its round, the
recent events), and profiling showed Django turning those querysets into SQL cost five to seven times as much
CPU as the database took to answer them. A `Prepared` query is written as an ordinary queryset whose varying
values are its arguments; the first run compiles it with marker values standing in for the arguments and
remembers the SQL, where each argument lands among the parameters, and Django's converters for the selected
columns (JSON, dates on SQLite, ...). Later runs only substitute the arguments, execute through the
connection's cursor (so query counting, logging and the debug toolbar see them as usual) and convert the rows.

Only `values_list()` querysets are prepared (plain rows out); `model_rows` builds model instances from them,
in the state `Model.from_db` gives them (`_loader`). An argument must reach the SQL unchanged (ids,
versions); the compiled form is kept per thread, like the connection it was compiled for.
"""

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connections
from django.db.backends.utils import CursorDebugWrapper
from django.db.models import Model, QuerySet, signals
from django.db.models.base import ModelState

#: Marker values that stand in for the arguments while compiling (never a real id or version).
_MARKER_BASE = -7_340_021_000


class Prepared:
    """`build(*args)` returns a `values_list()` queryset; `rows(*args)` runs its compiled SQL."""

    def __init__(self, build: Callable[..., QuerySet], *, arity: int, using: str = "default") -> None:
        self._build = build
        self._arity = arity
        self._using = using
        # Per thread, as Django's connections are: the converters belong to the connection that compiled.
        self._local = threading.local()

    def _compile(self) -> tuple:
        markers = [_MARKER_BASE - index for index in range(self._arity)]
        compiler = self._build(*markers).query.get_compiler(self._using)
        sql, params = compiler.as_sql()
        slots = tuple(markers.index(value) if value in markers else None for value in params)
        if sorted({slot for slot in slots if slot is not None}) != list(range(self._arity)):
            raise ValueError("an argument of a prepared query does not reach its SQL unchanged")
        expressions = [column for column, _sql, _alias in compiler.select[: compiler.col_count]]
        converters = tuple(compiler.get_converters(expressions).items())
        self._local.compiled = compiled = (sql, tuple(params), slots, converters)
        return compiled

    def rows(self, *args: Any) -> list[tuple]:
        """The rows for these arguments, converted as the ORM converts them."""
        sql, params = self.bound(*args)
        with connections[self._using].cursor() as cursor:
            cursor.execute(sql, params)
            return self.converted(cursor.fetchall())

    def bound(self, *args: Any) -> tuple[str, list]:
        """The compiled SQL and its parameters for these arguments."""
        sql, fixed, slots, _converters = getattr(self._local, "compiled", None) or self._compile()
        return sql, [fixed[index] if slot is None else args[slot] for index, slot in enumerate(slots)]

    def converted(self, rows: list[tuple]) -> list[tuple]:
        """Rows this query returned, converted as the ORM converts them."""
        converters = self._local.compiled[3]
        if not converters:
            return rows
        connection = connections[self._using]
        converted = []
        for row in rows:
            values = list(row)
            for position, (functions, expression) in converters:
                value = values[position]
                for function in functions:
                    value = function(value, expression, connection)
                values[position] = value
            converted.append(tuple(values))
        return converted


def sent_together(using: str = "default") -> bool:
    """Whether statements for this database go in one round trip: PostgreSQL pipelines them (`_pipelined`);
    SQLite, in the process, runs them one by one."""
    return connections[using].vendor == "postgresql"


def rows_together(*queries: tuple[Prepared, tuple], using: str = "default") -> list[list[tuple]]:
    """The rows of several prepared queries, in order: on PostgreSQL in one round trip (the statements run
    one after another, each with its own snapshot under READ COMMITTED, as if sent apart), else one by one."""
    return Batch(using=using).flush(*queries)


def _pipelined(
    statements: Sequence[tuple[str, Sequence[Any]]], *, results: int, using: str
) -> list[list[tuple]]:
    """Run statements in order in one round trip of psycopg's pipeline mode, and return the rows of the last
    `results` of them. Each statement keeps the extended protocol (bound parameters, and a prepared statement
    once psycopg has seen it `prepare_threshold` times), and a transaction's BEGIN goes with the first
    statements. The first error fails the whole, and the transaction with it, as a statement alone would.

    Django's query log, and so its query counting in tests, sees one query per round trip: the statements
    joined by semicolons."""
    connection = connections[using]
    shown = "; ".join(sql for sql, _params in statements)
    params = [param for _sql, params in statements for param in params]

    def run(_sql, _params, _many, _context) -> list[list[tuple]]:
        connection.validate_no_broken_transaction()
        with connection.wrap_database_errors:
            raw = connection.connection
            # The statements whose rows are not wanted share one cursor (each result replaces the last).
            unread = len(statements) - results
            shared = raw.cursor() if unread else None
            readers = [raw.cursor() for _ in range(results)]
            with raw.pipeline():
                for index, (sql, values) in enumerate(statements):
                    (shared if index < unread else readers[index - unread]).execute(sql, values)
            return [reader.fetchall() for reader in readers]

    # Django's own cursor wrapper, as `execute` uses it: its execute wrappers, and in DEBUG (or while a test
    # counts queries) the query log.
    with connection.cursor() as wrapper:
        if isinstance(wrapper, CursorDebugWrapper):
            with wrapper.debug_sql(shown, params):
                return wrapper._execute_with_wrappers(shown, params, False, run)
        return wrapper._execute_with_wrappers(shown, params, False, run)


def field_names(model: type[Model], prefix: str = "") -> list[str]:
    """The concrete columns of `model` as `values_list` names (`prefix` follows a relation: "user__")."""
    return [prefix + name for name in _columns(model)]


@functools.cache
def _columns(model: type[Model]) -> tuple[str, ...]:
    """The attribute names of a model's concrete columns, in their order (listed once per model)."""
    return tuple(field.attname for field in model._meta.concrete_fields)


def model_rows(model: type[Model], rows: Sequence[Sequence[Any]], *, using: str = "default") -> list[Model]:
    """Instances of `model` from rows of all its concrete columns in `field_names` order."""
    names = _columns(model)
    load = _loader(model)
    return [load(using, names, row) for row in rows]


def related_models(row: Sequence[Any], parts: Sequence[type[Model]], *, using: str = "default") -> list:
    """Split one row of `field_names(part, ...)` columns, part after part, into instances (None for a part
    whose primary key is null: an empty left join)."""
    instances, start = [], 0
    for model in parts:
        names = _columns(model)
        values = row[start : start + len(names)]
        start += len(names)
        pk = values[names.index(model._meta.pk.attname)]
        instances.append(None if pk is None else _loader(model)(using, names, values))
    return instances


def _loader(model: type[Model]) -> Callable[[str, Sequence[str], Sequence[Any]], Model]:
    """How to make an instance of `model` from a row of all its concrete columns: `Model.from_db`, or where
    nothing more can happen in it, the same instance made directly. `Model.__init__` sets each column through
    its class attribute, one `setattr` after another, and sends the init signals: a tenth of an action's CPU
    went on it for the twenty or so rows an action loads. The direct way fills the instance's dictionary in
    one go and gives it the state `from_db` gives (loaded from `using`, not being added). It is taken only
    for a model with Django's own `__init__` and `from_db` and with no receiver of its init signals; the
    column descriptors of a fresh instance (foreign keys, files) only store what they are given."""
    if (
        model.__init__ is not Model.__init__
        or model.from_db.__func__ is not Model.from_db.__func__
        or signals.pre_init.has_listeners(model)
        or signals.post_init.has_listeners(model)
    ):
        return lambda using, names, values: model.from_db(using, list(names), values)
    new = object.__new__

    def load(using: str, names: Sequence[str], values: Sequence[Any]) -> Model:
        instance = new(model)
        instance.__dict__.update(zip(names, values, strict=True))
        state = instance._state = ModelState()
        state.adding, state.db = False, using
        return instance

    return load


def cache_relation(instance: Model, name: str, related: Model | None) -> None:
    """Set what `instance.<name>` returns without a query, as `select_related` does."""
    instance._meta.get_field(name).set_cached_value(instance, related)


# --- writes: UPDATE and INSERT statements built once per model and column list --------------------------

_statements: dict[tuple, str] = {}


def _statement(key: tuple, build: Callable[[], str]) -> str:
    sql = _statements.get(key)
    if sql is None:
        sql = _statements[key] = build()
    return sql


def snapshot(instance: Model) -> dict[str, Any]:
    """The column values of a loaded row, to be compared by `save_changed` (JSON columns are not kept:
    they are always written, since they may have been changed in place)."""
    return {name: getattr(instance, name) for name in _compared_columns(type(instance))}


@functools.cache
def _compared_columns(model: type[Model]) -> tuple[str, ...]:
    return tuple(
        field.attname for field in model._meta.concrete_fields if field.get_internal_type() != "JSONField"
    )


def _changed_fields(instance: Model, before: dict[str, Any]) -> list:
    return [
        field
        for field in instance._meta.concrete_fields
        if not field.primary_key
        and (field.attname not in before or before[field.attname] != getattr(instance, field.attname))
    ]


def save_changed(
    instance: Model, before: dict[str, Any], *, batch: "Batch | None" = None, using: str = "default"
) -> None:
    """Write the columns of `instance` that differ from `before` (its `snapshot`) and every JSON column, in
    one UPDATE of its row: what `instance.save()` writes, without compiling a query each time. With `batch`,
    the UPDATE waits there to be sent with the batch's other writes."""
    fields = _changed_fields(instance, before)
    if fields:
        _update(
            instance._meta,
            fields,
            [getattr(instance, field.attname) for field in fields],
            [instance.pk],
            using,
            batch,
        )


def save_changed_together(
    changes: Sequence[tuple[Model, dict[str, Any]]], *, batch: "Batch | None" = None, using: str = "default"
) -> None:
    """`save_changed` for several rows of one model without JSON columns (a table's seats): rows whose changes
    are alike (the same columns set to the same values, as when a new round clears every seat's ready flag)
    are written by one UPDATE."""
    alike: dict[tuple, list] = {}
    for instance, before in changes:
        fields = _changed_fields(instance, before)
        if fields:
            key = tuple((field.attname, getattr(instance, field.attname)) for field in fields)
            alike.setdefault(key, [fields, []])[1].append(instance.pk)
    for key, (fields, pks) in alike.items():
        _update(changes[0][0]._meta, fields, [value for _name, value in key], pks, using, batch)


def _update(meta, fields: list, values: list, pks: list, using: str, batch: "Batch | None") -> None:
    connection = connections[using]
    quote = connection.ops.quote_name

    def build() -> str:
        columns = ", ".join(f"{quote(field.column)} = %s" for field in fields)
        where = (
            f"{quote(meta.pk.column)} = %s"
            if len(pks) == 1
            else (f"{quote(meta.pk.column)} IN ({', '.join(['%s'] * len(pks))})")
        )
        return f"UPDATE {quote(meta.db_table)} SET {columns} WHERE {where}"

    key = (connection.vendor, "update", meta.label, len(pks), *(field.attname for field in fields))
    sql = _statement(key, build)
    params = [field.get_db_prep_save(value, connection) for field, value in zip(fields, values, strict=True)]
    _write(sql, [*params, *pks], using, batch)


def insert(
    model: type[Model],
    instances: Sequence[Model],
    *,
    ids: bool = False,
    batch: "Batch | None" = None,
    using: str = "default",
) -> None:
    """INSERT new rows in one statement, as `bulk_create` does without compiling it each time; with `ids`
    the new rows' ids are read back (RETURNING) and set on the instances, else they stay unset (and with
    `batch` the INSERT waits there). Field defaults apply as the model's constructor set them."""
    if not instances:
        return
    if ids and batch is not None:
        raise ValueError("a batched INSERT cannot read its ids back")
    meta = model._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    connection = connections[using]
    quote = connection.ops.quote_name
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"

    def build() -> str:
        columns = ", ".join(quote(field.column) for field in fields)
        values = ", ".join([row] * len(instances))
        returning = f" RETURNING {quote(meta.pk.column)}" if ids else ""
        return f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES {values}{returning}"

    sql = _statement((connection.vendor, "insert", meta.label, len(instances), ids), build)
    params = [
        field.get_db_prep_save(field.pre_save(instance, True), connection)
        for instance in instances
        for field in fields
    ]
    if not ids:
        _write(sql, params, using, batch)
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        # One row back per row inserted, in the order of the VALUES (as `bulk_create` relies on too).
        for instance, (pk,) in zip(instances, cursor.fetchall(), strict=True):
            instance.pk = pk
            instance._state.adding, instance._state.db = False, using


class Batch:
    """Writes of one transaction gathered to be sent together by `flush`: to PostgreSQL in one round trip (a
    pipeline: one database wakeup and one reply instead of one each), to SQLite one by one. A failing
    statement fails the flush, and the transaction with it, as it would alone."""

    def __init__(self, *, using: str = "default") -> None:
        self.using = using
        self._statements: list[tuple[str, list]] = []

    def add(self, sql: str, params: list) -> None:
        self._statements.append((sql, params))

    def flush(self, *reads: tuple[Prepared, tuple]) -> list[list[tuple]]:
        """Send the gathered writes; with `reads` (prepared queries and their arguments), also run those after
        them, in the same round trip where the writes go together, and return each one's rows."""
        statements, self._statements = self._statements, []
        if sent_together(self.using):
            if len(statements) + len(reads) > 1:
                bound = [*statements, *(query.bound(*args) for query, args in reads)]
                sets = _pipelined(bound, results=len(reads), using=self.using)
                return [query.converted(rows) for (query, _args), rows in zip(reads, sets, strict=True)]
            if statements:
                _write(*statements[0], self.using, None)
            return [query.rows(*args) for query, args in reads]
        for sql, params in statements:
            _write(sql, params, self.using, None)
        return [query.rows(*args) for query, args in reads]


def _write(sql: str, params: list, using: str, batch: Batch | None) -> None:
    if batch is not None:
        batch.add(sql, params)
        return
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params)


def execute(
    key: str,
    build: Callable[[Callable[[str], str]], str],
    params: Sequence[Any],
    *,
    using="default",
    batch: Batch | None = None,
) -> int | None:
    """Run the statement `build(quote_name)` writes (built once per database vendor and `key`) with `params`;
    returns the number of rows it changed (None with `batch`, where the statement waits). For hot statements
    the ORM cannot say without compiling each time (an UPDATE with arithmetic and a condition)."""
    if batch is not None:
        connection = connections[using]
        batch.add(
            _statement((connection.vendor, "sql", key), lambda: build(connection.ops.quote_name)), params
        )
        return None
    return _run(key, build, params, using, lambda cursor: cursor.rowcount)


def execute_returning(
    key: str, build: Callable[[Callable[[str], str]], str], params: Sequence[Any], *, using="default"
) -> list[tuple]:
    """As `execute`, for a statement with a RETURNING clause (PostgreSQL; SQLite from 3.35): the rows it
    returns, one per row it changed, as the database gives them (no converters)."""
    return _run(key, build, params, using, lambda cursor: cursor.fetchall())


def returning_together(
    *statements: tuple[str, Callable[[Callable[[str], str]], str], Sequence[Any]], using="default"
) -> list[list[tuple]]:
    """Several `execute_returning` statements (key, build, params), run in order: on PostgreSQL in one round
    trip; the rows each returned."""
    if not sent_together(using) or len(statements) == 1:
        return [execute_returning(key, build, params, using=using) for key, build, params in statements]
    connection = connections[using]
    quote = connection.ops.quote_name
    bound = [
        (_statement((connection.vendor, "sql", key), functools.partial(build, quote)), params)
        for key, build, params in statements
    ]
    return _pipelined(bound, results=len(bound), using=using)


def _run(key: str, build, params: Sequence[Any], using: str, result: Callable[[Any], Any]):
    connection = connections[using]
    sql = _statement((connection.vendor, "sql", key), lambda: build(connection.ops.quote_name))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return result(cursor)
