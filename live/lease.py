"""Leases with an epoch (fencing token) on a live object's row (`live.models.Leased`): one owner per object.

A process owns an object while its lease runs: `acquire` takes the row in one conditional UPDATE if the lease
is free, has lapsed, or is this process's already (owner := this process, `epoch` + 1 unless it was ours,
`lease_until` := now + `LEASE_SECONDS`) and returns the epoch; a live lease of another process raises
`OwnedElsewhere`, which names the owner. The owner keeps the epoch in memory and puts it in the fence of
every write (`... WHERE id = %s AND version = %s AND epoch = %s`), so once another process has taken the row
over (epoch bumped) the old owner's writes change nothing, however long it was paused. `renew` extends every
lease a process holds in one UPDATE (it runs every `RENEW_SECONDS`) and says which were lost.

Times are the application servers' clocks (`now` is passed in, so tests use a fake clock): keep the servers'
clocks in step (NTP) to well under a second. A dead owner's lease lapses at most `LEASE_SECONDS` after its
last renewal, so within `LEASE_SECONDS` of its death: 5 s leaves the take-over (lapse, then the next command
or sweep) inside the 10 s the tables promise. Renewing every 1.7 s, a live process must miss two renewals in a
row (a pause, a database outage over 3 s) before its lease can lapse.

A lapsed owner may still hold the row's lock: paused in the middle of a psycopg pipeline (its statements sent,
their Sync not yet), its backend waits for input as "active", where PostgreSQL's
`idle_in_transaction_session_timeout` never ends it, and the row stays locked for as long as the process is
stopped. On PostgreSQL `acquire` therefore waits at most `LOCK_WAIT` for the row; when the lease it waits for
has lapsed, it ends the backend of the transaction that holds the row (the row's `xmax`, that transaction's
lock in `pg_locks`) and takes the lease. The lapsed owner's transaction rolls back; its fence would have made
its writes fail anyway. The processes' database role must be allowed to end each other's backends (one role
for all: PostgreSQL allows it for backends of the same role).
"""

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import OperationalError, connection, transaction
from django.utils import timezone

from live import process

logger = logging.getLogger(__name__)

#: How long a lease runs without renewal.
LEASE_SECONDS = 5.0
#: How often a process renews its leases.
RENEW_SECONDS = LEASE_SECONDS / 3
#: How long taking a lease waits for its row's lock (PostgreSQL) before it looks at who holds it.
LOCK_WAIT = "1s"
#: Times `acquire` waits for a row whose lapsed owner's backend it ended (ending it is not instantaneous).
_CUT_OFF_TRIES = 5
_LOCK_NOT_AVAILABLE = "55P03"


class OwnedElsewhere(Exception):
    """The object's lease is held by another live process: `key` (the object's id) and `owner` (that
    process's name, `live.process.name()` there, which is also its channel name)."""

    def __init__(self, key: int, owner: str) -> None:
        super().__init__(f"{key} is owned by {owner}")
        self.key = key
        self.owner = owner


def _lease_end(now: datetime) -> datetime:
    return now + timedelta(seconds=LEASE_SECONDS)


def acquire(model, key: int, *, now: datetime, me: str | None = None) -> int | None:
    """Take the lease of row `key` of `model` for this process (or `me`) and return its epoch; None if there
    is no such row. Raises `OwnedElsewhere` if another process holds a live lease."""
    me = me or process.name()
    table = model._meta.db_table
    take = (
        f"UPDATE {table} SET epoch = CASE WHEN owner = %s THEN epoch ELSE epoch + 1 END, owner = %s,"
        " lease_until = %s"
        " WHERE id = %s AND (owner = %s OR owner = '' OR lease_until IS NULL OR lease_until <= %s)"
        " RETURNING epoch"
    )
    params = [me, me, _lease_end(now), key, me, now]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            row = _take_bounded(cursor, table, key, take, params, now=now)
        else:
            cursor.execute(take, params)
            row = cursor.fetchone()
        if row is not None:
            return row[0]
        cursor.execute(f"SELECT owner FROM {table} WHERE id = %s", [key])
        row = cursor.fetchone()
    if row is None:
        return None
    raise OwnedElsewhere(key, row[0])


def _take_bounded(cursor, table: str, key: int, take: str, params: list, *, now: datetime):
    """`take`, waiting at most `LOCK_WAIT` for the row each try; a row held locked past a lapsed lease has
    its holder's backend ended (see the module's doc). The row `take` returned (None: a live lease of another
    process, or no such row); raises `OperationalError` when the row stays locked."""
    for _ in range(_CUT_OFF_TRIES):
        try:
            with transaction.atomic():  # a savepoint: a lock wait that times out undoes only itself
                cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_WAIT}'")
                cursor.execute(take, params)
                row = cursor.fetchone()
                cursor.execute("SET LOCAL lock_timeout = DEFAULT")
                return row
        except OperationalError as error:
            if getattr(error.__cause__, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
                raise
        cursor.execute(f"SELECT owner, lease_until, xmax::text FROM {table} WHERE id = %s", [key])
        found = cursor.fetchone()
        if found is None:
            return None
        owner, until, holder = found
        if until is not None and until > now:
            continue  # a live lease: its owner is writing; wait for the row again
        cursor.execute(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'transactionid'"
            " AND transactionid::text = %s AND granted AND mode = 'ExclusiveLock'"
            " AND pid <> pg_backend_pid()",
            [holder],
        )
        for pid, _ended in cursor.fetchall():
            logger.warning(
                "row %s of %s: ended backend %s, which held it locked after the lease of %s had lapsed",
                key,
                table,
                pid,
                owner,
            )
    raise OperationalError(f"row {key} of {table} stayed locked after its lease had lapsed")


def holder(model, key: int) -> str | None:
    """The process that holds a live lease on row `key` of `model` (this one included), or None."""
    row = model.objects.filter(pk=key).values_list("owner", "lease_until").first()
    if row is None:
        return None
    owner, until = row
    return owner if owner and until is not None and until > timezone.now() else None


def renew(model, held: dict[int, int], *, now: datetime, me: str | None = None) -> set[int]:
    """Extend the leases this process holds (`held`: key -> epoch) in one UPDATE; returns the keys whose
    lease is lost (another process took the row over, or the row is gone): their owner must stop writing."""
    if not held:
        return set()
    me = me or process.name()
    table = model._meta.db_table
    keys = list(held)
    marks = ", ".join(["%s"] * len(keys))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET lease_until = %s WHERE owner = %s AND id IN ({marks}) RETURNING id, epoch",
            [_lease_end(now), me, *keys],
        )
        kept = {key for key, epoch in cursor.fetchall() if held.get(key) == epoch}
    return set(keys) - kept


def release(model, keys: Iterable[tuple[int, int]], *, me: str | None = None) -> None:
    """Hand back the leases of (key, epoch) this process holds, so that another process may take the rows at
    once (the epoch stays: it only ever grows)."""
    me = me or process.name()
    table = model._meta.db_table
    with connection.cursor() as cursor:
        for key, epoch in keys:
            cursor.execute(
                f"UPDATE {table} SET owner = '', lease_until = NULL"
                " WHERE id = %s AND owner = %s AND epoch = %s",
                [key, me, epoch],
            )
