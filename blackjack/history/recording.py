"""Write the history rows of a settled round: one `PlayerRound` per player, their `Mistake`s, and the running
totals (`PlayerStats`, `PeriodStats`). Recording a round twice does nothing the second time.

Wiring: `blackjack.services.store` calls `record_round(round=..., state=...)` after the settlement has
committed, in a transaction of its own, and logs a failure: history can neither hold chips nor stall a table.
It replays the round from its action log for the coach figure (with the engine state's own shoe, so nothing is
recomputed); a round that cannot be replayed is still recorded, without decisions. Voided rounds are not
recorded: every stake came back."""

import datetime
import logging
from collections import defaultdict
from typing import Any

from django.db import connection

from blackjack.engine.round import RoundState
from blackjack.history.coach import Decision, analyse
from blackjack.history.records import Mistake, Period, PeriodStats, PlayerRound, PlayerStats, RoundResult
from blackjack.history.replay import replay_round, state_for_storage
from blackjack.models import ActionLog, Round
from cards.errors import Refused
from storage.batch import Batch, ModelStatement

logger = logging.getLogger(__name__)

WIN_RESULTS = frozenset({"win", "blackjack", "charlie"})


def period_starts(moment: datetime.datetime) -> dict[str, datetime.date]:
    """First day (UTC) of the day, ISO week (Monday) and month containing `moment`."""
    day = moment.astimezone(datetime.UTC).date()
    return {
        Period.DAY: day,
        Period.WEEK: day - datetime.timedelta(days=day.weekday()),
        Period.MONTH: day.replace(day=1),
    }


def record_round(*, round: Round, state: RoundState | None = None) -> list[PlayerRound]:
    """Record the settled `round` (its `results` written); `state` is the engine's final state if the
    caller has it (else `round.state` is used). Returns the rows written, without their ids (none if the round
    was recorded already). Its rows and the players' totals go in one batch (on PostgreSQL one round trip)."""
    results = round.results or {}
    seat_results = results.get("seats") or []
    if round.voided or round.settled_at is None or not seat_results:
        return []
    if PlayerRound.objects.filter(round_id=round.pk).exists():
        return []
    final = state_for_storage(state) if state is not None else round.state
    hands_by_seat = {seat["seat"]: seat.get("hands", []) for seat in (final or {}).get("seats", [])}
    actions = list(ActionLog.objects.filter(round_id=round.pk).order_by("seq"))
    decisions = _decisions(round, actions, None if state is None else state.shoe)

    by_user: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for seat in seat_results:
        by_user[seat["user_id"]].append(seat)
    rows, mistakes = [], []
    # In user order, the order `add_to_totals` locks their totals rows in.
    for user_id, seats in sorted(by_user.items()):
        numbers = [seat["seat"] for seat in seats]
        hands = [hand for number in numbers for hand in hands_by_seat.get(number, [])]
        own = [d for d in decisions if d.seat in numbers]
        row = PlayerRound(**player_round_fields(round, user_id, seats, hands, own))
        rows.append(row)
        mistakes.extend(
            Mistake(
                user_id=user_id,
                round_id=round.pk,
                settled_at=round.settled_at,
                seat=d.seat,
                hand=d.hand,
                cards="".join(d.cards),
                dealer_up=d.dealer_up,
                action=d.action,
                best=d.best,
                bet=d.bet,
                ev_cost=d.ev_cost,
            )
            for d in own
            if d.deviates
        )
    writes = Batch()
    for model, made in ((PlayerRound, rows), (Mistake, mistakes)):
        if made:
            statement = _INSERTS[model]
            writes.add(statement.rows(len(made)), [param for row in made for param in statement.of(row)])
    add_to_totals(rows, batch=writes)
    writes.flush()
    return rows


#: The new rows of a recorded round, written with its totals (on PostgreSQL in one round trip).
_INSERTS = {
    model: ModelStatement(
        model,
        [field.name for field in model._meta.concrete_fields if not field.primary_key],
        "INSERT INTO {table} ({columns}) VALUES {row}",
    )
    for model in (PlayerRound, Mistake)
}


def _decisions(round: Round, actions: list[ActionLog], order) -> list[Decision]:
    try:
        replay = replay_round(round, actions, order=order)
    except Refused as exc:
        logger.warning("round %s cannot be replayed for the coach: %s", round.pk, exc.message)
        return []
    if replay.error:
        logger.warning("round %s: %s", round.pk, replay.error)
    return analyse(replay.states, [log.action for log in actions[: len(replay.states) - 1]])


