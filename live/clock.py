"""The clock of a server process: a daemon thread that renews the leases its actors hold and applies the
deadlines nobody else applies, for every registered game (`live.games`).

Deadlines are applied by their table's owner: its actor's timer (`live.table`). The clock only
- renews the leases this process's actors hold, every `lease.RENEW_SECONDS`, in one UPDATE a game
  (`TableActor.renew_leases`: `renew_held`), and drops the actors whose lease was lost;
- sweeps every `SWEEP_SECONDS` for tables with a due deadline and no live owner (a dead owner's tables, tables
  nobody is connected to, tables after a restart: `TableActor.sweep`). It keeps the rows no live owner looks
  after (`unowned`) and applies each one's deadline through a throwaway actor (`claim`): it takes the lease,
  applies the expiry fenced by that epoch (the expiry is keyed on the version it was set for) and hands the
  lease back, so a deadline is applied exactly once, by whoever comes first;
- runs each game's upkeep (`Game.upkeep`: blackjack's floats, say) at the pace the game asks, and at start
  each game's recovery (`Game.recover`: rounds that cannot be loaded are voided).

`start()` is called when the ASGI application loads (cardroom/asgi.py) and does nothing unless
`settings.LIVE_TIMERS` (the one switch of deadlines: the actors' timers follow it too; tests turn it off and
call `sweep` with an injected `now`). Management commands never load the ASGI application, so only servers
run a clock. Every process of a cluster must run its clock.
"""

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from live import games, lease, process

logger = logging.getLogger(__name__)

#: How often a process looks for deadlines that no owner applies.
SWEEP_SECONDS = 1.0
#: A deadline of a table whose actor lives in this process is left to that actor's timer unless it is
#: overdue by this much.
OWNED_GRACE = timedelta(seconds=2)

_started = threading.Event()
_stop = threading.Event()
_thread: threading.Thread | None = None


def start() -> bool:
    """Start this process's clock thread once; returns whether a clock runs now."""
    global _thread
    if not settings.LIVE_TIMERS:
        return False
    if _started.is_set():
        return True
    _started.set()
    _stop.clear()
    _thread = threading.Thread(target=_run, name="live-clock", daemon=True)
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


def renew_leases(*, now: datetime | None = None) -> None:
    """Every game's lease renewal (one UPDATE a game); a failure of one does not stop the others."""
    now = now or timezone.now()
    for game in games.all_games():
        try:
            game.actor.renew_leases(now=now)
        except Exception:
            logger.exception("clock: renewing the leases of %s failed", game.name)


def sweep(*, now: datetime | None = None) -> int:
    """Every game's sweep; returns how many changes were written."""
    now = now or timezone.now()
    changed = 0
    for game in games.all_games():
        try:
            changed += game.actor.sweep(now=now)
        except Exception:
            logger.exception("clock: the sweep of %s failed", game.name)
    return changed


def unowned(due: Iterable[tuple], registry: dict, *, now: datetime) -> Iterator[tuple[int, int]]:
    """Of the rows with a due deadline (`due`: id, version, deadline, owner, lease_until), the (id, version)
    of those no live owner looks after: a live lease of another process is left to it, and one of this
    process's actors to its timer, if that is set for the row's version (the actor is not behind another
    writer) and not overdue by `OWNED_GRACE` (it has not failed to ring)."""
    me = process.name()
    for key, version, deadline, owner, lease_until in list(due):
        if owner == me and (actor := registry.get(key)) is not None:
            if actor.armed_for(version) and (deadline is None or deadline > now - OWNED_GRACE):
                continue
        elif owner and owner != me and lease_until is not None and lease_until > now:
            continue
        yield key, version


def claim(model, actor, version: int, *, now: datetime, registry: dict) -> int:
    """Apply the deadline set for `version` through `actor` (made for this claim, not in `registry`), which
    takes the row's lease when it loads; then hand the lease back unless an actor of the registry holds it.
    Returns how many changes the expiry wrote."""
    try:
        return actor.expire(version, now=now)
    finally:
        if actor.epoch is not None and actor.key not in registry:
            lease.release(model, [(actor.key, actor.epoch)])


def renew_held(model, registry: dict, held: dict[int, int], *, now: datetime) -> set[int]:
    """Renew the leases `held` (id -> epoch) by the actors of `registry` in one UPDATE, and drop (on its
    loop) each actor whose lease was lost: another process took the row over while this one was paused or
    cut off, so its writes would only be fenced. Returns the ids of those rows."""
    lost = lease.renew(model, held, now=now)
    for key in lost:
        actor = registry.get(key)
        if actor is None or actor.epoch != held[key]:
            continue
        logger.warning("%s %s: its lease was lost; the actor here is dropped", model.__name__, key)
        loop = actor._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(actor.drop)
        else:
            actor.drop()
    return lost


def _every(seconds: float, work: Callable[[], object], what: str) -> Callable[[], None]:
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
            logger.exception("clock: %s failed", what)
        finally:
            close_old_connections()

    return step


def _run() -> None:
    for game in games.all_games():
        if game.recover is None:
            continue
        try:
            close_old_connections()
            recovered = game.recover()
            if recovered:
                logger.warning(
                    "clock: %s recovered %d table(s) that could not be resumed", game.name, recovered
                )
        except Exception:
            logger.exception("clock: the recovery of %s failed", game.name)
    steps = [
        _every(lease.RENEW_SECONDS, renew_leases, "renewing the leases"),
        _every(SWEEP_SECONDS, sweep, "the sweep"),
        *(
            _every(job.seconds, job.work, f"{game.name}: {job.what}")
            for game in games.all_games()
            for job in game.upkeep
        ),
    ]
    while True:
        for step in steps:
            step()
        if _stop.wait(0.1):
            return
