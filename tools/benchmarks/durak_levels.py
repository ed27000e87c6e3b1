"""Durak bot levels against each other and against random play: two-player fool rates with 95% intervals.

    .venv/bin/python -m tools.benchmarks.durak_levels [--games 24] [--variant podkidnoy] [--processes 2]
        [--pair hard:normal ...]

For each pair of levels (`durak.bot.LEVELS`, and `random`: a uniformly random legal action), plays `--games`
two-player games: `--games / 2` provably fair deals (`durak.engine.shuffled_deck`, seeds fixed per pair so
runs repeat), each played twice with the seats swapped, so neither side gets the better cards. Each bot
remembers the cards players picked up (`durak.bots.knowledge`), as `durak.bot.play` does. Prints, per level,
its fool rate against each opponent (the share of games it was left holding cards) with a Wilson 95%
interval, the draws, and the hard level's CPU time per decision. `--pair` plays only the pairs given (e.g.
`hard:normal`, with more games, to compare two versions of a bot). Figures only.
"""

import argparse
import hashlib
import math
import os
import random
import time
from multiprocessing import Pool

from durak.bot import LEVELS, actor, choose
from durak.bots import knowledge
from durak.engine import DurakRules, apply, legal_actions, new_game, shuffled_deck
from durak.engine.rules import VARIANTS

RANDOM = "random"
OPPONENTS = (*LEVELS, RANDOM)


def pairs() -> list[tuple[str, str]]:
    """Every level against every other level and against random play."""
    return [(a, b) for i, a in enumerate(LEVELS) for b in OPPONENTS[i + 1 :]]


def play_game(
    deck: list[str], levels: tuple[str, str], rng: random.Random, variant: str, timings: list
) -> int:
    """One two-player game, `levels[seat]` at each seat; the fool's seat, or -1 for a draw. Appends the
    CPU seconds of each hard decision to `timings` (the process's, so other work on a shared machine does
    not count)."""
    state = new_game(DurakRules(players=2, variant=variant), deck)
    seen = knowledge.start(state)
    while (player := actor(state)) is not None:
        level = levels[player]
        if level == RANDOM:
            action = rng.choice(legal_actions(state, player))
        else:
            started = time.process_time()
            action = choose(state, player, rng, level, seen)
            if level == "hard":
                timings.append(time.process_time() - started)
        after = apply(state, action)
        seen = knowledge.observe(seen, state, action, after)
        state = after
    return -1 if state.fool is None else state.fool


def run(task: tuple[str, str, str, int, int]) -> dict:
    """Deals `start` to `stop` of the pair: each side's fools, the draws and the hard decisions' times."""
    first, second, variant, start, stop = task
    label = f"{first}:{second}:{variant}"
    server_seed = hashlib.sha256(label.encode()).hexdigest()
    fools = {first: 0, second: 0}
    draws, timings = 0, []
    for nonce in range(start, stop):
        deck = shuffled_deck(server_seed=server_seed, client_seed="durak-levels", nonce=nonce)
        for swap in (False, True):
            levels = (second, first) if swap else (first, second)
            fool = play_game(deck, levels, random.Random(f"{label}:{nonce}:{swap}"), variant, timings)
            if fool < 0:
                draws += 1
            else:
                fools[levels[fool]] += 1
    return {
        "pair": (first, second),
        "games": 2 * (stop - start),
        "fools": fools,
        "draws": draws,
        "t": timings,
    }


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(successes: int, trials: int) -> str:
    low, high = wilson(successes, trials)
    return f"{successes / trials:5.1%} ({low:.0%}-{high:.0%})"


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.benchmarks.durak_levels", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=24, help="two-player games per pair (an even number)")
    parser.add_argument("--variant", choices=VARIANTS, default=VARIANTS[0])
    parser.add_argument("--processes", type=int, default=2, help="processes playing the games")
    parser.add_argument(
        "--pair", action="append", default=[], help="only this pair, as level:opponent (repeatable)"
    )
    args = parser.parse_args()
    chosen = pairs()
    if args.pair:
        wanted = {tuple(sorted(pair.split(":"))) for pair in args.pair}
        chosen = [pair for pair in chosen if tuple(sorted(pair)) in wanted]
        if len(chosen) != len(wanted):
            parser.error(f"a pair is two of {', '.join(OPPONENTS)}, like hard:normal")
    deals = max(1, args.games // 2)
    chunk = max(1, math.ceil(deals / (4 * args.processes)))
    tasks = [
        (first, second, args.variant, start, min(deals, start + chunk))
        for first, second in chosen
        for start in range(0, deals, chunk)
    ]
    # The slow pairs (hard) first, so the processes finish together.
    tasks.sort(key=lambda task: "hard" not in task[:2])
    print(f"{2 * deals:,} two-player {args.variant} games per pair (each deal twice, seats swapped)")
    print(f"cores {os.cpu_count()}, processes {args.processes}, load average {os.getloadavg()[0]:.1f}")
    started = time.perf_counter()
    totals: dict[tuple[str, str], dict] = {}
    timings: list[float] = []
    with Pool(args.processes) as pool:
        for result in pool.imap_unordered(run, tasks):
            total = totals.setdefault(result["pair"], {"games": 0, "draws": 0, "fools": {}})
            total["games"] += result["games"]
            total["draws"] += result["draws"]
            for level, count in result["fools"].items():
                total["fools"][level] = total["fools"].get(level, 0) + count
            timings += result["t"]
    _report(totals, timings)
    print(f"total {time.perf_counter() - started:.0f} s wall clock")


def _report(totals: dict[tuple[str, str], dict], timings: list[float]) -> None:
    print("\nFool rate of the row's level against the column's (95% interval); draws after the slash")
    print(f"| {'level':<6} | " + " | ".join(f"{opponent:<23}" for opponent in OPPONENTS) + " |")
    print("| --- " * (len(OPPONENTS) + 1) + "|")
    for level in LEVELS:
        cells = []
        for opponent in OPPONENTS:
            total = totals.get((level, opponent)) or totals.get((opponent, level))
            if opponent == level or total is None:
                cells.append(f"{'-':<23}")
                continue
            cell = f"{rate(total['fools'][level], total['games'])} / {total['draws'] / total['games']:.0%}"
            cells.append(f"{cell:<23}")
        print(f"| {level:<6} | " + " | ".join(cells) + " |")
    if timings:
        timings.sort()
        print(
            f"\nhard: {len(timings):,} decisions, CPU time mean {1000 * sum(timings) / len(timings):.0f} ms, "
            f"median {1000 * timings[len(timings) // 2]:.0f} ms, 95th percentile "
            f"{1000 * timings[int(0.95 * len(timings))]:.0f} ms, max {1000 * timings[-1]:.0f} ms"
        )


if __name__ == "__main__":
    main()
