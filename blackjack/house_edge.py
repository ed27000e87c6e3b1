"""The house edge of a rule set: computed at once by the engine (`computed_house_edge`, what players see in
the lobby and at the table), and estimated by the engine's simulator in the background for staff.

The computed figure is the expected value of basic strategy summed over every first deal
(`Strategy.house_edge`); it agrees with published figures within a few hundredths of a percentage point
(tests/engine/test_house_edge.py). It is cached per rule set.

The simulated estimate of a rule preset:

When staff save a preset whose rules changed, `refresh_on_commit(preset_id)` clears its figures and, once the
transaction commits, starts a thread that runs the simulation in a separate (spawned) process, so the
simulation holds no lock the web server needs (no GIL shared with the websocket loop, no open transaction).
When it finishes, the thread writes the house edge, its standard error and the number of rounds played,
unless the preset's rules changed again meanwhile (a newer estimate is then on its way).

Settings (read when a refresh starts):
- `HOUSE_EDGE_ROUNDS` (default 300_000): rounds to simulate; the standard error of the edge is about
  114% / sqrt(rounds), 0.21 percentage points at 300k.
- `HOUSE_EDGE_MAX_SECONDS` (default 180): the simulation stops after the first batch past this time and
  reports what it played (the stored round count says how many).

While an estimate runs, a cache key marks the preset "estimating" (shared by every process with Redis).
"""

import hashlib
import json
import logging
import math
import multiprocessing
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from blackjack.engine.rules import RuleSet
from blackjack.engine.simulate import CHUNK_ROUNDS, simulate
from blackjack.engine.strategy import basic_strategy

logger = logging.getLogger(__name__)

DEFAULT_ROUNDS = 300_000
DEFAULT_MAX_SECONDS = 180
_CACHE_KEY = "house-edge-estimating:{}"


def computed_house_edge(rules: dict[str, Any]) -> float:
    """The house edge of basic strategy under `rules` (a `RuleSet` as a dict), in percent of the first bet."""
    return _edge(RuleSet.from_dict(rules))


@lru_cache(maxsize=128)
def _edge(rules: RuleSet) -> float:
    return basic_strategy(rules).house_edge()


def target_rounds() -> int:
    return int(getattr(settings, "HOUSE_EDGE_ROUNDS", DEFAULT_ROUNDS))


def max_seconds() -> float:
    return float(getattr(settings, "HOUSE_EDGE_MAX_SECONDS", DEFAULT_MAX_SECONDS))


def is_estimating(preset_id: int) -> bool:
    return bool(cache.get(_CACHE_KEY.format(preset_id)))


def _presets():
    # Imported when used: the spawned worker imports this module for `estimate` without setting Django up.
    from blackjack.models import RulePreset

    return RulePreset.objects


def refresh_on_commit(preset_id: int) -> None:
    """Clear the preset's house edge now and estimate it again in the background after the commit."""
    _presets().filter(pk=preset_id).update(
        house_edge=None, house_edge_stderr=None, house_edge_rounds=None, house_edge_updated_at=None
    )
    transaction.on_commit(lambda: start_refresh(preset_id))


def start_refresh(preset_id: int) -> threading.Thread:
    """Start the background estimate of one preset; returns the (daemon) thread, which tests may join."""
    cache.set(_CACHE_KEY.format(preset_id), True, timeout=int(max_seconds()) + 120)
    thread = threading.Thread(target=_refresh, args=(preset_id,), name=f"house-edge-{preset_id}", daemon=True)
    thread.start()
    return thread


def _refresh(preset_id: int) -> None:
    try:
        rules = _presets().filter(pk=preset_id).values_list("rules", flat=True).first()
        if rules is None:
            return
        ruleset = RuleSet.from_dict(rules)
        figures = _run_in_process(ruleset.to_dict(), target_rounds(), max_seconds())
        close_old_connections()  # this thread's connection idled through the simulation
        store(preset_id=preset_id, rules=ruleset, figures=figures)
    except Exception:
        logger.exception("house edge estimate of preset %s failed", preset_id)
    finally:
        cache.delete(_CACHE_KEY.format(preset_id))
        connections.close_all()  # this thread's own connections


def _run_in_process(rules: dict[str, Any], rounds: int, seconds: float) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(estimate, rules, rounds, seconds).result()


def store(*, preset_id: int, rules: RuleSet, figures: dict[str, Any]) -> bool:
    """Write an estimate for `rules`, unless the preset's rules are different by now. True if written."""
    with transaction.atomic():
        preset = _presets().select_for_update().filter(pk=preset_id).first()
        if preset is None or preset.ruleset() != rules:
            return False
        _presets().filter(pk=preset_id).update(
            house_edge=figures["house_edge"],
            house_edge_stderr=figures["stderr"],
            house_edge_rounds=figures["rounds"],
            house_edge_updated_at=timezone.now(),
        )
    return True


def estimate(rules: dict[str, Any], rounds: int, seconds: float) -> dict[str, Any]:
    """Simulate up to `rounds` rounds of basic strategy in batches, stopping early after `seconds`; return
    `house_edge` and `stderr` (percent of the initial bet) and the `rounds` played.

    Pure engine code (no Django): it runs in a spawned worker process. The seed follows from the rules, so the
    same rules give the same figures.
    """
    ruleset = RuleSet.from_dict(rules)
    seed = hashlib.sha256(json.dumps(ruleset.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
    started = time.monotonic()
    batches = []
    played = 0
    while played < rounds and (not batches or time.monotonic() - started < seconds):
        size = min(CHUNK_ROUNDS, rounds - played)
        result = simulate(ruleset, size, f"{seed}:{len(batches)}")
        batches.append((result["rounds"], result["house_edge"], result["stderr"]))
        played += size
    return combine(batches)


def combine(batches: list[tuple[int, float, float]]) -> dict[str, Any]:
    """Pool (rounds, house edge %, standard error %) of independent batches into one estimate."""
    total = sum(n for n, _, _ in batches)
    mean = sum(n * edge for n, edge, _ in batches) / total
    # Each batch's per-round variance is stderr^2 * n; add back its mean to get the second moment.
    second = sum(n * ((stderr**2) * n + edge**2) for n, edge, stderr in batches) / total
    variance = max(second - mean**2, 0.0)
    return {"house_edge": mean, "stderr": math.sqrt(variance / total), "rounds": total}
