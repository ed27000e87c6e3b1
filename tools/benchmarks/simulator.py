"""Simulator speed: rounds per second on one and two processes, and where the time goes.

    .venv/bin/python -m tools.benchmarks.simulator [--rules "Vegas Strip"] [--rounds 300000] [--profile]

Prints the simulator's own `rounds_per_second` for 1 and 2 processes (twice as many rounds on 2) and the
scaling factor, with the load average before and after: on a shared machine other work halves the figures.
`--profile` adds a cProfile run on one process with the time grouped by engine module. Targets: at
least 50,000 rounds/s on one core for "Vegas Strip", near-linear scaling with processes. Figures only.
"""

import argparse
import cProfile
import os
import pstats
from collections import defaultdict

from blackjack.engine.rules import parse_rules
from blackjack.engine.simulate import simulate
from blackjack.engine.strategy import basic_strategy


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.benchmarks.simulator", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rules", default="Vegas Strip")
    parser.add_argument("--rounds", type=int, default=300_000, help="rounds on one process (twice on two)")
    parser.add_argument("--profile", action="store_true", help="also profile a one-process run")
    args = parser.parse_args()
    rules = parse_rules(args.rules)
    basic_strategy(rules)  # computed once, outside the timings
    print(f"rules: {rules.summary()}   cores: {os.cpu_count()}   load average before: {_load()}")
    single = simulate(rules, args.rounds, seed="benchmark")
    _report("1 process", single)
    double = simulate(rules, 2 * args.rounds, seed="benchmark", processes=2)
    _report("2 processes", double)
    print(f"scaling    : {double['rounds_per_second'] / single['rounds_per_second']:.2f}x (wall clock)")
    print(f"load average after: {_load()}")
    if args.profile:
        _profile(rules, min(args.rounds, 100_000))


def _report(label: str, result: dict) -> None:
    # Rounds per CPU second (the process and its workers) shows the speed of one core even when other work on
    # the machine slows the wall clock down.
    print(
        f"{label:<11}: {result['rounds_per_second']:>9,.0f} rounds/s wall clock, "
        f"{result['rounds_per_cpu_second']:>9,.0f} rounds per CPU second ({result['rounds']:,} rounds)"
    )


def _profile(rules, rounds: int) -> None:
    profiler = cProfile.Profile()
    profiler.runcall(simulate, rules, rounds, "profile")
    stats = pstats.Stats(profiler)
    by_module: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, own_time, _, _) in stats.stats.items():
        by_module[_module_of(filename)] += own_time
    total = sum(by_module.values())
    print(f"\nprofile of {rounds:,} rounds on one process (own time per module, under cProfile):")
    for module, seconds in sorted(by_module.items(), key=lambda item: -item[1]):
        print(f"  {module:<28} {seconds:6.2f} s  {100 * seconds / total:5.1f}%")
    print("\nfunctions with the most own time:")
    stats.sort_stats("tottime").print_stats(12)


def _module_of(filename: str) -> str:
    parts = filename.replace("\\", "/").split("/")
    if "engine" in parts:
        return "blackjack/engine/" + parts[-1]
    return "python builtins and stdlib"


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
