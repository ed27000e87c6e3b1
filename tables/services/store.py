"""Writing a command's outcome: the persistence side of the table flow.

`run(table_id, command)` is one command in one transaction: `load.begin` locks the table row and reads its
state, `tables.flow.decide` decides in memory, and `write` sends the outcome's rows (only the changed fields
of the loaded ones) in one batch with the chips (`accounts.services`). The broadcast and the round's history
recording are registered with `transaction.on_commit`: a failure in history recording is logged and can
neither roll back the settlement nor stall the table.
"""

import logging
from datetime import datetime

from django.db import transaction

from accounts import services as wallet
from blackjack_site.prepared import Batch, cache_relation, insert, save_changed, save_changed_together
from tables import broadcast, flow, viewmodel
from tables.engine.round import RoundState
from tables.flow import Outcome, RoundInfo, Seeds, ShoeInfo, TableState
from tables.history import recording as history
from tables.models import ActionLog, Round, Seat, Shoe, Table, TableEvent
from tables.services.load import ActionRefused, Loaded, RoundBroken, begin, dump_engine

logger = logging.getLogger(__name__)


def decide(loaded: Loaded, command: flow.Command) -> Outcome:
    """Run the pure flow on the loaded state, with fresh seeds and the seeded card order (both looked up on
    `tables.services`, where tests replace them)."""
    from tables import services

    seeds = Seeds(server=services.new_server_seed(), client=services._new_client_seed())
    return flow.decide(loaded.state, command, loaded.now, seeds=seeds, cards=services.round_order)


def run(
    table_id: int, command: flow.Command, *, now: datetime | None = None, engine: bool = True
) -> int | None:
    """Decide `command` for the table in one transaction and write its outcome. Returns the new version, or
    None if the command changed nothing. Raises `ActionRefused` (nothing written) or `RoundBroken`."""
    with transaction.atomic():
        loaded = begin(table_id, now=now, engine=engine)
        return apply(loaded, decide(loaded, command))


def apply(loaded: Loaded, outcome: Outcome) -> int | None:
    """Write a decided outcome (inside the caller's transaction): raise its refusal or broken round."""
    if outcome.refusal is not None:
        raise ActionRefused(outcome.refusal.code, outcome.refusal.message)
    if outcome.broken is not None:
        rnd, reason = outcome.broken
        raise RoundBroken(rnd.id, reason)
    if not outcome.changed:
        return None
    return write(loaded, outcome)


def write(loaded: Loaded, out: Outcome, *, first: tuple[str, list] | None = None) -> int:
    """Write the outcome's rows: new rows at once (their ids are referred to), changed ones in one batch
    (`first`, a statement and its parameters, heads it)."""
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
        rnd = loaded.rounds[current.id][0]
        cache_relation(table, "current_round", rnd)
    else:
        rnd = None
    _copy_table(table, state)
    save_changed(table, loaded._table_before, batch=writes)
    _write_seats(loaded, state, out.seats_removed, writes)
    _move_chips(loaded, out, writes)
    logs = [
        ActionLog(
            round_id=row.round.id,
            table_id=table.pk,
            seq=row.seq,
            user_id=row.player_id,
            seat=row.seat,
            action=row.action,
            version_after=row.version_after,
            created_at=loaded.now,
        )
        for row in out.logs
    ]
    insert(ActionLog, logs, batch=writes)
    events = [
        TableEvent(
            table=table,
            round_id=event.round.id if event.round else None,
            kind=event.kind,
            text=event.text,
            created_at=loaded.now,
        )
        for event in out.events
    ]
    insert(TableEvent, events, batch=writes)
    if out.settled is not None:
        settled = loaded.rounds[out.settled.id][0]
        record_history_on_commit(settled, out.settled.engine)
    # Sends the writes; registered before the broadcast: the new version's shared part is kept before it is
    # announced.
    viewmodel.keep_change_on_commit(table, rnd, events, writes=writes)
    broadcast.table_changed_on_commit(table.pk, table.version, lobby=out.lobby)
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
        loaded.shoes[shoe.pk] = (shoe, None)
        return
    shoe, before = loaded.shoes.get(info.id, (None, None))
    if shoe is None:
        Shoe.objects.filter(pk=info.id).update(position=info.position, retired_at=info.retired_at)
        return
    shoe.position, shoe.retired_at = info.position, info.retired_at
    save_changed(shoe, before, batch=writes)


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
        shoe = loaded.shoes[info.shoe.id][0]
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
        loaded.rounds[rnd.pk] = (rnd, None)
        return
    rnd, before = loaded.rounds.get(info.id) or (Round.objects.get(pk=info.id), None)
    for name, value in values.items():
        setattr(rnd, name, value)
    if before is None:
        rnd.save()
        loaded.rounds[rnd.pk] = (rnd, None)
    else:
        save_changed(rnd, before, batch=writes)


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
    changed = []
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
        before = loaded._seats_before.get(number)
        if before is None:
            seat.save()
        else:
            changed.append((seat, before))
    save_changed_together(changed, batch=writes)
    for number in removed:
        loaded.seats.pop(number).delete()


def _move_chips(loaded: Loaded, out: Outcome, writes: Batch) -> None:
    table_ref = loaded.table.pk
    for move in out.moves:
        refs = {"round_ref": move.round.id, "table_ref": table_ref, "memo": move.memo, "batch": writes}
        user = loaded.user(move.player_id)
        if move.amount > 0:
            try:
                wallet.stake(user=user, amount=move.amount, **refs)
            except wallet.InsufficientChips as exc:
                raise ActionRefused("insufficient_chips", exc.message) from None
        else:
            wallet.pay(user=user, amount=-move.amount, kind="refund", **refs)
    for group in out.payments:
        payments = [
            wallet.Payment(loaded.user(uid), amount, kind, memo) for uid, amount, kind, memo in group.payments
        ]
        wallet.pay_many(payments=payments, round_ref=group.round.id, table_ref=table_ref, batch=writes)
