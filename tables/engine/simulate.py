"""Simulate basic-strategy play with the live round code and report the house edge.

    python -m tables.engine.simulate --rules "Vegas Strip" --rounds 1000000 --seed 1 [--processes 2] [--json]

Every round is played by `round.new_round` and `round.apply_in_place`, the code that runs the live tables, on
real provably fair shoes (`shoe.shuffled_shoe`), by `strategy.basic_strategy` for the rules. Each of `--seats`
seats bets `BET` chips a round, declines insurance and even money, and takes early surrender when basic
strategy says so. A shoe is reshuffled when the cut card is reached (`rules.penetration`; 0 deals every round
from a fresh shoe).

Determinism: the rounds are cut into chunks of `CHUNK_ROUNDS`; chunk k plays its shoes from the server seed
SHA-256("simulate:{seed}:{k}") with client seed "simulate" and nonces 0, 1, 2, ... Every figure is summed over
chunks in integers, so the same seed gives the same figures whatever the number of processes. A round that
runs out of cards (possible only with many seats on a small shoe) is voided, not counted, and the next round
starts a fresh shoe; `voided_rounds` reports how many.

House edge: the players' net loss as a percentage of the initial bets (positive favours the house). Its
standard error comes from the per-round results (seats of one round are summed first, as they are correlated).
"""

import argparse
import hashlib
import json
import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields
from typing import Any

from . import shoe as shoe_module
from .cards import is_blackjack
from .errors import EngineError
from .round import RoundState, allowed_actions, apply_in_place, new_round
from .rules import RuleSet, parse_rules
from .strategy import Strategy, basic_strategy

BET = 100
CHUNK_ROUNDS = 20_000
CLIENT_SEED = "simulate"
MAX_SEATS = 7


@dataclass
class Tally:
    """Integer sums over rounds; two tallies add up exactly, in any order."""

    rounds: int = 0
    voided_rounds: int = 0
    shoes: int = 0
    hands: int = 0
    net: int = 0  # chips won by the players (negative: the house won)
    net_squares: int = 0  # sum over rounds of (the round's net over all seats) squared
    wagered: int = 0  # every chip staked: bets, doubles, splits, insurance
    naturals: int = 0
    dealer_blackjacks: int = 0
    doubles: int = 0
    splits: int = 0
    surrenders: int = 0

    def add(self, other: "Tally") -> None:
        for field in fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


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
    if isinstance(rules, str):
        rules = parse_rules(rules)
    if type(rounds) is not int or rounds < 1:
        raise ValueError("rounds must be a positive integer")
    if type(processes) is not int or processes < 1:
        raise ValueError("processes must be a positive integer")
    if type(seats) is not int or not 1 <= seats <= MAX_SEATS:
        raise ValueError(f"seats must be 1 to {MAX_SEATS}")
    strategy = basic_strategy(rules)
    chunks = [
        (str(seed), index, min(CHUNK_ROUNDS, rounds - start), seats)
        for index, start in enumerate(range(0, rounds, CHUNK_ROUNDS))
    ]
    total = Tally()
    started = time.perf_counter()
    for tally in _run_chunks(strategy, chunks, processes):
        total.add(tally)
        if progress is not None:
            progress(total.rounds)
    elapsed = time.perf_counter() - started
    return summary(rules, total, seats, elapsed)


def summary(rules: RuleSet, tally: Tally, seats: int, elapsed: float) -> dict[str, Any]:
    """The figures of a tally: house edge and its standard error in percent of the initial bets, and rates."""
    n = tally.rounds
    unit = seats * BET  # the initial bets of one round
    mean = tally.net / (n * unit)
    variance = max(tally.net_squares / (n * unit * unit) - mean * mean, 0.0)
    return {
        "rounds": n,
        "seats": seats,
        "house_edge": -100 * mean,
        "stderr": 100 * math.sqrt(variance / n),
        "natural_rate": tally.naturals / tally.hands,
        "rounds_per_second": n / elapsed if elapsed > 0 else None,
        "rules": rules.to_dict(),
        "rules_summary": rules.summary(),
        "std_per_round": math.sqrt(variance),
        "dealer_blackjack_rate": tally.dealer_blackjacks / n,
        "double_rate": tally.doubles / tally.hands,
        "split_rate": tally.splits / tally.hands,
        "surrender_rate": tally.surrenders / tally.hands,
        "wagered_per_initial_bet": tally.wagered / (tally.hands * BET),
        "shoes": tally.shoes,
        "voided_rounds": tally.voided_rounds,
        "seconds": elapsed,
    }


