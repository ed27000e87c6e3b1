"""House edge and rule effects, simulated and computed, against published figures.

Published figures (shared/reference/blackjack-facts.md; Wizard of Odds' house edge calculator and rule
variation tables; Griffin's rule-effect table as reproduced e.g. by thecolorofblackjack.com):

- "Vegas Strip" (6 decks, S17, double any two, DAS, late surrender, split to 4 hands, no resplit of aces,
  peek, 3:2): the rule-effect tables give -0.02 (one deck baseline) + 0.53 (six decks) - 0.13 (DAS) - 0.06
  (late surrender) = 0.32%; the same game with resplit aces is quoted at 0.26-0.29%. We use 0.31% with a
  source uncertainty of 0.03 points, far below the statistical tolerance of any simulation that fits the test
  budget.
- Rule effects (percentage points): 6:5 +1.36..+1.39, 1:1 +2.27, H17 +0.20, no DAS +0.14, double 10-11 only
  +0.20, 9-11 only +0.11, late surrender -0.08, no hole card +0.11, resplit aces -0.07, hit split aces -0.18,
  one deck instead of six -0.50.

Simulated figures are tested within 4 standard errors (their own, from the per-round results). Paired runs
(`simulate.compare`: the same shoes under both rule sets) resolve the 6:5 and H17 effects within the budget;
the others need millions of rounds and run only with BLACKJACK_LONG_STATS=1 (they take minutes). The computed
house edge (`Strategy.house_edge`) resolves every effect in a fraction of a second and is held to 0.02 points.
"""

import dataclasses
import math
import os

import pytest

from blackjack.engine import PRESETS, RuleSet
from blackjack.engine.simulate import compare, simulate
from blackjack.engine.strategy import basic_strategy

VEGAS = RuleSet()  # the "Vegas Strip" preset
VEGAS_FRESH = dataclasses.replace(VEGAS, penetration=0)
PUBLISHED_VEGAS_EDGE = 0.31
SOURCE_UNCERTAINTY = 0.03

# Rule change from "Vegas Strip" -> published effect on the house edge (percentage points).
PUBLISHED_EFFECTS = {
    "6:5": ({"blackjack_payout": "6:5"}, 1.375, 0.015),  # 1.36 .. 1.39
    "1:1": ({"blackjack_payout": "1:1"}, 2.27, 0.0),
    "H17": ({"dealer_hits_soft_17": True}, 0.20, 0.0),
    "no DAS": ({"double_after_split": False}, 0.14, 0.0),
    "double 10-11": ({"double_on": "10-11"}, 0.20, 0.0),
    "double 9-11": ({"double_on": "9-11"}, 0.11, 0.0),
    "no surrender": ({"surrender": "none"}, 0.08, 0.0),
    "no hole card": ({"dealer_peek": False}, 0.11, 0.0),
    "resplit aces": ({"resplit_aces": True}, -0.07, 0.0),
    "hit split aces": ({"hit_split_aces": True}, -0.18, 0.0),
    "one deck": ({"decks": 1}, -0.50, 0.0),
}
COMPUTED_TOLERANCE = 0.02  # the largest miss is 0.014 (one deck; double 9-11)

LONG = os.environ.get("BLACKJACK_LONG_STATS") == "1"


def natural_probability(decks: int) -> float:
    return 2 * (4 * decks) * (16 * decks) / ((52 * decks) * (52 * decks - 1))


def within(value: float, published: float, spread: float, stderr: float, sigmas: float = 4.0) -> bool:
    """`value` is within `sigmas` standard errors of the published range published +- spread."""
    return abs(value - published) <= spread + sigmas * stderr


@pytest.mark.slow
def test_simulated_vegas_strip_fresh_shoe_house_edge_and_natural_rate():
    rounds = 100_000
    result = simulate(VEGAS_FRESH, rounds, seed="vegas", processes=2)
    assert result["rounds"] == rounds
    assert result["stderr"] == pytest.approx(100 * 1.14 / math.sqrt(rounds), rel=0.1)
    assert within(result["house_edge"], PUBLISHED_VEGAS_EDGE, SOURCE_UNCERTAINTY, result["stderr"])
    # Natural rate: the exact formula, within 4 standard errors of a proportion.
    p = natural_probability(6)
    assert p == pytest.approx(0.047489, abs=1e-6)
    assert abs(result["natural_rate"] - p) <= 4 * math.sqrt(p * (1 - p) / rounds)


