"""The clock of a server process: a daemon thread that renews the process's table leases and sweeps for
deadlines nobody applies.

Deadlines are applied by their table's owner: its actor's timer (`tables.actors`). The clock only
- renews the leases this process's actors hold (blackjack's and Durak's: `live.clock`), every
  `lease.RENEW_SECONDS`, in one UPDATE a game, and drops the actors whose lease was lost;
- sweeps every `SWEEP_SECONDS` (`sweep`, and Durak's: `live.clock`) for tables with a due deadline (or an
  absent player whose grace period is over) and no live owner: a dead owner's tables, tables nobody is
  connected to, tables after a restart. It claims each one's lease, applies the deadline with the epoch in
  the fence, and hands the lease back: a deadline is applied exactly once, by whoever comes first (the
  expiry is keyed on its version and every write is fenced). Who is connected is known only to a table's
  owner (`actors.TableActor.connections`): a claim of a table whose owner's lease lapsed (it died, or this
  process restarted) marks the players whose sockets it does not count (all, unless an actor here counts
  them), and their grace period runs; so the sweep also claims such a table whose seated players are not
  all marked yet. Sockets on live processes tell the table's next owner again (`consumers`);
- every `floats.REBALANCE_SECONDS`, rebalances the tables' house floats (`tables.services.floats.rebalance`).
After a restart it first voids the rounds that cannot be loaded (`services.recover_tables`). Every process of
a cluster must run its clock.

`start()` is called when the ASGI application loads (cardroom/asgi.py). It does nothing when the
environment says `TABLE_CLOCK=0`, or under pytest unless `TABLE_CLOCK=1` (`enabled()`; tests call `sweep`
with an injected `now`). The actors' timers follow the same switch. Management commands never load the ASGI
application, so only servers run a clock.
"""

import logging
import os
import sys
import threading
import time
from datetime import datetime

from django.db import close_old_connections
from django.db.models import Q
from django.utils import timezone

from blackjack import actors, flow, services
from blackjack.models import Phase, Seat, Table
from blackjack.services import floats
from live import clock as live_clock
from live import lease

logger = logging.getLogger(__name__)

#: How often a process looks for deadlines that no owner applies.
SWEEP_SECONDS = 1.0

_started = threading.Event()
_stop = threading.Event()
_thread: threading.Thread | None = None


def enabled() -> bool:
    """Whether this process enforces deadlines (its clock thread and its actors' timers)."""
    flag = os.environ.get("TABLE_CLOCK", "").strip().lower()
    if flag in ("0", "false", "off", "no"):
        return False
    if flag in ("1", "true", "on", "yes"):
        return True
    return "pytest" not in sys.modules


def start() -> bool:
    """Start this process's clock thread once; returns whether a clock runs now."""
    global _thread
    if not enabled():
        return False
    if _started.is_set():
        return True
    _started.set()
    _stop.clear()
    _thread = threading.Thread(target=_run, name="table-clock", daemon=True)
    _thread.start()
    return True


def stop(timeout: float = 5.0) -> None:
    """Stop the clock thread (tests and orderly shutdown)."""
    global _thread
    _stop.set()
    if _thread is not None:
        _thread.join(timeout)
    _thread = None
    _started.clear()


def sweep(*, now: datetime | None = None) -> int:
    """Apply the due deadlines and stand up the absent players of the tables no live owner looks after.
    Returns how many changes were written."""
    now = now or timezone.now()
    absent = Seat.objects.filter(
        user__isnull=False,
        disconnected_at__lte=now - flow.DISCONNECT_GRACE,
        table__phase__in=[Phase.WAITING, Phase.BETTING, Phase.SETTLED],
    ).values("table_id")
    unmarked = Seat.objects.filter(user__isnull=False, disconnected_at__isnull=True).values("table_id")
    lapsed = ~Q(owner="") & (Q(lease_until__isnull=True) | Q(lease_until__lte=now))
    due = list(
        Table.objects.filter(
            Q(deadline__lte=now) | Q(pk__in=absent) | (lapsed & Q(pk__in=unmarked))
        ).values_list("id", "version", "deadline", "owner", "lease_until")
    )
    owners = {row[0]: row[3] for row in due}
    changed = 0
    for table_id, version in live_clock.unowned(due, actors._actors, now=now):
        changed += claim(table_id, version, now=now, owned=bool(owners[table_id]))
    return changed


def claim(table_id: int, version: int, *, now: datetime, owned: bool = False) -> int:
    """Take the table's lease; if an owner held it (`owned`), mark its seats as the sockets counted here say
    (nobody, unless an actor here counts them: the owner's count is gone); apply the deadline set for
    `version` and stand up its absent players (fenced by the epoch taken), then hand the lease back unless
    an actor of this process holds it. Returns how many deadlines and stand-ups were written."""
    # The actor is not in the process's map: it lives for this claim only.
    held = actors._actors.get(table_id)
    connections = held.connections if held is not None else None
    actor = actors.TableActor(table_id, connections=connections, marks_on_load=owned)
    return live_clock.claim(Table, actor, version, now=now, registry=actors._actors)


live_clock.register("tables", renew=actors.renew_leases, sweep=sweep)


def _every(seconds: float, work, what: str):
    """A step of the clock's loop that runs `work` at most every `seconds`, logging its failures."""
    due = [0.0]

    def step() -> None:
        if time.monotonic() < due[0]:
            return
        due[0] = time.monotonic() + seconds
        close_old_connections()
        try:
            work()
        except Exception:
            logger.exception("table clock: %s failed", what)
        finally:
            close_old_connections()

    return step


def _run() -> None:
    try:
        close_old_connections()
        voided = services.recover_tables()
        if voided:
            logger.warning("table clock: voided %d round(s) that could not be resumed", voided)
    except Exception:
        logger.exception("table clock: recovery failed")
    steps = [
        _every(lease.RENEW_SECONDS, live_clock.renew_leases, "renewing the leases"),
        _every(SWEEP_SECONDS, live_clock.sweep, "the sweep"),
        _every(floats.REBALANCE_SECONDS, floats.rebalance, "rebalancing the floats"),
    ]
    while True:
        for step in steps:
            step()
        if _stop.wait(0.1):
            return
