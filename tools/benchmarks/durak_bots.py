"""Durak bots against each other: fool and first-out rates by seat, and games per second.

    .venv/bin/python -m tools.benchmarks.durak_bots [--games 10000] [--players 2 3 4 5 6]
        [--variants podkidnoy perevodnoy passport] [--attack all_sides] [--limit six] [--processes 1]
        [--level normal]

Plays `--games` bot games (`durak.bot`, every seat at `--level`; the levels against each other:
`durak_levels.py`) per variant and player count, each dealt from a provably fair deck
(`durak.engine.shuffled_deck`, seeds fixed per configuration so runs repeat). Seats are counted from the first
attacker of the game (0 = first attacker, 1 = first defender, ...; the lowest trump leads each game, the
deal itself is symmetric). Prints per configuration: games per second (one process), the draw rate, the mean
number of bouts, and for each seat the fool rate (left holding cards: the loser) and the first-out rate (the
first to leave alone: the winner). Passport games also print how many players showed their passport cards
per game. Figures only.
"""

import argparse
import hashlib
import os
import random
import time
from multiprocessing import Pool

from durak.bot import DEFAULT_LEVEL, LEVELS, actor, choose, play
from durak.bots import knowledge
from durak.engine import DurakRules, apply, new_game, shuffled_deck
from durak.engine.rules import ATTACK_TYPES, LIMITS, VARIANTS


def run(config: tuple[str, int, str, str, int, str]) -> dict:
    variant, players, attack, limit, games, level = config
    rules = DurakRules(players=players, variant=variant, attack=attack, limit=limit)
    label = f"{variant}:{players}:{attack}:{limit}"
    server_seed = hashlib.sha256(label.encode()).hexdigest()
    rng = random.Random(label)
    fools, first_out = [0] * players, [0] * players
    draws = bouts = promotions = 0
    started = time.perf_counter()
    for nonce in range(games):
        deck = shuffled_deck(server_seed=server_seed, client_seed="durak-bots", nonce=nonce)
        state = new_game(rules, deck)
        first = state.attacker
        seen = knowledge.start(state)
        while not state.out:
            action = choose(state, actor(state), rng, level, seen)
            after = apply(state, action)
            seen, state = knowledge.observe(seen, state, action, after), after
        if len(state.out) == 1:  # players leaving together share no first place
            first_out[(state.out[0] - first) % players] += 1
        state, _ = play(state, rng, level, seen)
        bouts += state.bout
        promotions += len(state.promoted)
        if state.fool is None:
            draws += 1
        else:
            fools[(state.fool - first) % players] += 1
    seconds = time.perf_counter() - started
    return {
        "config": config,
        "games_per_second": games / seconds,
        "draws": draws / games,
        "bouts": bouts / games,
        "promotions": promotions / games,
        "fools": [count / games for count in fools],
        "first_out": [count / games for count in first_out],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.benchmarks.durak_bots", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=10_000, help="games per variant and player count")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5, 6])
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--attack", choices=ATTACK_TYPES, default="all_sides")
    parser.add_argument("--limit", choices=LIMITS, default="six")
    parser.add_argument("--processes", type=int, default=1, help="configurations played in parallel")
    parser.add_argument("--level", choices=LEVELS, default=DEFAULT_LEVEL)
    args = parser.parse_args()
    configs = [
        (v, p, args.attack, args.limit, args.games, args.level) for v in args.variants for p in args.players
    ]
    print(f"{args.games:,} games per configuration at {args.level}, attack {args.attack}, limit {args.limit}")
    print(f"cores {os.cpu_count()}, processes {args.processes}, load average {os.getloadavg()[0]:.1f}")
    print("seats from the first attacker: 0 = first attacker, 1 = first defender, ...")
    started = time.perf_counter()
    with Pool(args.processes) as pool:
        for result in pool.imap(run, configs):
            _report(result)
    print(f"total {time.perf_counter() - started:.0f} s wall clock")


def _report(result: dict) -> None:
    variant, players, *_ = result["config"]
    fools = " ".join(f"{rate:6.1%}" for rate in result["fools"])
    first_out = " ".join(f"{rate:6.1%}" for rate in result["first_out"])
    extra = f"  shown passports/game {result['promotions']:.2f}" if variant == "passport" else ""
    print(
        f"{variant:<10} {players} players: {result['games_per_second']:5.0f} games/s"
        f"  draws {result['draws']:5.1%}  bouts {result['bouts']:4.1f}{extra}"
    )
    print(f"    fool by seat     : {fools}")
    print(f"    first out by seat: {first_out}")


if __name__ == "__main__":
    main()
