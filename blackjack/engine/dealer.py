"""Exact probabilities of the dealer's final total.

A shoe composition is a tuple of ten counts indexed by card value minus one: index 0 counts aces, index 1
twos, ..., index 9 every ten-valued card (T, J, Q, K). Suits never matter. `composition(decks)` builds a full
shoe and `remove(counts, *values)` takes cards out of it.

`dealer_distribution(up, counts, ...)` enumerates every way the dealer can complete a hand that shows `up`,
drawing without replacement from `counts` (which must not contain the upcard any more), and returns the
probability of each final outcome in `OUTCOMES` order: 17, 18, 19, 20, 21 (not a blackjack), blackjack, bust.
With `counts=None` the cards are drawn from an infinite deck (every rank 1/13, ten-valued 4/13).

`no_blackjack=True` conditions on the dealer not holding a blackjack, which is what the players at a peek
table know once the dealer has checked: the hole card is then not a ten under an ace, nor an ace under a ten.
Results are memoised on the remaining composition, so the ten upcards of a 6-deck shoe cost about 15 ms.
"""

from functools import cache

OUTCOMES = ("17", "18", "19", "20", "21", "blackjack", "bust")
BLACKJACK = 5
BUST = 6

Composition = tuple[int, ...]
Distribution = tuple[float, ...]

_INFINITE = (1 / 13,) * 9 + (4 / 13,)


def composition(decks: int) -> Composition:
    """The counts of a full shoe of `decks` decks."""
    return (4 * decks,) * 9 + (16 * decks,)


def remove(counts: Composition, *values: int) -> Composition:
    """`counts` with one card of each given value (1 = ace .. 10) taken out."""
    left = list(counts)
    for value in values:
        if left[value - 1] <= 0:
            raise ValueError(f"no card of value {value} left to remove")
        left[value - 1] -= 1
    return tuple(left)


def dealer_distribution(
    up: int, counts: Composition | None, *, hits_soft_17: bool, no_blackjack: bool = False
) -> Distribution:
    """Probabilities of the dealer's outcomes (see `OUTCOMES`) for upcard value `up` (1 = ace .. 10).

    `counts` is the composition the hole card and the draws come from (upcard already removed) or None for an
    infinite deck.
    """
    if not 1 <= up <= 10:
        raise ValueError(f"upcard value must be 1..10, got {up}")
    if len(_FINITE_MEMO) > _FINITE_MEMO_LIMIT:
        _FINITE_MEMO.clear()
    probabilities = _INFINITE if counts is None else _draw_probabilities(counts)
    result = [0.0] * len(OUTCOMES)
    excluded = _blackjack_hole(up) if no_blackjack else None
    for hole_index, p in enumerate(probabilities):
        if p == 0.0 or hole_index == excluded:
            continue
        hole = hole_index + 1
        if up + hole == 11 and (up == 1 or hole == 1):
            branch = _NATURAL
        elif counts is None:
            branch = _infinite_from(up + hole, up == 1 or hole == 1, hits_soft_17)
        else:
            hand = (up + hole, up == 1 or hole == 1)
            branch = _terminal(*hand, hits_soft_17) or _finite_from(
                _take(counts, hole_index), *hand, hits_soft_17
            )
        for k, q in enumerate(branch):
            result[k] += p * q
    if excluded is not None:
        kept = 1.0 - probabilities[excluded]
        result = [q / kept for q in result]
    return tuple(result)


def blackjack_probability(up: int, counts: Composition | None) -> float:
    """Probability that the dealer holding `up` has a blackjack (0 unless the upcard is an ace or a ten)."""
    hole = _blackjack_hole(up)
    if hole is None:
        return 0.0
    return (_INFINITE if counts is None else _draw_probabilities(counts))[hole]


def bust_probability(up: int, counts: Composition | None, *, hits_soft_17: bool) -> float:
    """Probability that the dealer busts, before the peek."""
    return dealer_distribution(up, counts, hits_soft_17=hits_soft_17)[BUST]


_NATURAL = tuple(1.0 if k == BLACKJACK else 0.0 for k in range(len(OUTCOMES)))


def _blackjack_hole(up: int) -> int | None:
    """Index of the hole card value that would give the dealer a blackjack."""
    if up == 1:
        return 9
    if up == 10:
        return 0
    return None


def _draw_probabilities(counts: Composition) -> tuple[float, ...]:
    total = sum(counts)
    if total <= 0:
        raise ValueError("the composition has no cards left")
    return tuple(c / total for c in counts)


def _take(counts: Composition, index: int) -> Composition:
    return (*counts[:index], counts[index] - 1, *counts[index + 1 :])


def _terminal(hard: int, has_ace: bool, hits_soft_17: bool) -> Distribution | None:
    """The outcome if the dealer stops on this hand, or None while the dealer must draw."""
    if hard > 21:
        return _BUST_ONLY
    soft = has_ace and hard <= 11
    best = hard + 10 if soft else hard
    if best < 17 or (best == 17 and soft and hits_soft_17):
        return None
    return _FINAL[best]


_BUST_ONLY = tuple(1.0 if k == BUST else 0.0 for k in range(len(OUTCOMES)))
_FINAL = {
    total: tuple(1.0 if k == total - 17 else 0.0 for k in range(len(OUTCOMES))) for total in range(17, 22)
}


def _finite_from(counts: Composition, hard: int, has_ace: bool, hits_soft_17: bool) -> Distribution:
    """Outcomes of a dealer hand that must still draw (hot path: final children are added inline)."""
    key = (counts, hard, has_ace, hits_soft_17)
    known = _FINITE_MEMO.get(key)
    if known is not None:
        return known
    total = sum(counts)
    finals = [0.0] * 7
    for index, count in enumerate(counts):
        if not count:
            continue
        p = count / total
        new_hard = hard + index + 1
        new_ace = has_ace or not index
        soft = new_ace and new_hard <= 11
        best = new_hard + 10 if soft else new_hard
        if best > 21:
            finals[BUST] += p
        elif best > 17 or (best == 17 and not (soft and hits_soft_17)):
            finals[best - 17] += p
        else:
            branch = _finite_from(
                (*counts[:index], count - 1, *counts[index + 1 :]), new_hard, new_ace, hits_soft_17
            )
            for k in (0, 1, 2, 3, 4, 6):
                finals[k] += p * branch[k]
    result = tuple(finals)
    _FINITE_MEMO[key] = result
    return result


# Memo of `_finite_from`, cleared when it grows past the limit (many rule sets must not exhaust memory).
_FINITE_MEMO: dict[tuple, Distribution] = {}
_FINITE_MEMO_LIMIT = 2_000_000


@cache
def _infinite_from(hard: int, has_ace: bool, hits_soft_17: bool) -> Distribution:
    stop = _terminal(hard, has_ace, hits_soft_17)
    if stop is not None:
        return stop
    result = [0.0] * len(OUTCOMES)
    for index, p in enumerate(_INFINITE):
        branch = _infinite_from(hard + index + 1, has_ace or index == 0, hits_soft_17)
        for k, q in enumerate(branch):
            result[k] += p * q
    return tuple(result)
