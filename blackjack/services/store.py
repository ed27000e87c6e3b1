"""Writing a command's outcome: the persistence side of the table flow.

`run(table_id, command)` is one command in one transaction: `load.begin` locks the table row and reads its
state, `blackjack.flow.decide` decides in memory, and `write` sends the outcome's rows in one batch with the
chips (`accounts.services`). The statements of the rows every action writes (the table, its round, shoe and
changed seats, the action log and events) are plain SQL built once below: compiling a queryset for each
would cost the server more CPU than the database takes to run them. The broadcast and the round's history
recording are registered with `transaction.on_commit`: a failure in history recording is logged and can
neither roll back the settlement nor stall the table.
"""

import logging
from datetime import datetime

from django.db import transaction

from accounts import services as wallet
from blackjack import flow
from blackjack.engine.round import RoundState
from blackjack.flow import Outcome, RoundInfo, Seeds, ShoeInfo, TableState
from blackjack.history import recording as history
from blackjack.models import GAME, ActionLog, Round, Seat, Shoe, Table, TableEvent
from blackjack.services import floats
from blackjack.services.load import SEAT_COLUMNS, Loaded, RoundBroken, begin, dump_engine, seat_values
from cards.errors import Refused
from live import fanout
from storage.batch import Batch, ModelStatement

logger = logging.getLogger(__name__)


#: The columns of the table's row the flow and the staff's settings change (written by every command).
_TABLE_COLUMNS = (
    *("version", "phase", "deadline", "window_version", "window_actors", "next_server_seed", "current_round"),
    *("name", "preset", "min_bet", "max_bet", "seats", "seats_per_player", "is_open", "is_private"),
    *("betting_seconds", "insurance_seconds", "turn_seconds", "ready_seconds"),
)
_UPDATE_TABLE = ModelStatement(Table, _TABLE_COLUMNS, "UPDATE {table} SET {set} WHERE id = %s")
_ROUND_COLUMNS = ("seats", "phase", "deadline", "settled_at", "voided", "results", "logged", "version")
_UPDATE_ROUND = ModelStatement(Round, _ROUND_COLUMNS, "UPDATE {table} SET {set} WHERE id = %s")
_UPDATE_ROUND_AND_STATE = ModelStatement(
    Round, (*_ROUND_COLUMNS, "state"), "UPDATE {table} SET {set} WHERE id = %s"
)
_UPDATE_SHOE = ModelStatement(Shoe, ("position", "retired_at"), "UPDATE {table} SET {set} WHERE id = %s")
_UPDATE_SEAT = ModelStatement(Seat, SEAT_COLUMNS, "UPDATE {table} SET {set} WHERE id = %s")
_INSERT_LOG = ModelStatement(
    ActionLog,
    ("round", "table", "seq", "user", "seat", "action", "version_after", "created_at"),
    "INSERT INTO {table} ({columns}) VALUES {row}",
)
_INSERT_EVENT = ModelStatement(
    TableEvent,
    ("table", "round", "kind", "text", "created_at"),
    "INSERT INTO {table} ({columns}) VALUES {row}",
)


def decide(loaded: Loaded, command: flow.Command) -> Outcome:
    """Run the pure flow on the loaded state, with fresh seeds and the seeded card order (both looked up on
    `blackjack.services`, where tests replace them)."""
    from blackjack import services

    seeds = Seeds(server=services.new_server_seed(), client=services._new_client_seed())
    return flow.decide(loaded.state, command, loaded.now, seeds=seeds, cards=services.round_order)


def run(
    table_id: int, command: flow.Command, *, now: datetime | None = None, engine: bool = True
) -> int | None:
    """Decide `command` for the table in one transaction and write its outcome. Returns the new version, or
    None if the command changed nothing. Raises `Refused` (nothing written) or `RoundBroken`."""
    with transaction.atomic():
        loaded = begin(table_id, now=now, engine=engine)
        return apply(loaded, decide(loaded, command))


