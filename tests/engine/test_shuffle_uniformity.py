"""Chi-square tests of the provably fair shuffle: orders of a few cards and cards at every position."""

import itertools
import math

import pytest

from blackjack.engine import new_deck_order, shuffled_shoe

SEED = "5e" * 32
# A fair shuffle fails a test at this level once in 10,000 runs; the seeds are fixed, so a run is repeatable.
P_MIN = 1e-4


def chi2_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for a chi-square variable with `df` degrees of freedom: Q(df/2, statistic/2),
    summed exactly (integer or half-integer shape) in log space."""
    y = statistic / 2
    if df % 2 == 0:
        terms = [-y + j * math.log(y) - math.lgamma(j + 1) for j in range(df // 2)]
        return math.fsum(math.exp(t) for t in terms)
    terms = [-y + (j + 0.5) * math.log(y) - math.lgamma(j + 1.5) for j in range(df // 2)]
    return math.erfc(math.sqrt(y)) + math.fsum(math.exp(t) for t in terms)


def chi_square(counts: list[int], expected: float) -> float:
    return sum((count - expected) ** 2 / expected for count in counts)


@pytest.mark.parametrize(
    ("statistic", "df", "p"),
    [
        # Textbook critical values (5% and 0.1%), and the median of chi2(2601), df (1 - 2 / (9 df))^3.
        (3.841, 1, 0.05),
        (18.307, 10, 0.05),
        (29.588, 10, 0.001),
        (49.728, 23, 0.001),
        (2600.33, 2601, 0.5),
    ],
)
def test_chi2_sf_matches_tables(statistic, df, p):
    assert chi2_sf(statistic, df) == pytest.approx(p, rel=0.01)


@pytest.mark.slow
def test_the_order_of_the_four_aces_is_uniform_over_all_24_permutations():
    aces = ["As", "Ah", "Ad", "Ac"]
    index = {order: k for k, order in enumerate(itertools.permutations(aces))}
    counts = [0] * 24
    shoes = 24 * 500
    for nonce in range(shoes):
        shoe = shuffled_shoe(server_seed=SEED, client_seed="perm", decks=1, nonce=nonce)
        counts[index[tuple(card for card in shoe if card[0] == "A")]] += 1
    p = chi2_sf(chi_square(counts, shoes / 24), 23)
    assert p > P_MIN, (p, counts)


@pytest.mark.slow
def test_every_card_is_equally_likely_at_every_position():
    cards = new_deck_order(1)
    column = {card: k for k, card in enumerate(cards)}
    table = [[0] * 52 for _ in range(52)]  # table[position][card]
    shoes = 52 * 200
    for nonce in range(shoes):
        shoe = shuffled_shoe(server_seed=SEED, client_seed="positions", decks=1, nonce=nonce)
        for position, card in enumerate(shoe):
            table[position][column[card]] += 1
    cells = [count for row in table for count in row]
    p = chi2_sf(chi_square(cells, shoes / 52), 51 * 51)
    assert p > P_MIN, p
    # Each position alone, and the first and last, which Fisher-Yates fills first and last.
    worst = min(chi2_sf(chi_square(row, shoes / 52), 51) for row in table)
    assert worst > P_MIN / 52, worst
