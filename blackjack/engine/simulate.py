"""Simulate basic-strategy play with the live round code and report the house edge.

    python -m blackjack.engine.simulate --rules "Vegas Strip" --rounds 1000000 --seed 1 \
        [--processes 2] [--json]

Every round is played by `round.new_round` and `round.apply_in_place`, the code that runs the live tables, by
`strategy.basic_strategy` for the rules, on real provably fair shoes: `_play.fast_shuffled_shoe` computes
exactly the card order of `shoe.shuffled_shoe` (tests compare them), 2.5 times faster. Each of `--seats` seats
bets `BET` chips a round, declines insurance and even money, and takes early surrender when basic strategy
says so. A shoe is reshuffled at the cut card (`rules.penetration`; 0 deals every round from a fresh shoe).

Determinism: the rounds are cut into chunks of `CHUNK_ROUNDS`, each with its own shoes (`_play`). Every figure
is summed over chunks in integers, so the same seed gives the same figures whatever the number of processes.
A round that runs out of cards (many seats on a small shoe) goes on with the shoe's discards reshuffled, as at
the live tables; one that would use up a whole fresh shoe (or, in `compare`, the rest of its slot's shoe) is
voided, not counted; `ran_out_rounds` and `voided_rounds` report how many.

House edge: the players' net loss as a percentage of the initial bets (positive favours the house). Its
standard error comes from the per-round results (the seats of one round are summed first: they are
correlated). `compare(base, variant, ...)` measures a rule change by paired rounds on the same shoes.
"""

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from cards.errors import Refused

from ._play import BET, PairTally, Tally, compare_chunk, play_chunk
from .rules import RuleSet, parse_rules
from .strategy import basic_strategy

CHUNK_ROUNDS = 20_000
MAX_SEATS = 7