def apply(loaded: Loaded, outcome: Outcome) -> int | None:
    """Write a decided outcome (inside the caller's transaction): raise its refusal or broken round."""
    if outcome.refusal is not None:
        raise Refused(outcome.refusal.code, outcome.refusal.message)
    if outcome.broken is not None:
        rnd, reason = outcome.broken
        raise RoundBroken(rnd.id, reason)
    if not outcome.changed:
        return None
    return write(loaded, outcome)


def write(
    loaded: Loaded, out: Outcome, *, first: tuple[str, list] | None = None, announce: bool = True
) -> int:
    """Write the outcome's rows: new rows at once (their ids are referred to), changed ones in one batch
    (`first`, a statement and its parameters, heads it). With `announce`, the new version is announced on
    commit (`live.fanout`); a table actor shows its views of it itself."""
    state, table, writes = out.state, loaded.table, Batch()
    if first is not None:
        writes.add(*first)
    for info in out.shoes:
        _write_shoe(loaded, info, writes)
    for info in out.rounds:
        _write_round(loaded, info, state.version, writes)
    current = state.round
    if current is not None:
        table.current_round_id = current.id
        table.current_round = loaded.rounds[current.id]
    _copy_table(table, state)
    writes.add(_UPDATE_TABLE.sql, [*_UPDATE_TABLE.of(table), table.pk])
    _write_seats(loaded, state, out.seats_removed, writes)
    _move_chips(loaded, out, writes)
    if out.logs:
        rows = [
            (
                row.round.id,
                table.pk,
                row.seq,
                row.player_id,
                row.seat,
                row.action,
                row.version_after,
                loaded.now,
            )
            for row in out.logs
        ]
        writes.add(_INSERT_LOG.rows(len(rows)), [value for row in rows for value in _INSERT_LOG.params(row)])
    if out.events:
        rows = [
            (table.pk, event.round.id if event.round else None, event.kind, event.text, loaded.now)
            for event in out.events
        ]
        writes.add(
            _INSERT_EVENT.rows(len(rows)), [value for row in rows for value in _INSERT_EVENT.params(row)]
        )
    if out.settled is not None:
        settled = loaded.rounds[out.settled.id]
        record_history_on_commit(settled, out.settled.engine)
    writes.flush()
    if announce:
        fanout.changed_on_commit(GAME, table.pk, table.version, lobby=out.lobby)
    return table.version


def record_history_on_commit(rnd: Round, state: RoundState | None) -> None:
    """Record the settled round's history once the settlement has committed, in a transaction of its own. A
    failure there is logged: the chips are paid and the table goes on whatever happens to the statistics."""

    def record() -> None:
        try:
            with transaction.atomic():
                history.record_round(round=rnd, state=state)
        except Exception:
            logger.exception("round %s of table %s: recording its history failed", rnd.pk, rnd.table_id)

    transaction.on_commit(record)


def _write_shoe(loaded: Loaded, info: ShoeInfo, writes: Batch) -> None:
    if info.id is None:
        shoe = Shoe.objects.create(
            table_id=info.table_id,
            server_seed=info.server_seed,
            seed_hash=info.seed_hash,
            client_seed=info.client_seed,
            seat_seeds=info.seat_seeds,
            decks=info.decks,
            nonce=info.nonce,
            cut_index=info.cut_index,
            position=info.position,
            created_at=info.created_at,
            retired_at=info.retired_at,
        )
        info.id = shoe.pk
        loaded.shoes[shoe.pk] = shoe
        return
    shoe = loaded.shoes.get(info.id)
    if shoe is not None:
        shoe.position, shoe.retired_at = info.position, info.retired_at
    writes.add(_UPDATE_SHOE.sql, [*_UPDATE_SHOE.params((info.position, info.retired_at)), info.id])