def _run_chunks(strategy: Strategy, chunks: list[tuple], processes: int) -> Iterator[Tally]:
    if processes == 1 or len(chunks) == 1:
        for chunk in chunks:
            yield play_chunk(strategy, *chunk)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=min(processes, len(chunks)),
        mp_context=context,
        initializer=_set_worker_strategy,
        initargs=(strategy,),
    ) as pool:
        yield from pool.map(_worker_chunk, chunks)


_worker_strategy: Strategy | None = None


def _set_worker_strategy(strategy: Strategy) -> None:
    global _worker_strategy
    _worker_strategy = strategy


def _worker_chunk(chunk: tuple) -> Tally:
    return play_chunk(_worker_strategy, *chunk)


def play_chunk(strategy: Strategy, seed: str, index: int, rounds: int, seats: int) -> Tally:
    """Play one chunk of rounds on its own shoes (see the module docstring)."""
    rules = strategy.rules
    decide = strategy.decide
    server_seed = hashlib.sha256(f"simulate:{seed}:{index}".encode()).hexdigest()
    cut = shoe_module.cut_card_index(rules.decks, rules.penetration)
    numbers = list(range(1, seats + 1))
    bets = [{"action": "bet", "seat": number, "amount": BET} for number in numbers]
    deal = {"action": "deal"}
    tally = Tally()
    cards: tuple[str, ...] = ()
    position = 0
    fresh = True
    while tally.rounds < rounds:
        if fresh or cut is None or position >= cut:
            cards = tuple(
                shoe_module.shuffled_shoe(
                    server_seed=server_seed, client_seed=CLIENT_SEED, decks=rules.decks, nonce=tally.shoes
                )
            )
            tally.shoes += 1
            position = 0
        state = new_round(rules=rules, shoe=cards, position=position, seats=numbers, min_bet=BET, max_bet=BET)
        try:
            for bet in bets:
                apply_in_place(state, bet)
            apply_in_place(state, deal)
            if state.phase == "insurance":
                _answer_offers(strategy, state)
            while state.phase == "playing":
                number, hand_index = state.turn
                hand = state.seats[number].hands[hand_index]
                action = decide(hand.cards, state.dealer_cards[0], allowed_actions(state, number))
                apply_in_place(state, {"action": action, "seat": number, "hand": hand_index})
        except EngineError as error:
            if error.code != "shoe_exhausted" or fresh:
                raise
            tally.voided_rounds += 1
            fresh = True
            continue
        fresh = False
        position = state.position
        _count(tally, state)
    return tally


def _answer_offers(strategy: Strategy, state: RoundState) -> None:
    """Decline insurance and even money; take early surrender when basic strategy prefers it."""
    up = state.dealer_cards[0]
    for number, seat in list(state.seats.items()):
        for offer in list(seat.offers):
            accept = offer == "surrender" and strategy.surrenders_early(seat.hands[0].cards, up)
            apply_in_place(state, {"action": offer, "seat": number, "accept": accept})


def _count(tally: Tally, state: RoundState) -> None:
    net = 0
    for seat in state.seats.values():
        net += seat.returned - seat.stake
        tally.wagered += seat.stake
        hands = seat.hands
        first = hands[0]
        if len(hands) > 1:
            tally.splits += 1
        if len(first.cards) == 2 and not first.split and first.hard == 11 and first.has_ace:
            tally.naturals += 1
        for hand in hands:
            if hand.doubled:
                tally.doubles += 1
            if hand.result == "surrender":
                tally.surrenders += 1
    tally.rounds += 1
    tally.hands += len(state.seats)
    tally.net += net
    tally.net_squares += net * net
    if is_blackjack(state.dealer_cards):
        tally.dealer_blackjacks += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tables.engine.simulate",
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
    except EngineError as error:
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
            f"{result['shoes']:,} shoes, {result['voided_rounds']} voided)",
            f"House edge:     {result['house_edge']:+.3f}% ± {result['stderr']:.3f}% (one standard error)",
            f"Naturals:       {100 * result['natural_rate']:.3f}% of hands",
            f"Std per round:  {result['std_per_round']:.3f} initial bets",
            f"Doubles:        {100 * result['double_rate']:.2f}% of hands",
            f"Splits:         {100 * result['split_rate']:.2f}% of hands",
            f"Speed:          {result['rounds_per_second']:,.0f} rounds/s ({result['seconds']:.1f} s)",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
