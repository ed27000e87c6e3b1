"""Quarantine: a table whose commands keep failing outside the engine is stopped instead of retried forever.

Every writer of a table's commands (`actions.perform`, the table actor, its timer and the clock's sweep) runs
them through `watch`: a command that raises anything but a refusal or a broken round counts as a failure of
its table (in this process), a command that goes through clears the count. At `FAILURES` in a row the table is
quarantined (`quarantine`), in one transaction: its round under way is voided and every stake refunded from
the ledger, every player stands up, the table closes with a notice the players see in its event log, and
`quarantined_at` / `quarantine_reason` tell staff (the admin lists and filters them); an error with the table
and the traceback is logged for the alerts. Staff reopening the table clears it (`staff.reopen_table`). Should
the table's writes fail for the voiding too, it is closed and marked all the same with one update, its stakes
held for staff, and the reason says so.

A database that cannot be reached (`OperationalError`, `InterfaceError`) is not the table's fault: such
failures are not counted, or an outage would quarantine every busy table. Nor is a lease another process holds
(`OwnedElsewhere`: the command goes to that owner): a process that lost its tables (paused past its leases)
would otherwise count the commands it still gets for them and quarantine tables it does not own.
"""

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import F
from django.utils import timezone

from blackjack import broadcast, flow
from blackjack.models import Table
from blackjack.services import actions, store
from blackjack.services.load import RoundBroken
from cards.errors import Refused
from live.lease import OwnedElsewhere

logger = logging.getLogger(__name__)

#: Failures in a row of one table's commands that quarantine it.
FAILURES = getattr(settings, "TABLE_QUARANTINE_FAILURES", 3)
#: What the players read in the table's log (an event is at most 200 characters).
NOTICE = (
    "This table was stopped after repeated errors: the round was voided, every stake was refunded and staff "
    "were alerted."
)
#: What the player whose command stopped the table is told when even the voiding failed.
STUCK_NOTICE = "This table was stopped after repeated errors; staff were alerted and will settle the round."

_lock = threading.Lock()
_failures: dict[int, int] = {}


class Quarantined(Refused):
    """The command's failure quarantined its table: what the player who sent it is told."""

    def __init__(self, message: str = NOTICE) -> None:
        super().__init__("table_closed", message)


def watch[T](table_id: int, command: Callable[[], T]) -> T:
    """Run one of the table's commands (a function writing it in its own transaction): count a failure, clear
    the count after a success, quarantine the table at `FAILURES` in a row and then raise `Quarantined`."""
    try:
        result = command()
    except (Refused, RoundBroken, OwnedElsewhere):
        raise
    except Exception as error:
        notice = failed(table_id, error)
        if notice is not None:
            raise Quarantined(notice) from error
        raise
    succeeded(table_id)
    return result


def succeeded(table_id: int) -> None:
    if _failures:
        with _lock:
            _failures.pop(table_id, None)


def failed(table_id: int, error: BaseException) -> str | None:
    """Count a failed command of the table (after its transaction rolled back). If that quarantined the table,
    what the player who sent it is told; else None."""
    if isinstance(error, (OperationalError, InterfaceError)):
        return None
    with _lock:
        count = _failures[table_id] = _failures.get(table_id, 0) + 1
        if count >= FAILURES:
            del _failures[table_id]
    if count < FAILURES:
        logger.warning("table %s: a command failed (%d in a row): %r", table_id, count, error)
        return None
    reason = f"{count} commands in a row failed; the last: {type(error).__name__}: {error}"[:1000]
    logger.error("table %s quarantined: %s", table_id, reason, exc_info=error)
    try:
        quarantine(table_id=table_id, reason=reason)
    except Exception as stuck:
        # The table's writes fail for voiding and closing too: close it without its flow, stakes held for
        # staff to settle (the round stays as it was; staff see why).
        logger.exception("table %s: voiding its round failed; closed with the stakes held", table_id)
        reason = f"{reason} | voiding the round failed too ({type(stuck).__name__}: {stuck}): stakes are held"
        _close_stuck(table_id, reason[:2000])
        return STUCK_NOTICE
    return NOTICE


def quarantine(*, table_id: int, reason: str) -> bool:
    """Stop the table in one transaction: void its round under way (every stake refunded), stand everyone up,
    close it with the players' notice, and mark it quarantined with `reason`. False if it already was."""
    with transaction.atomic():
        row = Table.objects.select_for_update().filter(pk=table_id).values("quarantined_at", "current_round")
        row = row.first()
        if row is None or row["quarantined_at"] is not None:
            return False
        if row["current_round"] is not None:
            actions.void_round(round_id=row["current_round"], reason=f"table quarantined: {reason}")
        store.run(table_id, flow.Release(close=True, notice=NOTICE), engine=False)
        Table.objects.filter(pk=table_id).update(quarantined_at=timezone.now(), quarantine_reason=reason)
    return True


def _close_stuck(table_id: int, reason: str) -> None:
    """Close and mark the table with one update, its version moved on so that every writer holding its state
    (an actor) reloads it, and tell its viewers."""
    with transaction.atomic():
        changed = Table.objects.filter(pk=table_id, quarantined_at__isnull=True).update(
            is_open=False,
            deadline=None,
            quarantined_at=timezone.now(),
            quarantine_reason=reason,
            version=F("version") + 1,
        )
        if changed:
            version = Table.objects.values_list("version", flat=True).get(pk=table_id)
            broadcast.table_changed_on_commit(table_id, version, lobby=True)


def lift(*, table_id: int) -> None:
    """Staff reopened the table: it is no longer quarantined (inside their transaction)."""
    Table.objects.filter(pk=table_id).update(quarantined_at=None, quarantine_reason="")
    succeeded(table_id)