def _write_round(loaded: Loaded, info: RoundInfo, version: int, writes: Batch) -> None:
    values = {
        "seats": info.seats,
        "phase": info.phase,
        "deadline": info.deadline,
        "settled_at": info.settled_at,
        "voided": info.voided,
        "results": info.results,
        "logged": info.logged,
        "version": version,
    }
    if info.engine is not None:
        values["state"] = dump_engine(info.engine)
    if info.id is None:
        shoe = loaded.shoes[info.shoe.id]
        rnd = Round.objects.create(
            table=loaded.table,
            number=info.number,
            shoe=shoe,
            start_position=info.start_position,
            rules=info.rules,
            min_bet=info.min_bet,
            max_bet=info.max_bet,
            started_at=info.started_at,
            **values,
        )
        info.id = rnd.pk
        loaded.rounds[rnd.pk] = rnd
        return
    rnd = loaded.rounds.get(info.id)
    if rnd is None:
        rnd = loaded.rounds[info.id] = Round.objects.get(pk=info.id)
    for name, value in values.items():
        setattr(rnd, name, value)
    statement = _UPDATE_ROUND_AND_STATE if "state" in values else _UPDATE_ROUND
    writes.add(statement.sql, [*statement.params(values.values()), info.id])


def _copy_table(table: Table, state: TableState) -> None:
    table.version = state.version
    table.phase = state.phase
    table.deadline = state.deadline
    table.window_version = state.window_version
    table.window_actors = state.window_actors
    table.next_server_seed = state.next_server_seed
    config = state.settings
    for name in ("min_bet", "max_bet", "seats", "seats_per_player", "is_open"):
        setattr(table, name, getattr(config, name))
    for name in ("betting_seconds", "insurance_seconds", "turn_seconds", "ready_seconds"):
        setattr(table, name, getattr(config, name))


def _write_seats(loaded: Loaded, state: TableState, removed: list[int], writes: Batch) -> None:
    for number, info in state.seats.items():
        seat = loaded.seats.get(number)
        if seat is None:
            seat = loaded.seats[number] = Seat(table=loaded.table, number=number)
        user_id = info.player.id if info.player else None
        if seat.user_id != user_id:
            seat.user = loaded.user(user_id) if user_id else None
        seat.sat_down_at = info.sat_down_at
        seat.missed_rounds = info.missed_rounds
        seat.sitting_out = info.sitting_out
        seat.ready = info.ready
        seat.leaving_after_round = info.leaving_after_round
        seat.client_seed = info.client_seed
        seat.disconnected_at = info.disconnected_at
        before = loaded.seats_before.get(number)
        if before is None:
            seat.save()
        elif seat_values(seat) != before:
            writes.add(_UPDATE_SEAT.sql, [*_UPDATE_SEAT.params(seat_values(seat)), seat.pk])
    for number in removed:
        loaded.seats.pop(number).delete()


def _move_chips(loaded: Loaded, out: Outcome, writes: Batch) -> None:
    """The outcome's chips, against the table's float (topped up to its target should it be short)."""
    table_ref, float_target = loaded.table.pk, floats.target(out.state.settings)
    for move in out.moves:
        refs = {"round_ref": move.round.id, "game": GAME, "table_ref": table_ref, "memo": move.memo}
        refs["batch"] = writes
        refs["float_target"] = float_target
        user = loaded.user(move.player_id)
        if move.amount > 0:
            try:
                entry = wallet.stake(user=user, amount=move.amount, **refs)
            except wallet.InsufficientChips as exc:
                raise Refused("insufficient_chips", exc.message) from None
        else:
            entry = wallet.pay(user=user, amount=-move.amount, kind="refund", **refs)
        loaded.balances[move.player_id] = entry.balance_after
    for group in out.payments:
        payments = [
            wallet.Payment(loaded.user(uid), amount, kind, memo) for uid, amount, kind, memo in group.payments
        ]
        entries = wallet.pay_many(
            payments=payments,
            round_ref=group.round.id,
            game=GAME,
            table_ref=table_ref,
            float_target=float_target,
            batch=writes,
        )
        for payment, entry in zip(payments, entries, strict=True):
            loaded.balances[payment.user.pk] = entry.balance_after
