"""What a server process's clock does for every game's live objects: renew the leases its actors hold, and
apply the deadlines nobody else applies. The clock thread itself is `tables.clock`; each game registers its
two steps here (`register`) when its actor module loads.

A game's sweep finds its rows with a due deadline, keeps those no live owner looks after (`unowned`) and
applies each one's deadline through a throwaway actor (`claim`): it takes the lease, applies the expiry fenced
by that epoch (the expiry is keyed on the version it was set for) and hands the lease back, so a deadline is
applied exactly once, by whoever comes first, whether the owner died, nobody is connected, or the servers
restarted.
"""

import logging
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta

from django.utils import timezone

from live import lease, process

logger = logging.getLogger(__name__)

#: A deadline of an object whose actor lives in this process is left to that actor's timer unless it is
#: overdue by this much.
OWNED_GRACE = timedelta(seconds=2)

#: game name -> (renew its actors' leases, sweep its overdue deadlines); each takes `now`.
_games: dict[str, tuple[Callable[..., object], Callable[..., int]]] = {}


def register(game: str, *, renew: Callable[..., object], sweep: Callable[..., int]) -> None:
    """The clock's two steps for a game's live objects (registering again replaces them)."""
    _games[game] = (renew, sweep)


def renew_leases(*, now: datetime | None = None) -> None:
    """Every game's lease renewal (one UPDATE a game); a failure of one does not stop the others."""
    now = now or timezone.now()
    for game, (renew, _sweep) in list(_games.items()):
        try:
            renew(now=now)
        except Exception:
            logger.exception("clock: renewing the leases of %s failed", game)


def sweep(*, now: datetime | None = None) -> int:
    """Every game's sweep; returns how many changes were written."""
    now = now or timezone.now()
    changed = 0
    for game, (_renew, swept) in list(_games.items()):
        try:
            changed += swept(now=now)
        except Exception:
            logger.exception("clock: the sweep of %s failed", game)
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


def claim(model, actor, version: int, *, now: datetime, registry: dict):
    """Apply the deadline set for `version` through `actor` (made for this claim, not in `registry`), which
    takes the row's lease when it loads; then hand the lease back unless an actor of the registry holds it.
    Returns what the actor's `expire` returns."""
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
