"""Plain SQL statements of one transaction sent together: on PostgreSQL in one round trip (psycopg's pipeline
mode), elsewhere one by one.

A table action's write is a handful of short statements (the version fence, the table's row, the action log,
the wallet's updates). Sent one at a time, each costs the database a wakeup and the server a wait for its
reply; in a pipeline they go in one message and come back in one. Each statement still runs through Django's
cursor (its execute wrappers, its error types, its query log, where each statement is one entry) and keeps
the extended protocol, so PostgreSQL prepares it once a connection has run it `prepare_threshold` times
(settings).

A pipeline needs PostgreSQL's server-side binding (the settings turn it on). The first failing statement
fails the whole, and the transaction with it, as it would alone.
"""

from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

import psycopg
from django.db import connections
from django.db.models import Model

Statement = tuple[str, Sequence[Any]]


def sends_together(using: str = "default") -> bool:
    """Whether statements for this database go in one round trip: PostgreSQL pipelines them; SQLite, in the
    process, runs them one by one."""
    return connections[using].vendor == "postgresql"


class ModelStatement:
    """A plain SQL statement writing some columns of a model's table, built once (at import): `template`
    names the table `{table}`, the columns `{columns}`, `{set}` (`column = %s, ...`) and `{row}`
    (`(%s, ...)`). `params` adapts the values as the ORM does (`Field.get_db_prep_save`) where the driver
    would not take them as they are (JSON; dates, times and UUIDs, which SQLite stores as Django writes
    them)."""

    _ADAPTED = frozenset(
        {"JSONField", "DateTimeField", "DateField", "TimeField", "UUIDField", "DecimalField"}
    )

    def __init__(self, model: type[Model], names: Sequence[str], template: str) -> None:
        fields = [model._meta.get_field(name) for name in names]
        columns = [field.column for field in fields]
        self.sql = template.format(
            table=model._meta.db_table,
            set=", ".join(f"{column} = %s" for column in columns),
            columns=", ".join(columns),
            row="(" + ", ".join(["%s"] * len(columns)) + ")",
        )
        self.attnames = tuple(field.attname for field in fields)
        self._adapters = [
            (position, field)
            for position, field in enumerate(fields)
            if field.get_internal_type() in self._ADAPTED
        ]

    def params(self, values: Sequence[Any], using: str = "default") -> list:
        """The statement's parameters for these values of its columns, in order."""
        params = list(values)
        if self._adapters:
            connection = connections[using]
            for position, field in self._adapters:
                params[position] = field.get_db_prep_save(params[position], connection)
        return params

    def of(self, instance: Model, using: str = "default") -> list:
        """The parameters for the instance's values of the statement's columns."""
        return self.params([getattr(instance, name) for name in self.attnames], using)

    def rows(self, count: int) -> str:
        """The SQL for `count` rows, of an INSERT whose template has one `{row}`."""
        head, row = self.sql.rsplit(" VALUES ", 1)
        return f"{head} VALUES {', '.join([row] * count)}"


class Batch:
    """Writes of one transaction gathered to be sent together by `flush`."""

    def __init__(self, *, using: str = "default") -> None:
        self.using = using
        self._statements: list[Statement] = []

    def add(self, sql: str, params: Sequence[Any]) -> None:
        self._statements.append((sql, params))

    def flush(self) -> None:
        """Send the gathered writes, in the order they were added."""
        statements, self._statements = self._statements, []
        if len(statements) > 1 and sends_together(self.using):
            _pipelined(statements, results=0, using=self.using)
            return
        with connections[self.using].cursor() as cursor:
            for sql, params in statements:
                cursor.execute(sql, params)


def returning(sql: str, params: Sequence[Any], *, using: str = "default") -> list[tuple]:
    """Run one statement with a RETURNING clause (PostgreSQL; SQLite from 3.35): the rows it returns."""
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def returning_together(*statements: Statement, using: str = "default") -> list[list[tuple]]:
    """Several statements with RETURNING clauses, run in order (on PostgreSQL in one round trip): the rows
    each returned."""
    if len(statements) > 1 and sends_together(using):
        return _pipelined(statements, results=len(statements), using=using)
    return [returning(sql, params, using=using) for sql, params in statements]


def _pipelined(statements: Sequence[Statement], *, results: int, using: str) -> list[list[tuple]]:
    """Run the statements in order in one pipeline and return the rows of the last `results` of them.

    psycopg may report a statement's error while a later one is being sent (the server answered meanwhile):
    the rest are then not sent, and the pipeline ends with the error raised as Django raises it. An error
    the server reports only when the pipeline ends (its Sync) is raised there, wrapped as Django wraps
    errors."""
    connection = connections[using]
    unread = len(statements) - results
    with ExitStack() as stack:
        # The statements whose rows are not wanted share one cursor (each result replaces the last).
        shared = stack.enter_context(connection.cursor()) if unread else None
        readers = [stack.enter_context(connection.cursor()) for _ in range(results)]
        failed: Exception | None = None
        with connection.wrap_database_errors:
            try:
                with connection.connection.pipeline():
                    for (sql, params), cursor in zip(
                        statements, [*([shared] * unread), *readers], strict=True
                    ):
                        try:
                            cursor.execute(sql, params)
                        except Exception as error:
                            failed = error
                            break
            except psycopg.Error:
                if failed is None:
                    raise
        if failed is not None:
            raise failed
        return [reader.fetchall() for reader in readers]
