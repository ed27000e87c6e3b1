"""Quarantine: a table whose commands keep failing outside its game's rules is stopped instead of retried
forever, whatever the game.

Every writer of a table's commands (its actor, the actor's timer, the clock's sweep, a game's services) runs
them through `watch`: a command that raises anything but a refusal, a lease another process holds or an
exception its game passes (`TableActor.passes`) counts as a failure of its table (in this process); a command
that goes through clears the count. At `FAILURES` in a row the table is quarantined: its game stops it in one
transaction (`TableActor.stop`: what is in play refunded or settled, every player stood up, the table closed
with a notice, `quarantined_at` and the reason set for staff), and an error with the table and the traceback
is logged for the alerts. Should the stop fail too, the game closes and marks the table with one update
(`stop_stuck`), what is in play held for staff. Staff reopening the table clears it (`lift`).

A database that cannot be reached (`OperationalError`, `InterfaceError`) is not the table's fault: such
failures are not counted, or an outage would quarantine every busy table. Nor is a lease another process holds
(`OwnedElsewhere`: the command goes to that owner).
"""

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError

from cards.errors import Refused
from live import games
from live.lease import OwnedElsewhere

logger = logging.getLogger(__name__)

#: Failures in a row of one table's commands that quarantine it.
FAILURES = getattr(settings, "TABLE_QUARANTINE_FAILURES", 3)
#: What the players read in the table's log.
NOTICE = (
    "This table was stopped after repeated errors: the game in play was voided, every stake was refunded and "
    "staff were alerted."
)
#: What the player whose command stopped the table is told when even the stop failed.
STUCK_NOTICE = "This table was stopped after repeated errors; staff were alerted and will settle the game."

_lock = threading.Lock()
_failures: dict[tuple[str, int], int] = {}


class Quarantined(Refused):
    """The command's failure quarantined its table: what the player who sent it is told."""

    def __init__(self, message: str = NOTICE) -> None:
        super().__init__("table_closed", message)


def watch[T](game: str, table_id: int, command: Callable[[], T]) -> T:
    """Run one of the table's commands (of the registered game `game`): count a failure, clear the count after
    a success, quarantine the table at `FAILURES` in a row and then raise `Quarantined`."""
    try:
        result = command()
    except _passed(game):
        raise
    except Exception as error:
        notice = failed(game, table_id, error)
        if notice is not None:
            raise Quarantined(notice) from error
        raise
    succeeded(game, table_id)
    return result


def _passed(game: str) -> tuple[type[BaseException], ...]:
    """The exceptions of a command of `game` that are not its table's fault: a refusal, a lease another
    process holds, and what the game passes (a function: mypy cannot read a starred tuple in an `except`)."""
    return (Refused, OwnedElsewhere, *games.get(game).actor.passes)


def succeeded(game: str, table_id: int) -> None:
    if _failures:
        with _lock:
            _failures.pop((game, table_id), None)


def failed(game: str, table_id: int, error: BaseException) -> str | None:
    """Count a failed command of the table (after its transaction rolled back). If that quarantined the table,
    what the player who sent it is told; else None."""
    if isinstance(error, (OperationalError, InterfaceError)):
        return None
    owner = games.get(game).actor
    key = (game, table_id)
    with _lock:
        count = _failures[key] = _failures.get(key, 0) + 1
        if count >= FAILURES:
            del _failures[key]
    if count < FAILURES:
        logger.warning("%s table %s: a command failed (%d in a row): %r", owner.game, table_id, count, error)
        return None
    reason = f"{count} commands in a row failed; the last: {type(error).__name__}: {error}"[:1000]
    logger.error("%s table %s quarantined: %s", owner.game, table_id, reason, exc_info=error)
    try:
        owner.stop(table_id=table_id, reason=reason)
    except Exception as stuck:
        logger.exception("%s table %s: stopping it failed; closed with the stakes held", owner.game, table_id)
        reason = f"{reason} | stopping it failed too ({type(stuck).__name__}: {stuck}): stakes are held"
        owner.stop_stuck(table_id=table_id, reason=reason[:2000])
        return STUCK_NOTICE
    return NOTICE


def lift(game: str, *, table_id: int) -> None:
    """Staff reopened the table: it is no longer quarantined (inside their transaction)."""
    games.get(game).actor.model.objects.filter(pk=table_id).update(quarantined_at=None, quarantine_reason="")
    succeeded(game, table_id)
