"""CSV and JSON exports of a player's finished Durak games (the rows of the history page, all of them), with
each game's seeds so that every deck can be verified elsewhere."""

import csv
import json
from collections.abc import Iterable, Iterator

from durak.models import DurakGame

COLUMNS = (
    "game_id",
    "table_id",
    "table",
    "variant",
    "game_number",
    "started_at",
    "finished_at",
    "players",
    "seat",
    "result",
    "rated",
    "stake",
    "payout",
    "net",
    "server_seed_hash",
    "server_seed",
    "client_seed",
    "nonce",
)


def row_dict(game: DurakGame, user_id: int) -> dict:
    """The game as the player `user_id` played it: their seat (from 1), whether they were the fool (`out`:
    they went out; `draw`: the last cards went out together), their chips."""
    seat = game.players.index(user_id)
    result = "draw" if game.fool is None else "fool" if game.fool == seat else "out"
    payout = game.payouts[seat] if seat < len(game.payouts) else 0
    return {
        "game_id": game.pk,
        "table_id": game.table_id,
        "table": game.table.name,
        "variant": game.table.variant,
        "game_number": game.number,
        "started_at": game.started_at.isoformat(),
        "finished_at": game.finished_at.isoformat() if game.finished_at else "",
        "players": len(game.players),
        "seat": seat + 1,
        "result": result,
        "rated": game.rated,
        "stake": game.stake,
        "payout": payout,
        "net": payout - game.stake,
        "server_seed_hash": game.server_seed_hash,
        "server_seed": game.server_seed,
        "client_seed": game.client_seed,
        "nonce": game.nonce,
    }


class _Echo:
    """A file-like object whose write returns the text, for streaming csv.writer output."""

    def write(self, value: str) -> str:
        return value


def _safe_cell(value):
    """Text that starts like a formula gets a quote first (formula injection through a table's name)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def csv_lines(games: Iterable[DurakGame], user_id: int) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(COLUMNS)
    for game in games:
        data = row_dict(game, user_id)
        yield writer.writerow([_safe_cell(data[column]) for column in COLUMNS])


def json_chunks(games: Iterable[DurakGame], *, user) -> Iterator[str]:
    """One JSON object {"player": ..., "games": [...]}, streamed game by game."""
    yield '{"player": ' + json.dumps(user.username) + ', "games": ['
    first = True
    for game in games:
        yield ("" if first else ", ") + json.dumps(row_dict(game, user.pk))
        first = False
    yield "]}\n"
