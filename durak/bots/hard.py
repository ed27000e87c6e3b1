"""The `hard` policy: determinized Monte Carlo (information-set sampling) over the cards it cannot see.

For each of `WORLDS` worlds it deals the unseen cards at random where they may lie (`knowledge.sample`:
the other hands' unknown places and the talon, the trump card kept under it, the cards known picked up kept
in their holders' hands), then plays every candidate action out to the game's end with the `normal` policy
for every seat, and keeps the candidate with the best total score (1 for going out, 1/2 for a draw, 0 for the
fool) over the same worlds (common random numbers). Ties and near-ties go to the normal policy's choice: a
candidate must beat it by more than `MARGIN` of a game per world and more than `MIN_LEAD` games in all.

Candidates: the normal policy's choice, then at most `CANDIDATES` others: on a lead, the cheapest card of
each suit and of each rank held twice; adding, every card that may be added and `done`; defending, `take`,
each transfer, and for each unbeaten card its cheapest beater of its suit and its cheapest trump.

Cheap where the choice is clear: a defender who cannot beat a card and cannot transfer takes at once
(beating the others first only gives the attackers more ranks); after `RACE_WORLDS` worlds, a candidate
trailing the normal choice by more than `RACE_GAP` of a game per world is dropped, and once none is left the
normal choice stands.

The cost is bounded by moves, not by the clock (so it stays deterministic): worlds are dealt until `WORLDS`
or until the play-outs have made `MOVES` moves, each play-out at most `ROLLOUT_BOUTS` bouts (a longer one
counts as a draw).
Given the same `rng` state it decides the same; it reads nothing of the state that its seat cannot see.
"""

import random
from typing import Any

from durak.engine.cards import card_key
from durak.engine.game import apply, legal_actions
from durak.engine.state import GameState

from . import actor, knowledge, normal
from .knowledge import Seen

#: Worlds dealt per decision, at most.
WORLDS = 32
#: Moves played out per decision: no new world is dealt once this many are spent (the last one may pass it
#: by one world's play-outs). This bounds a decision's time whatever the position.
MOVES = 1500
#: The fewest worlds that may overrule the normal choice: if the first world's play-out of it shows the
#: budget cannot deal this many (long games ahead, many candidates), the normal choice stands.
MIN_WORLDS = 8
#: Worlds dealt before candidates trailing the normal choice are dropped.
RACE_WORLDS = 4
#: A candidate trailing the normal choice by more than this much of a game per world is dropped.
RACE_GAP = 0.25
#: Candidates besides the normal policy's choice, at most.
CANDIDATES = 5
#: A candidate replaces the normal policy's choice only if its total beats it by more than this per world,
MARGIN = 0.05
#: and by more than this many games in all (few worlds are thin evidence: the normal choice stands).
MIN_LEAD = 2.0
#: A play-out longer than this many bouts counts as a draw (bot games last 10-30 bouts).
ROLLOUT_BOUTS = 60


def choose(
    state: GameState, player: int, options: list[dict[str, Any]], rng: random.Random, seen: Seen | None = None
) -> dict[str, Any]:
    seen = knowledge.consistent(seen if seen is not None else knowledge.guess(state), state, player)
    default = normal.choose(state, player, options, None, seen)
    if _must_take(state, options):
        return default
    candidates = [default, *(c for c in _candidates(state, options) if c != default)][: CANDIDATES + 1]
    if len(candidates) == 1:
        return default
    totals = [0.0] * len(candidates)
    alive = list(range(len(candidates)))
    worlds = moves = 0
    while worlds < WORLDS and moves < MOVES and len(alive) > 1:
        world = knowledge.sample(state, player, seen, rng)
        worlds += 1
        for index in alive:
            end, played = _play_out(apply(world, candidates[index]))
            if worlds == 1 and index == 0 and played * len(candidates) * MIN_WORLDS > MOVES:
                return default
            totals[index] += _score(end, player)
            moves += played
        if worlds >= RACE_WORLDS:
            floor = totals[0] - RACE_GAP * worlds
            alive = [index for index in alive if index == 0 or totals[index] >= floor]
    best = max(alive, key=lambda index: (totals[index], -index))
    if totals[best] > totals[0] + max(MARGIN * worlds, MIN_LEAD):
        return candidates[best]
    return default


def _must_take(state: GameState, options: list[dict[str, Any]]) -> bool:
    """Whether a defender holds no card beating some unbeaten card and cannot transfer: they take in the end
    anyway (and the normal choice is to take now)."""
    kinds = {option["action"] for option in options}
    if "take" not in kinds or "transfer" in kinds:
        return False
    beatable = {option["target"] for option in options if option["action"] == "beat"}
    return any(defence is None and attack not in beatable for attack, defence in state.table)


def _candidates(state: GameState, options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    trump_suit = state.trump_suit

    def key(option: dict[str, Any]) -> tuple:
        return card_key(option["card"], trump_suit) if "card" in option else (False, -1, -1)

    kinds = {option["action"] for option in options}
    if "take" in kinds:  # defending
        chosen = [option for option in options if option["action"] in ("take", "transfer")]
        beats = sorted((o for o in options if o["action"] == "beat"), key=key)
        picked: set[tuple[str, bool]] = set()
        for option in beats:
            kind = (option["target"], option["card"][1] == trump_suit)
            if kind not in picked:
                picked.add(kind)
                chosen.append(option)
        return chosen
    attacks = sorted((o for o in options if o["action"] == "attack"), key=key)
    if state.table:  # adding: done first, then the cheapest cards
        return [o for o in options if o["action"] == "done"] + attacks
    leads: list[dict[str, Any]] = []
    suits: set[str] = set()
    ranks: dict[str, int] = {}
    for option in attacks:
        ranks[option["card"][0]] = ranks.get(option["card"][0], 0) + 1
    for option in attacks:
        rank, suit = option["card"]
        if suit not in suits or (ranks[rank] > 1 and rank not in {o["card"][0] for o in leads}):
            suits.add(suit)
            leads.append(option)
    return leads


def _play_out(state: GameState) -> tuple[GameState, int]:
    """The normal policy plays every seat to the game's end (or `ROLLOUT_BOUTS` more bouts); the last
    state and the number of moves."""
    stop, moves = state.bout + ROLLOUT_BOUTS, 0
    while not state.finished and state.bout < stop:
        player = actor(state)
        assert player is not None  # a game in play has a seat to act
        options = legal_actions(state, player)
        action = options[0] if len(options) == 1 else normal.choose(state, player, options)
        state = apply(state, action)
        moves += 1
    return state, moves


def _score(state: GameState, player: int) -> float:
    if not state.finished or state.fool is None:
        return 0.5
    return 0.0 if state.fool == player else 1.0