def simulate(
    rules: RuleSet | str,
    rounds: int,
    seed: int | str,
    processes: int = 1,
    seats: int = 1,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Play `rounds` rounds and return the figures (see `summary`). `rules` may be a preset name or JSON text.

    `progress`, if given, is called with the number of rounds done after each chunk.
    """
    rules = _checked(rules, rounds, processes, seats)
    strategy = basic_strategy(rules)
    total = Tally()
    started, cpu_started = time.perf_counter(), _cpu_seconds()
    for tally in _run(play_chunk, (strategy,), seed, rounds, seats, processes):
        total.add(tally)
        if progress is not None:
            progress(total.rounds)
    result = summary(rules, total, seats, time.perf_counter() - started)
    cpu = _cpu_seconds() - cpu_started
    # Per CPU second (this process and its finished workers): the speed of one core, even on a busy machine.
    result["rounds_per_cpu_second"] = total.rounds / cpu if cpu > 0 else None
    return result


def compare(
    base: RuleSet | str,
    variant: RuleSet | str,
    rounds: int,
    seed: int | str,
    processes: int = 1,
    seats: int = 1,
) -> dict[str, Any]:
    """The effect of changing the rules from `base` to `variant`, by paired rounds.

    Every round is dealt from a freshly shuffled shoe (the penetration is ignored: this is the fresh-shoe
    game) and played under both rule sets, each with its own basic strategy. With the same number of decks
    both see the same cards, so only the rounds the change touches differ and the effect's standard error is
    far below that of two separate runs (`_play.compare_chunk`). Returns `effect` (variant house edge minus
    base house edge, percentage points) and its `stderr`, and both house edges with theirs.
    """
    base = _checked(base, rounds, processes, seats)
    variant = _checked(variant, rounds, processes, seats)
    strategies = (basic_strategy(base), basic_strategy(variant))
    total = PairTally()
    started = time.perf_counter()
    for tally in _run(compare_chunk, strategies, seed, rounds, seats, processes):
        total.add(tally)
    n = total.rounds
    unit = seats * BET
    base_edge, base_se = _edge(total.base_net, total.base_squares, n, unit)
    variant_edge, variant_se = _edge(total.variant_net, total.variant_squares, n, unit)
    difference = total.variant_net - total.base_net
    # The players' net gain falls by exactly the house edge's rise.
    effect, effect_se = _edge(difference, total.difference_squares, n, unit)
    return {
        "rounds": n,
        "seats": seats,
        "effect": effect,
        "stderr": effect_se,
        "base": {"house_edge": base_edge, "stderr": base_se, "rules": base.to_dict()},
        "variant": {"house_edge": variant_edge, "stderr": variant_se, "rules": variant.to_dict()},
        "voided_rounds": total.voided_rounds,
        "seconds": time.perf_counter() - started,
    }


def summary(rules: RuleSet, tally: Tally, seats: int, elapsed: float) -> dict[str, Any]:
    """The figures of a tally: house edge and its standard error in percent of the initial bets, and rates."""
    n = tally.rounds
    house_edge, stderr = _edge(tally.net, tally.net_squares, n, seats * BET)
    return {
        "rounds": n,
        "seats": seats,
        "house_edge": house_edge,
        "stderr": stderr,
        "natural_rate": tally.naturals / tally.hands,
        "rounds_per_second": n / elapsed if elapsed > 0 else None,
        "rules": rules.to_dict(),
        "rules_summary": rules.summary(),
        "computed_house_edge": basic_strategy(rules).house_edge(),
        "std_per_round": stderr / 100 * math.sqrt(n),
        "dealer_blackjack_rate": tally.dealer_blackjacks / n,
        "double_rate": tally.doubles / tally.hands,
        "split_rate": tally.splits / tally.hands,
        "surrender_rate": tally.surrenders / tally.hands,
        "wagered_per_initial_bet": tally.wagered / (tally.hands * BET),
        "shoes": tally.shoes,
        "ran_out_rounds": tally.ran_out_rounds,
        "voided_rounds": tally.voided_rounds,
        "seconds": elapsed,
    }


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _edge(net: int, squares: int, n: int, unit: int) -> tuple[float, float]:
    """House edge and its standard error, in percent, from the players' net chips over n rounds of `unit`."""
    mean = net / (n * unit)
    variance = max(squares / (n * unit * unit) - mean * mean, 0.0)
    return -100 * mean, 100 * math.sqrt(variance / n)


def _checked(rules: RuleSet | str, rounds: int, processes: int, seats: int) -> RuleSet:
    if isinstance(rules, str):
        rules = parse_rules(rules)
    if type(rounds) is not int or rounds < 1:
        raise ValueError("rounds must be a positive integer")
    if type(processes) is not int or processes < 1:
        raise ValueError("processes must be a positive integer")
    if type(seats) is not int or not 1 <= seats <= MAX_SEATS:
        raise ValueError(f"seats must be 1 to {MAX_SEATS}")
    return rules


def _run(
    function: Callable, leading: tuple, seed: int | str, rounds: int, seats: int, processes: int
) -> Iterator:
    """`function(*leading, seed, chunk_index, chunk_rounds, seats)` for each chunk, here or in a pool."""
    chunks = [
        (*leading, str(seed), index, min(CHUNK_ROUNDS, rounds - start), seats)
        for index, start in enumerate(range(0, rounds, CHUNK_ROUNDS))
    ]
    if processes == 1 or len(chunks) == 1:
        for chunk in chunks:
            yield function(*chunk)
        return
    # "spawn": a clean interpreter per worker, safe whatever threads the caller runs.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(processes, len(chunks)), mp_context=context) as pool:
        yield from pool.map(_call, [(function, chunk) for chunk in chunks])


def _call(job: tuple[Callable, tuple]) -> Any:
    function, args = job
    return function(*args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m blackjack.engine.simulate",
        description="Play basic strategy with the live round code and report the house edge.",
    )
    parser.add_argument(
        "--rules", default="Vegas Strip", help="a preset name or a JSON object of rule fields"
    )
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--seed", default="0", help="any text; the same seed gives the same figures")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--seats", type=int, default=1, help=f"seats playing each round (1 to {MAX_SEATS})")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    try:
        rules = parse_rules(args.rules)
    except Refused as error:
        parser.error(f"--rules: {error.message}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    if not 1 <= args.seats <= MAX_SEATS:
        parser.error(f"--seats must be 1 to {MAX_SEATS}")
    bar = _ProgressBar(args.rounds) if sys.stderr.isatty() else None
    result = simulate(rules, args.rounds, args.seed, args.processes, args.seats, progress=bar)
    if bar is not None:
        bar.finish()
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(_readable(result))
    return 0


class _ProgressBar:
    WIDTH = 40

    def __init__(self, total: int) -> None:
        self.total = total

    def __call__(self, done: int) -> None:
        filled = self.WIDTH * done // self.total
        bar = "#" * filled + "." * (self.WIDTH - filled)
        sys.stderr.write(f"\r[{bar}] {100 * done // self.total:3d}%  {done:,} / {self.total:,} rounds")
        sys.stderr.flush()

    def finish(self) -> None:
        sys.stderr.write("\n")


def _readable(result: dict[str, Any]) -> str:
    seats = result["seats"]
    return "\n".join(
        [
            f"Rules:          {result['rules_summary']}",
            f"Rounds:         {result['rounds']:,} ({seats} seat{'s' if seats > 1 else ''}, "
            f"{result['shoes']:,} shoes, {result['ran_out_rounds']} dealt on from reshuffled discards, "
            f"{result['voided_rounds']} voided)",
            f"House edge:     {result['house_edge']:+.3f}% ± {result['stderr']:.3f}% (one standard error)",
            f"Computed edge:  {result['computed_house_edge']:+.3f}% (strategy model, no simulation)",
            f"Naturals:       {100 * result['natural_rate']:.3f}% of hands",
            f"Std per round:  {result['std_per_round']:.3f} initial bets",
            f"Doubles:        {100 * result['double_rate']:.2f}% of hands",
            f"Splits:         {100 * result['split_rate']:.2f}% of hands",
            f"Speed:          {result['rounds_per_second']:,.0f} rounds/s ({result['seconds']:.1f} s), "
            f"{result['rounds_per_cpu_second']:,.0f} rounds per CPU second",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
