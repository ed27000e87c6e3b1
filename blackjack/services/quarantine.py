"""How a blackjack table is stopped when its commands keep failing (`live.quarantine` counts the failures for
every game and calls `BlackjackActor.stop`): in one transaction its round under way is voided and every stake
refunded from the ledger, every player stands up, and the table closes with a notice the players see in its
event log, `quarantined_at` and the reason set for staff (the admin lists and filters them). Should the
table's writes fail for the voiding too, it is closed and marked all the same with one update, its stakes held
for staff, and the reason says so (`close_stuck`). Staff reopening the table clears it
(`staff.reopen_table`)."""

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from blackjack import flow
from blackjack.models import GAME, Table
from blackjack.services import actions, store
from live import fanout

#: What the players read in the table's log (an event is at most 200 characters).
NOTICE = (
    "This table was stopped after repeated errors: the round was voided, every stake was refunded and staff "
    "were alerted."
)


def stop(*, table_id: int, reason: str) -> bool:
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


def close_stuck(*, table_id: int, reason: str) -> None:
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
            fanout.changed_on_commit(GAME, table_id, version, lobby=True)
