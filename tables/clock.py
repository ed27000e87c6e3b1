"""The deadline clock: a daemon thread per server process that applies due deadlines every `TICK_SECONDS`.

Deadlines live in the database (`Table.deadline`), so the clock needs no memory of its own: after a restart
it recovers broken rounds once (`services.recover_tables`) and then applies whatever fell due meanwhile.
Several processes (PostgreSQL + Redis) may each run a clock: `services.expire_due` re-checks each deadline's
table version under the row lock, so every expiry happens once. A deadline a live table actor of this process
has its timer set for is left to that timer (`tables.actors.armed`), unless it is overdue. Every
`PRESENCE_HEARTBEAT_SECONDS` the clock also vouches for the process's open table websockets and drops the
presence rows nobody vouches for any more (`heartbeat`), so that a player connected to a process that was
killed outright is seen to be gone. Every process of a cluster must therefore run its clock.

`start()` is called when the ASGI application loads (blackjack_site/asgi.py). It does nothing when the
environment says `TABLE_CLOCK=0`, or under pytest unless `TABLE_CLOCK=1` (tests drive `expire_due` with an
injected `now`). Management commands never load the ASGI application, so only servers run a clock.
"""

import logging
import os
import sys
import threading
import time

from django.conf import settings
from django.db import close_old_connections

from tables import actors, broadcast, liveness, services

logger = logging.getLogger(__name__)

TICK_SECONDS = 0.5

_started = threading.Event()
_stop = threading.Event()
_thread: threading.Thread | None = None


def enabled() -> bool:
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


def tick() -> int:
    """One pass: apply every due deadline. Returns how many tables changed."""
    close_old_connections()
    try:
        return services.expire_due(owned=actors.armed)
    finally:
        close_old_connections()


def heartbeat() -> None:
    """Vouch for this process's open table websockets, then drop the presence rows of processes that have
    stopped vouching for theirs (killed outright: their players count as disconnected from then on)."""
    close_old_connections()
    try:
        services.refresh_presence(liveness.held(), still_open=liveness.is_open)
        dropped = services.sweep_presence()
        if dropped:
            logger.warning("table clock: dropped %d presence row(s) of a server that stopped", dropped)
    finally:
        close_old_connections()


def _run() -> None:
    try:
        close_old_connections()
        voided = services.recover_tables(clear_presence=broadcast.single_process())
        if voided:
            logger.warning("table clock: voided %d round(s) that could not be resumed", voided)
    except Exception:
        logger.exception("table clock: recovery failed")
    beat_due = time.monotonic()
    while not _stop.wait(TICK_SECONDS):
        try:
            tick()
        except Exception:
            logger.exception("table clock: tick failed")
        if time.monotonic() >= beat_due:
            beat_due = time.monotonic() + settings.PRESENCE_HEARTBEAT_SECONDS
            try:
                heartbeat()
            except Exception:
                logger.exception("table clock: presence heartbeat failed")
