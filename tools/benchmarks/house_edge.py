"""House edge of every preset and the effect of each rule change: simulated, computed and published.

    .venv/bin/python -m tools.benchmarks.house_edge [--rounds 1000000] [--paired 400000] [--processes 2]

For each preset: the simulated house edge (`simulate.simulate`, the preset's own penetration) with its
standard error, beside the computed one (`Strategy.house_edge`). For each rule change from "Vegas Strip": the
paired simulated effect (`simulate.compare`, fresh shoes) with its standard error, the computed effect and the
published figure (shared/reference/blackjack-facts.md). A change of deck count cannot be paired: its standard
error is that of two independent runs. Figures only, no assertions; the tests hold them to tolerances.
"""

import argparse
import dataclasses

from blackjack.engine.rules import PRESETS, RuleSet
from blackjack.engine.simulate import compare, simulate
from blackjack.engine.strategy import basic_strategy

EFFECTS = [
    ("6:5", {"blackjack_payout": "6:5"}, "+1.36..1.39"),
    ("1:1", {"blackjack_payout": "1:1"}, "+2.27"),
    ("H17", {"dealer_hits_soft_17": True}, "+0.20"),
    ("no DAS", {"double_after_split": False}, "+0.14"),
    ("double 10-11", {"double_on": "10-11"}, "+0.20"),
    ("double 9-11", {"double_on": "9-11"}, "+0.11"),
    ("no surrender", {"surrender": "none"}, "+0.08"),
    ("no hole card", {"dealer_peek": False}, "+0.11"),
    ("resplit aces", {"resplit_aces": True}, "-0.07"),
    ("hit split aces", {"hit_split_aces": True}, "-0.18"),
    ("one deck", {"decks": 1}, "-0.50"),
]


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.benchmarks.house_edge", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rounds", type=int, default=1_000_000, help="rounds per preset")
    parser.add_argument("--paired", type=int, default=400_000, help="paired rounds per rule change")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seed", default="house-edge")
    args = parser.parse_args()

    print(f"{'preset':<18}{'simulated %':>20}{'computed %':>12}")
    for name, rules in PRESETS.items():
        result = simulate(rules, args.rounds, args.seed, args.processes)
        print(
            f"{name:<18}{result['house_edge']:>+11.3f} ± {result['stderr']:.3f}"
            f"{result['computed_house_edge']:>+12.3f}"
        )

    base = dataclasses.replace(RuleSet(), penetration=0)
    computed_base = basic_strategy(base).house_edge()
    print(f"\n{'change from Vegas Strip':<24}{'simulated':>18}{'computed':>10}{'published':>13}")
    for name, change, published in EFFECTS:
        variant = dataclasses.replace(base, **change)
        result = compare(base, variant, args.paired, f"{args.seed}:{name}", args.processes)
        computed = basic_strategy(variant).house_edge() - computed_base
        print(
            f"{name:<24}{result['effect']:>+9.3f} ± {result['stderr']:.3f}{computed:>+10.3f}{published:>13}"
        )


if __name__ == "__main__":
    main()