@pytest.mark.slow
def test_simulated_vegas_strip_with_its_cut_card():
    # The preset as played (75% penetration): a million rounds resolve the edge to about 0.11 points. The cut
    # card costs the player a few hundredths of a point more than the fresh-shoe figure, inside the tolerance.
    result = simulate(VEGAS, 1_000_000, seed="vegas cut card", processes=2)
    assert result["stderr"] < 0.12
    assert within(result["house_edge"], PUBLISHED_VEGAS_EDGE, SOURCE_UNCERTAINTY, result["stderr"])
    assert abs(result["house_edge"] - result["computed_house_edge"]) <= 4 * result["stderr"]


def test_paired_six_to_five_costs_three_tenths_of_every_paid_natural():
    # Exactly 0.3 bets per player natural the dealer does not match: for 6 decks
    # P(natural) * P(no dealer natural | player natural) * 0.3.
    exact = 100 * 0.3 * natural_probability(6) * (1 - 2 * 23 * 95 / (310 * 309))
    assert 1.35 < exact < 1.39
    result = compare(
        VEGAS_FRESH, dataclasses.replace(VEGAS_FRESH, blackjack_payout="6:5"), 20_000, seed="6:5"
    )
    _, published, spread = PUBLISHED_EFFECTS["6:5"]
    assert within(result["effect"], published, spread, result["stderr"])
    assert abs(result["effect"] - exact) <= 4 * result["stderr"]
    assert result["stderr"] < 0.06


@pytest.mark.slow
def test_paired_dealer_hits_soft_17():
    result = compare(
        VEGAS_FRESH, dataclasses.replace(VEGAS_FRESH, dealer_hits_soft_17=True), 160_000, "h17", 2
    )
    _, published, spread = PUBLISHED_EFFECTS["H17"]
    assert result["stderr"] < 0.06
    assert result["effect"] > 0
    assert within(result["effect"], published, spread, result["stderr"])
    # Both arms are fresh-shoe "Vegas Strip" games in their own right.
    assert within(
        result["base"]["house_edge"], PUBLISHED_VEGAS_EDGE, SOURCE_UNCERTAINTY, result["base"]["stderr"]
    )


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.skipif(not LONG, reason="minutes of simulation: set BLACKJACK_LONG_STATS=1")
@pytest.mark.parametrize("name", ["no DAS", "no surrender", "double 10-11"])
def test_long_paired_rule_effects(name):
    change, published, spread = PUBLISHED_EFFECTS[name]
    result = compare(VEGAS_FRESH, dataclasses.replace(VEGAS_FRESH, **change), 1_500_000, name, processes=2)
    assert within(result["effect"], published, spread, result["stderr"])


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.skipif(not LONG, reason="minutes of simulation: set BLACKJACK_LONG_STATS=1")
def test_long_one_deck_against_six():
    # Different shoes cannot be paired: two separate runs, 4 million rounds each.
    six = simulate(VEGAS, 4_000_000, seed="decks", processes=2)
    one = simulate(dataclasses.replace(VEGAS, decks=1), 4_000_000, seed="decks", processes=2)
    effect = one["house_edge"] - six["house_edge"]
    stderr = math.hypot(one["stderr"], six["stderr"])
    assert effect < 0
    assert within(effect, PUBLISHED_EFFECTS["one deck"][1], 0.0, stderr)


def test_computed_vegas_strip_house_edge():
    assert basic_strategy(VEGAS).house_edge() == pytest.approx(PUBLISHED_VEGAS_EDGE, abs=0.04)


@pytest.mark.parametrize("name", sorted(PUBLISHED_EFFECTS))
def test_computed_rule_effects_match_the_published_ones(name):
    change, published, spread = PUBLISHED_EFFECTS[name]
    effect = (
        basic_strategy(dataclasses.replace(VEGAS, **change)).house_edge() - basic_strategy(VEGAS).house_edge()
    )
    assert abs(effect - published) <= spread + COMPUTED_TOLERANCE, effect


def test_computed_presets_are_ordered_as_expected():
    edges = {name: basic_strategy(rules).house_edge() for name, rules in PRESETS.items()}
    assert edges["Vegas Strip"] < edges["Atlantic City"] < edges["Vegas Strip"] + 0.05  # 8 decks vs 6
    assert edges["Atlantic City"] < edges["Downtown"]  # H17, no surrender outweigh 2 decks
    assert edges["Single deck 6:5"] > edges["European"] > edges["Vegas Strip"]
