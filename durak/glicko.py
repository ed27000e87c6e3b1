"""Glicko-2 (Mark Glickman's published algorithm, "Example of the Glicko-2 system", 2013), pure Python.

One game is one rating period. A Durak game is scored pairwise: every player who went out scores 1 against
the fool and the fool 0; in a draw (no fool) every pair scores 0.5; pairs of players who both went out are
not compared. Bots carry no rating: `durak.services.rate` scores players against players only.
"""

import math
from dataclasses import dataclass

SCALE = 173.7178
#: The system constant: how much the volatility may change in a period (Glickman suggests 0.3 to 1.2).
TAU = 0.5
EPSILON = 0.000001


@dataclass(frozen=True, slots=True)
class Rating:
    rating: float = 1500.0
    deviation: float = 350.0
    volatility: float = 0.06


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def update(player: Rating, results: list[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """The player's rating after one period with `results` (opponent's rating before the period, score 0, 0.5
    or 1). Without results only the deviation grows."""
    mu, phi, sigma = (player.rating - 1500.0) / SCALE, player.deviation / SCALE, player.volatility
    if not results:
        return Rating(player.rating, min(350.0, math.sqrt(phi * phi + sigma * sigma) * SCALE), sigma)
    terms = []
    for opponent, score in results:
        mu_j, phi_j = (opponent.rating - 1500.0) / SCALE, opponent.deviation / SCALE
        terms.append((_g(phi_j), _expected(mu, mu_j, phi_j), score))
    v = 1.0 / sum(g * g * e * (1.0 - e) for g, e, _ in terms)
    delta = v * sum(g * (s - e) for g, e, s in terms)
    new_sigma = _volatility(phi, sigma, v, delta, tau)
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * sum(g * (s - e) for g, e, s in terms)
    return Rating(new_mu * SCALE + 1500.0, new_phi * SCALE, new_sigma)


def _volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility, by the Illinois algorithm on f(x) = 0."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (x - a) / (
            tau * tau
        )

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def game_results(seats: int, fool: int | None) -> dict[int, list[tuple[int, float]]]:
    """Per seat, its (opponent, score) pairs in a game of `seats` players with this fool (None: a draw)."""
    results: dict[int, list[tuple[int, float]]] = {seat: [] for seat in range(seats)}
    for seat in range(seats):
        for other in range(seats):
            if other == seat:
                continue
            if fool is None:
                results[seat].append((other, 0.5))
            elif seat == fool:
                results[seat].append((other, 0.0))
            elif other == fool:
                results[seat].append((other, 1.0))
    return results