def player_round_fields(round, user_id: int, seats, hands, decisions: list[Decision]) -> dict[str, Any]:
    """The fields of one player's `PlayerRound`: `seats` are their entries of `round.results['seats']`,
    `hands` the engine's final hands (dicts) of those seats."""
    stake = sum(seat["stake"] for seat in seats)
    returned = sum(seat["returned"] for seat in seats)
    net = returned - stake
    results = [hand.get("result") or "" for hand in hands]
    wins = sum(1 for r in results if r in WIN_RESULTS)
    pushes = results.count("push")
    return {
        "user_id": user_id,
        "round_id": round.pk,
        "table_id": round.table_id,
        "settled_at": round.settled_at,
        "seats": sorted(seat["seat"] for seat in seats),
        "stake": stake,
        "returned": returned,
        "net": net,
        "result": RoundResult.WIN if net > 0 else RoundResult.LOSE if net < 0 else RoundResult.PUSH,
        "hands": len(hands),
        "wins": wins,
        "pushes": pushes,
        "losses": len(hands) - wins - pushes,
        "blackjacks": results.count("blackjack"),
        "doubles_won": sum(1 for h in hands if h.get("doubled") and h.get("result") in WIN_RESULTS),
        "splits_won": sum(1 for h in hands if h.get("split") and h.get("result") in WIN_RESULTS),
        "summary": ", ".join(r for r in results if r)[:200],
        "decisions": len(decisions),
        "deviations": sum(1 for d in decisions if d.deviates),
        "ev_cost": sum(d.ev_cost for d in decisions),
    }


#: A player's all-time totals as `add_to_stats` changes them (plain SQL: the ORM's `bulk_update` took a
#: settling action's CPU three times over).
_UPDATE_STATS = ModelStatement(
    PlayerStats,
    (
        *(
            "rounds",
            "hands",
            "wins",
            "pushes",
            "losses",
            "blackjacks",
            "doubles_won",
            "splits_won",
            "wagered",
        ),
        *("net", "biggest_win", "biggest_win_round", "current_streak", "longest_streak", "decisions"),
        *("deviations", "ev_cost", "last_played_at"),
    ),
    "UPDATE {table} SET {set} WHERE user_id = %s",
)


def add_to_totals(rows: list[PlayerRound], *, batch: Batch | None = None) -> None:
    """Add recorded rounds, settled together and one per player, to their players' all-time and period
    totals. The players' stats rows are locked in user order (the same order at every table: no deadlock),
    in one statement when all exist, and written back together (on PostgreSQL in one round trip); the period
    rows of them all are added to in one statement. With `batch` the writes wait there (the locks are taken
    at once)."""
    rows = sorted(rows, key=lambda row: row.user_id)
    if not rows:
        return
    found = list(
        PlayerStats.objects.select_for_update().filter(pk__in=[row.user_id for row in rows]).order_by("pk")
    )
    writes = Batch() if batch is None else batch
    if len(found) == len(rows):
        for stats, row in zip(found, rows, strict=True):
            add_to_stats(stats, row)
            writes.add(_UPDATE_STATS.sql, [*_UPDATE_STATS.of(stats), stats.user_id])
    else:
        # A player's first round: create the missing rows in user order, locking the others in turn.
        for row in rows:
            stats, _ = PlayerStats.objects.select_for_update().get_or_create(user_id=row.user_id)
            add_to_stats(stats, row)
            stats.save()
    _add_to_periods(rows, period_starts(rows[0].settled_at), writes)
    if batch is None:
        writes.flush()


def _add_to_periods(rows: list[PlayerRound], starts: dict[str, datetime.date], writes: Batch) -> None:
    """Add the rounds (of distinct players) to their players' day, week and month rows in one statement,
    creating those not there yet (an upsert: PostgreSQL and SQLite alike)."""
    count = len(rows) * len(starts)

    table = PeriodStats._meta.db_table
    values = ", ".join(["(%s, %s, %s, 1, %s, %s)"] * count)
    sql = (
        f"INSERT INTO {table} (user_id, period, start, rounds, hands, net) VALUES {values} "
        f"ON CONFLICT (period, start, user_id) DO UPDATE SET rounds = {table}.rounds + 1, "
        f"hands = {table}.hands + excluded.hands, net = {table}.net + excluded.net"
    )
    adapt = connection.ops.adapt_datefield_value
    params = [
        value
        for row in rows
        for period, start in starts.items()
        for value in (row.user_id, str(period), adapt(start), row.hands, row.net)
    ]
    writes.add(sql, params)


def add_to_stats(stats: PlayerStats, row) -> None:
    """Add one round (a `PlayerRound`, or any object with its fields) to the player's all-time totals, in
    memory; rounds must come in settlement order."""
    stats.rounds += 1
    for name in ("hands", "wins", "pushes", "losses", "blackjacks", "doubles_won", "splits_won"):
        setattr(stats, name, getattr(stats, name) + getattr(row, name))
    stats.wagered += row.stake
    stats.net += row.net
    if row.net > stats.biggest_win:
        stats.biggest_win = row.net
        stats.biggest_win_round_id = row.round_id
    apply_streak(stats, row.net)
    stats.decisions += row.decisions
    stats.deviations += row.deviations
    stats.ev_cost += row.ev_cost
    stats.last_played_at = row.settled_at


def apply_streak(stats: PlayerStats, net: int) -> None:
    """A round won extends the streak, a round lost ends it, a push leaves it as it is."""
    if net > 0:
        stats.current_streak += 1
        stats.longest_streak = max(stats.longest_streak, stats.current_streak)
    elif net < 0:
        stats.current_streak = 0
