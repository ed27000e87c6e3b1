"""CSV and JSON exports of a player's history (the same rows and filters as the history page)."""

import csv
import json
from collections.abc import Iterable, Iterator

from blackjack.history.records import PlayerRound

COLUMNS = (
    "round_id",
    "table_id",
    "table",
    "round_number",
    "settled_at",
    "seats",
    "stake",
    "returned",
    "net",
    "result",
    "hands",
    "wins",
    "pushes",
    "losses",
    "blackjacks",
    "doubles_won",
    "splits_won",
    "summary",
    "decisions",
    "deviations",
    "ev_cost",
)


def row_dict(row: PlayerRound) -> dict:
    return {
        "round_id": row.round_id,
        "table_id": row.table_id,
        "table": row.table.name,
        "round_number": row.round.number,
        "settled_at": row.settled_at.isoformat(),
        "seats": list(row.seats),
        "stake": row.stake,
        "returned": row.returned,
        "net": row.net,
        "result": row.result,
        "hands": row.hands,
        "wins": row.wins,
        "pushes": row.pushes,
        "losses": row.losses,
        "blackjacks": row.blackjacks,
        "doubles_won": row.doubles_won,
        "splits_won": row.splits_won,
        "summary": row.summary,
        "decisions": row.decisions,
        "deviations": row.deviations,
        "ev_cost": round(row.ev_cost, 2),
    }


class _Echo:
    """A file-like object whose write returns the text, for streaming csv.writer output."""

    def write(self, value: str) -> str:
        return value


def csv_lines(rows: Iterable[PlayerRound]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(COLUMNS)
    for row in rows:
        data = row_dict(row)
        data["seats"] = " ".join(str(seat) for seat in data["seats"])
        yield writer.writerow([_safe_cell(data[column]) for column in COLUMNS])


def _safe_cell(value):
    """Prefix text that starts like a formula with a quote (formula injection through a table name)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def json_chunks(rows: Iterable[PlayerRound], *, user) -> Iterator[str]:
    """One JSON object {"player": ..., "rounds": [...]}, streamed row by row."""
    yield '{"player": ' + json.dumps(user.username) + ', "rounds": ['
    first = True
    for row in rows:
        yield ("" if first else ", ") + json.dumps(row_dict(row))
        first = False
    yield "]}\n"
