"""Player expected values for one dealer upcard: the arithmetic behind `strategy.basic_strategy`.

The player's cards are drawn with the fixed probabilities `draw`, and the dealer's final total follows
`dealer`, its distribution conditioned on no dealer blackjack. Every value is in units of the initial bet
and is conditional on the dealer not having a blackjack; `strategy` adds the blackjack case for each kind of
game.

A player hand is (hard, has_ace, cards): `hard` counts aces as 1, the best total adds 10 when an ace fits.
`cards` only matters with a charlie rule and is capped at the charlie count.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from .dealer import BUST
from .rules import RuleSet


def best_total(hard: int, has_ace: bool) -> tuple[int, bool]:
    """The best total and whether it is soft."""
    if has_ace and hard <= 11:
        return hard + 10, True
    return hard, False


def can_double(rules: RuleSet, hard: int, has_ace: bool) -> bool:
    """Whether `double_on` allows doubling this two-card hand (restrictions apply to the hard total)."""
    if rules.double_on == "any":
        return True
    total, soft = best_total(hard, has_ace)
    allowed = (9, 10, 11) if rules.double_on == "9-11" else (10, 11)
    return not soft and total in allowed


@dataclass
class HandValues:
    """Expected values of a player hand's options, conditional on no dealer blackjack (None: not possible)."""

    stand: float
    hit: float
    double: float | None
    split: float | None
    split_wager: float | None  # expected chips at risk after a split, in initial bets


class UpcardModel:
    """Expected values for one upcard, one composition and one rule set."""

    def __init__(
        self, rules: RuleSet, draw: Sequence[float], dealer: Sequence[float], p_blackjack: float
    ) -> None:
        self.rules = rules
        self.p_blackjack = p_blackjack
        self.draw = tuple(draw)
        self.dealer = tuple(dealer)
        self.charlie = rules.charlie
        # Stand value of every best total 4..21: the dealer's bust plus totals below ours, minus those above.
        self._stand_by_total = {}
        for total in range(4, 22):
            value = self.dealer[BUST]
            for dealer_total in range(17, 22):
                q = self.dealer[dealer_total - 17]
                if total > dealer_total:
                    value += q
                elif total < dealer_total:
                    value -= q
            self._stand_by_total[total] = value
        self.stand = cache(self._stand)
        self.best = cache(self._best)
        self.hit = cache(self._hit)
        self.double = cache(self._double)

    def _cards_key(self, cards: int) -> int:
        return min(cards, self.charlie) if self.charlie else 0

    def _stand(self, hard: int, has_ace: bool, cards: int) -> float:
        total, _ = best_total(hard, has_ace)
        if total > 21:
            return -1.0
        if self.charlie and cards >= self.charlie:
            return 1.0
        return self._stand_by_total[total]

    def _best(self, hard: int, has_ace: bool, cards: int) -> float:
        """Value of a hand that may hit or stand (no double, no split)."""
        if hard > 21:
            return -1.0
        if self.charlie and cards >= self.charlie:
            return 1.0
        return max(self.stand(hard, has_ace, cards), self.hit(hard, has_ace, cards))

    def _hit(self, hard: int, has_ace: bool, cards: int) -> float:
        if hard >= 21:
            return -1.0
        nxt = self._cards_key(cards + 1)
        return sum(
            p * self.best(hard + value, has_ace or value == 1, nxt)
            for value, p in enumerate(self.draw, start=1)
            if p
        )

    def _double(self, hard: int, has_ace: bool, cards: int) -> float:
        nxt = self._cards_key(cards + 1)
        return 2.0 * sum(
            p * self.stand(hard + value, has_ace or value == 1, nxt)
            for value, p in enumerate(self.draw, start=1)
            if p
        )

    def values(self, hard: int, has_ace: bool, cards: int, pair: int | None) -> HandValues:
        """The options of a hand of `cards` cards; `pair` is the card value of a two-card pair (else None)."""
        two_cards = cards == 2
        cards = self._cards_key(cards)
        double = None
        if two_cards and can_double(self.rules, hard, has_ace):
            double = self.double(hard, has_ace, cards)
        split = split_wager = None
        if pair is not None and self.rules.max_split_hands >= 2:
            split, split_wager = self.split(pair)
        return HandValues(
            self.stand(hard, has_ace, cards), self.hit(hard, has_ace, cards), double, split, split_wager
        )

    def _split_hand(self, pair: int, card: int) -> tuple[float, float]:
        """Value and wager of one hand after a split: the pair card plus `card`, no further split."""
        hard, has_ace = pair + card, pair == 1 or card == 1
        cards = self._cards_key(2)
        stand = self.stand(hard, has_ace, cards)
        if pair == 1 and not self.rules.hit_split_aces:
            return stand, 1.0
        options = [(self.best(hard, has_ace, cards), 1.0)]
        # Split aces never double, even when they may hit.
        if pair != 1 and self.rules.double_after_split and can_double(self.rules, hard, has_ace):
            options.append((self.double(hard, has_ace, cards), 2.0))
        return max(options)

    def split(self, pair: int) -> tuple[float, float]:
        """Expected value and wager of splitting a pair of `pair`s, resplitting while the rules allow.

        Hands are filled one card at a time; a hand that receives another pair card is split again while there
        is room (`max_split_hands`, and for aces `resplit_aces`). `fill(unfilled, hands)` is the expected sum
        over the hands still to fill; the order does not matter because the draws are independent.
        """
        limit = self.rules.max_split_hands if (pair != 1 or self.rules.resplit_aces) else 2
        p_pair = self.draw[pair - 1]
        other = [(self.draw[c - 1], *self._split_hand(pair, c)) for c in range(1, 11) if c != pair]
        own_value, own_wager = self._split_hand(pair, pair)

        @cache
        def fill(unfilled: int, hands: int) -> tuple[float, float]:
            if unfilled == 0:
                return 0.0, 0.0
            rest_value, rest_wager = fill(unfilled - 1, hands)
            value = sum(p * v for p, v, _ in other) + (1.0 - p_pair) * rest_value
            wager = sum(p * w for p, _, w in other) + (1.0 - p_pair) * rest_wager
            if hands < limit:
                more_value, more_wager = fill(unfilled + 1, hands + 1)
                return value + p_pair * more_value, wager + p_pair * more_wager
            return value + p_pair * (own_value + rest_value), wager + p_pair * (own_wager + rest_wager)

        return fill(2, 2)
