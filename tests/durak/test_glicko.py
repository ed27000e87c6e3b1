"""Glicko-2 against the worked example of Glickman's paper, and the pairwise scores of a Durak game."""

import pytest

from durak.glicko import Rating, game_results, update


def test_glickmans_worked_example():
    player = Rating(1500, 200, 0.06)
    results = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]
    new = update(player, results)
    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert new.deviation == pytest.approx(151.52, abs=0.01)
    assert new.volatility == pytest.approx(0.05999, abs=0.00001)


def test_a_period_without_games_only_widens_the_deviation():
    new = update(Rating(1600, 50, 0.06), [])
    assert new.rating == 1600
    assert new.deviation == pytest.approx((50**2 + (0.06 * 173.7178) ** 2) ** 0.5, rel=1e-9)


def test_scores_of_a_game():
    assert game_results(3, 1) == {0: [(1, 1.0)], 1: [(0, 0.0), (2, 0.0)], 2: [(1, 1.0)]}
    assert game_results(2, None) == {0: [(1, 0.5)], 1: [(0, 0.5)]}
