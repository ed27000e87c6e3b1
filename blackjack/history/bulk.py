"""Bulk loading for `generate`: rows streamed with COPY (PostgreSQL) or bulk_create, primary keys assigned
here, and double-entry ledger rows with running balances exactly as `accounts.services` chains them."""

import uuid

from django.core.management.color import no_style
from django.db import connection
from django.db.models import Max

from accounts.models import LedgerEntry, Wallet
from blackjack.history.records import Mistake, PeriodStats, PlayerRound
from blackjack.models import GAME, ActionLog, Round

COLUMNS = {
    Round: (
        "id", "table_id", "number", "shoe_id", "start_position", "seats", "state", "rules", "min_bet",
        "max_bet", "phase", "version", "deadline", "started_at", "settled_at", "voided", "results", "logged",
    ),
    ActionLog: (
        "id", "round_id", "table_id", "seq", "user_id", "seat", "action", "version_after", "created_at",
    ),
    LedgerEntry: (
        "id", "wallet_id", "transfer", "kind", "amount", "balance_after", "created_at", "round_ref",
        "game", "table_ref", "memo", "created_by_id",
    ),
    PlayerRound: (
        "round_id", "user_id", "table_id", "settled_at", "seats", "stake", "returned", "net", "result",
        "hands", "wins", "pushes", "losses", "blackjacks", "doubles_won", "splits_won", "summary",
        "decisions", "deviations", "ev_cost",
    ),
    Mistake: (
        "user_id", "round_id", "settled_at", "seat", "hand", "cards", "dealer_up", "action", "best", "bet",
        "ev_cost",
    ),
    PeriodStats: ("user_id", "period", "start", "rounds", "hands", "net"),
}  # fmt: skip
JSON_COLUMNS = {
    Round: {"seats", "state", "rules", "results"},
    ActionLog: {"action"},
    PlayerRound: {"seats"},
}


class Writer:
    """Buffers rows per model and writes them with COPY (PostgreSQL) or bulk_create (anything else)."""

    def __init__(self) -> None:
        self.rows: dict[type, list[tuple]] = {model: [] for model in COLUMNS}
        self.copy = connection.vendor == "postgresql"
        self.written: dict[str, int] = {}

    def add(self, model, row: tuple) -> None:
        self.rows[model].append(row)

    def flush(self) -> None:
        for model, rows in self.rows.items():
            if rows:
                self._write(model, rows)
                self.written[model.__name__] = self.written.get(model.__name__, 0) + len(rows)
                rows.clear()

    def _write(self, model, rows: list[tuple]) -> None:
        names = COLUMNS[model]
        if not self.copy:
            model.objects.bulk_create(
                [model(**dict(zip(names, row, strict=True))) for row in rows], batch_size=500
            )
            return
        from psycopg.types.json import Jsonb

        fields = [model._meta.get_field(name.removesuffix("_id") if name != "id" else name) for name in names]
        columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
        json_at = [i for i, name in enumerate(names) if name in JSON_COLUMNS.get(model, ())]
        with connection.cursor() as cursor:
            statement = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({columns}) FROM STDIN"
            with cursor.cursor.copy(statement) as copy:
                for row in rows:
                    if json_at:
                        row = list(row)
                        for i in json_at:
                            row[i] = Jsonb(row[i])
                    copy.write_row(row)


class Ledger:
    """Double-entry rows with running balances, exactly as `accounts.services` chains them. A player is any
    object with `wallet_id` and `balance` (kept up to date here)."""

    def __init__(self, writer: Writer, next_id: int, house: Wallet, issuer: Wallet) -> None:
        self.writer = writer
        self.next_id = next_id
        self.house = house
        self.issuer = issuer

    def move(
        self,
        player,
        delta: int,
        system: Wallet,
        kind: str,
        at,
        memo: str,
        round_id=None,
        table_id=None,
    ):
        player.balance += delta
        system.balance -= delta
        transfer = uuid.uuid4()
        common = (at, round_id, GAME if table_id is not None else "", table_id, memo, None)
        self.writer.add(
            LedgerEntry, (self.next_id, player.wallet_id, transfer, kind, delta, player.balance, *common)
        )
        self.writer.add(
            LedgerEntry, (self.next_id + 1, system.pk, transfer, kind, -delta, system.balance, *common)
        )
        self.next_id += 2


def next_id(model) -> int:
    return (model.objects.aggregate(top=Max("pk"))["top"] or 0) + 1


def reset_sequences(models) -> None:
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), models):
            cursor.execute(statement)
