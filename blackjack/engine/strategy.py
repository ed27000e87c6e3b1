"""Basic strategy computed from the rules: expected values of every option, not a copied chart.

What is computed, per dealer upcard (value 1 = ace .. 10), in units of the initial bet:

- The dealer's final total is enumerated exactly (`dealer.dealer_distribution`) by the table's soft-17 rule,
  over the shoe of `rules.decks` decks minus the upcard (and minus the player's two cards, below),
  conditioned on no dealer blackjack.
- Two-card hands: for every pair of card values, that pair and the upcard are removed from the shoe; the
  dealer distribution and the player's draws use what is left. The options of each two-card total (and of
  each pair) are the probability-weighted average over the value pairs making it: a total-dependent
  strategy, as published charts are. Later hands (three cards or more) use the shoe minus the upcard only.
- Within a hand the player's further cards are drawn with fixed probabilities (no removal after the first
  two), so a split's hands and resplits are independent draws (`_ev.UpcardModel.split`).
- Options: stand, hit, double (two cards, `double_on`), split (pairs, `max_split_hands`, resplit aces, one
  card on split aces unless `hit_split_aces`, doubling after a split with `double_after_split`), surrender.
  A charlie rule makes values depend on the number of cards; later hands are computed per card count.
- The dealer's blackjack: at a peek table the player decides knowing there is none (late surrender is
  compared with -0.5 directly). Early surrender is decided before the peek, so there every other option also
  loses the original bet to a blackjack. In the no-hole-card game every option loses to a blackjack: a
  double 2 bets, a split its expected wager (1 bet each with `original_bets_only`), a surrender its whole
  bet (see `rules`).
- Not modelled: the suited 6-7-8 bonus (a rare side payment) and insurance (basic strategy never insures).

For each hand the options are ranked by expected value; `Strategy.decide` returns the best one that the
round allows, so a double falls back to hit or to stand, whichever is worth more, and a surrender to its
next best.
"""

import dataclasses
from collections.abc import Collection
from functools import lru_cache
from typing import Any

from . import dealer
from ._ev import HandValues, UpcardModel, best_total
from .cards import CARD_VALUES
from .round import RoundState, allowed_actions
from .rules import RuleSet

UPCARD_LABELS = {1: "A", 10: "T"} | {value: str(value) for value in range(2, 10)}
CHART_UPCARDS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)
PLAYING_ACTIONS = frozenset({"hit", "stand", "double", "split", "surrender"})
_ACTION_LETTERS = {"hit": "h", "stand": "s", "split": "p", "double": "d", "surrender": "r"}


class Strategy:
    """A computed basic strategy for one rule set: ranked options per (upcard, hand)."""

    def __init__(self, rules: RuleSet, tables: "_Tables") -> None:
        self.rules = rules
        self._rankings = tables.rankings
        self._values = tables.values
        self._deals = tables.deals
        self._charlie = rules.charlie
        # `decide` looks rankings up directly: two-card hands by (first value, second value, upcard), later
        # hands by (hard total, has an ace, card-count key, upcard).
        self._two_cards = {
            (first, second, up): tables.rankings[self._key([first, second], up)]
            for first in range(1, 11)
            for second in range(1, 11)
            for up in range(1, 11)
        }
        self._later = {
            (hard, has_ace, count, up): tables.rankings[(up, *best_total(hard, has_ace), count)]
            for hard, has_ace in [
                *((hard, False) for hard in range(4, 22)),
                *((hard, True) for hard in range(3, 22)),
            ]
            for count in (range(3, self._charlie + 1) if self._charlie else (3,))
            for up in range(1, 11)
        }

    def decide(self, cards: list[str], dealer_up: str, allowed: Collection[str]) -> str:
        """The best option for `cards` against the upcard `dealer_up` among the `allowed` actions."""
        up = CARD_VALUES[dealer_up]
        count = len(cards)
        if count == 2:
            ranking = self._two_cards[(CARD_VALUES[cards[0]], CARD_VALUES[cards[1]], up)]
        else:
            hard = 0
            has_ace = False
            for card in cards:
                value = CARD_VALUES[card]
                hard += value
                if value == 1:
                    has_ace = True
            if hard > 21:
                raise ValueError(f"a busted hand has no decision: {cards}")
            charlie = self._charlie
            ranking = self._later[
                (hard, has_ace, (count if count < charlie else charlie) if charlie else 3, up)
            ]
        for action in ranking:
            if action in allowed:
                return action
        raise ValueError(f"none of the actions {sorted(allowed)} is a playing decision")

    def insurance(self) -> bool:
        """Basic strategy never takes insurance (nor even money)."""
        return False

    def surrenders_early(self, cards: list[str], dealer_up: str) -> bool:
        """Whether to accept early surrender (offered before the peek): surrender beats every later option."""
        return self.decide(cards, dealer_up, PLAYING_ACTIONS) == "surrender"

    def house_edge(self) -> float:
        """The house edge of this strategy in percent of the initial bet, computed rather than simulated.

        The sum over every upcard and first two cards (exact probabilities for the shoe) of the value of the
        option basic strategy takes, with the same model as the decisions (module docstring): draws after the
        first two cards do not deplete the shoe, split hands draw independently. Payouts are exact fractions
        (no rounding to chips); the 6-7-8 bonus is left out. Expect agreement with published figures within a
        few hundredths of a percent for several decks, a little less for one deck.
        """
        num, den = self.rules.blackjack_ratio
        after_peek = self.rules.dealer_peek and self.rules.surrender != "early"
        value = 0.0
        for probability, key, options, p_blackjack in self._deals:
            if key is None:  # a natural: paid unless the dealer has one too
                value += probability * (1 - p_blackjack) * num / den
                continue
            chosen = options[self._rankings[key][0]]
            value += probability * ((1 - p_blackjack) * chosen - p_blackjack if after_peek else chosen)
        return -100 * value

    def expected_values(self, cards: list[str], dealer_up: str) -> dict[str, float]:
        """Expected value of each option of this hand in initial bets (the numbers behind `decide`)."""
        values = [CARD_VALUES[card] for card in cards]
        return dict(self._values[self._key(values, CARD_VALUES[dealer_up])])

    def _key(self, values: list[int], up: int) -> tuple:
        count = len(values)
        if count == 2 and values[0] == values[1]:
            return up, "pair", values[0]
        total, soft = best_total(sum(values), 1 in values)
        if count == 2:
            return up, total, soft, 2
        return up, total, soft, min(count, self._charlie) if self._charlie else 3

    def chart(self) -> dict[str, Any]:
        """Two-card decisions for display: rows of hard totals, soft totals and pairs against upcards 2..A.

        Codes: H hit, S stand, D double (else hit), Ds double (else stand), P split, Rh/Rs/Rp surrender (else
        hit/stand/split).
        """
        rows: dict[str, Any] = {"upcards": [UPCARD_LABELS[up] for up in CHART_UPCARDS]}
        rows["hard"] = {
            str(total): {UPCARD_LABELS[up]: self._code((up, total, False, 2)) for up in CHART_UPCARDS}
            for total in range(5, 21)
        }
        rows["soft"] = {
            str(total): {UPCARD_LABELS[up]: self._code((up, total, True, 2)) for up in CHART_UPCARDS}
            for total in range(13, 21)
        }
        rows["pairs"] = {
            UPCARD_LABELS[pair]: {UPCARD_LABELS[up]: self._code((up, "pair", pair)) for up in CHART_UPCARDS}
            for pair in (1, *range(2, 11))
        }
        return rows

    def _code(self, key: tuple) -> str:
        ranking = self._rankings[key]
        best = ranking[0]
        if best == "double":
            fallback = next(action for action in ranking if action in ("hit", "stand"))
            return "D" if fallback == "hit" else "Ds"
        if best == "surrender":
            return "R" + _ACTION_LETTERS[ranking[1]]
        return {"hit": "H", "stand": "S", "split": "P"}[best]


@lru_cache(maxsize=64)
def basic_strategy(rules: RuleSet) -> Strategy:
    """The basic strategy for `rules`, computed once (a few tenths of a second) and cached.

    The blackjack payout, the penetration and the 6-7-8 bonus do not change any decision, so rule sets that
    differ only in those share their tables.
    """
    playing_rules = dataclasses.replace(rules, blackjack_payout="3:2", penetration=0, suited_678_bonus=None)
    return Strategy(rules, _tables(playing_rules))


@dataclasses.dataclass(frozen=True)
class _Tables:
    rankings: dict[tuple, tuple[str, ...]]  # (upcard, hand) key -> options, best first
    values: dict[tuple, dict[str, float]]  # (upcard, hand) key -> option -> expected value
    # Every first deal: (probability, key or None for a natural, the deal's own option values, P(dealer BJ)).
    deals: list[tuple[float, tuple | None, dict[str, float], float]]


@lru_cache(maxsize=32)
def _tables(rules: RuleSet) -> _Tables:
    """Ranked options and their expected values for every (upcard, hand) key of `Strategy`."""
    values: dict[tuple, dict[str, float]] = {}
    deals: list[tuple[float, tuple | None, dict[str, float], float]] = []
    full = dealer.composition(rules.decks)
    later_counts = range(3, rules.charlie + 1) if rules.charlie else (3,)
    for up in range(1, 11):
        counts = dealer.remove(full, up)
        model = _model(rules, up, counts)
        for cards in later_counts:
            for hard, has_ace in _HANDS:
                total, soft = best_total(hard, has_ace)
                values[(up, total, soft, cards)] = _option_values(
                    rules, model.values(hard, has_ace, cards, None), model.p_blackjack, two_cards=False
                )
        two_cards, up_deals = _two_card_values(rules, up, counts)
        p_up = full[up - 1] / sum(full)
        deals.extend((p_up * probability, key, options, p_bj) for probability, key, options, p_bj in up_deals)
        for hard, has_ace in _HANDS:
            # Totals no two-card deal makes (hard 20, soft 21 after a split...) play like later hands.
            total, soft = best_total(hard, has_ace)
            two_cards.setdefault((up, total, soft, 2), values[(up, total, soft, 3)])
        values.update(two_cards)
    rankings = {key: _ranked(options) for key, options in values.items()}
    return _Tables(rankings, values, deals)


def _ranked(options: dict[str, float]) -> tuple[str, ...]:
    """The actions, best first (equal values in the order of `options`)."""
    return tuple(sorted(options, key=lambda action: -options[action]))


# Every hand state after a hit: hard totals 4..21 and soft totals 12..21 (hard 2..11 with an ace).
_HANDS = [(hard, False) for hard in range(4, 22)] + [(hard, True) for hard in range(2, 12)]


def _model(rules: RuleSet, up: int, counts: dealer.Composition) -> UpcardModel:
    draw = tuple(count / sum(counts) for count in counts)
    dealer_no_bj = dealer.dealer_distribution(
        up, counts, hits_soft_17=rules.dealer_hits_soft_17, no_blackjack=True
    )
    return UpcardModel(rules, draw, dealer_no_bj, dealer.blackjack_probability(up, counts))


def _two_card_values(
    rules: RuleSet, up: int, counts: dealer.Composition
) -> tuple[dict[tuple, dict[str, float]], list[tuple[float, tuple | None, dict[str, float], float]]]:
    """Options of two-card hands: each pair of card values with its own cards removed, averaged per total.

    Also returns every first deal against this upcard as (probability, key or None for a natural, its own
    option values, P(dealer blackjack)), for `Strategy.house_edge`.
    """
    sums: dict[tuple, dict[str, float]] = {}
    weights: dict[tuple, float] = {}
    deals: list[tuple[float, tuple | None, dict[str, float], float]] = []
    for first in range(1, 11):
        for second in range(first, 11):
            left = counts[second - 1] - (first == second)
            weight = counts[first - 1] * left * (1 if first == second else 2)
            if weight <= 0:
                continue
            model = _model(rules, up, dealer.remove(counts, first, second))
            hard, has_ace = first + second, first == 1
            if hard == 11 and has_ace:
                deals.append((weight, None, {}, model.p_blackjack))  # a blackjack is not played
                continue
            key: tuple[int, str, int] | tuple[int, int, bool, int]
            if first == second:
                key = (up, "pair", first)
                options = model.values(hard, has_ace, 2, first)
            else:
                total, soft = best_total(hard, has_ace)
                key = (up, total, soft, 2)
                options = model.values(hard, has_ace, 2, None)
            option_values = _option_values(rules, options, model.p_blackjack, two_cards=True)
            deals.append((weight, key, option_values, model.p_blackjack))
            accumulated = sums.setdefault(key, {})
            for action, ev in option_values.items():
                accumulated[action] = accumulated.get(action, 0.0) + weight * ev
            weights[key] = weights.get(key, 0.0) + weight
    averaged = {
        key: {action: ev / weights[key] for action, ev in options.items()} for key, options in sums.items()
    }
    all_weights = sum(deal[0] for deal in deals)
    return averaged, [(weight / all_weights, key, options, p_bj) for weight, key, options, p_bj in deals]


def _option_values(
    rules: RuleSet, hand: HandValues, p_blackjack: float, *, two_cards: bool
) -> dict[str, float]:
    """Expected values of the options, including the dealer's blackjack where the player does not know yet."""
    conditional = {"stand": hand.stand, "hit": hand.hit}
    # Chips lost to a dealer blackjack: after a peek only the original bet was ever at risk.
    losses = {"stand": 1.0, "hit": 1.0}
    extra_bets_lost = not rules.dealer_peek and not rules.original_bets_only
    if hand.double is not None:
        conditional["double"] = hand.double
        losses["double"] = 2.0 if extra_bets_lost else 1.0
    if hand.split is not None:
        conditional["split"] = hand.split
        split_wager = hand.split_wager
        assert split_wager is not None  # computed with the split's value
        losses["split"] = split_wager if extra_bets_lost else 1.0
    surrender = two_cards and rules.surrender != "none"
    if rules.dealer_peek and rules.surrender != "early":
        if surrender:
            conditional["surrender"] = -0.5
        return conditional
    result = {
        action: (1 - p_blackjack) * ev - p_blackjack * losses[action] for action, ev in conditional.items()
    }
    if surrender:
        # Early surrender keeps half the bet even against a blackjack; late surrender without a peek does not.
        result["surrender"] = -0.5 if rules.dealer_peek else (1 - p_blackjack) * -0.5 - p_blackjack
    return result


def recommend(
    state: RoundState, seat: int, hand: int | None = None, *, allowed: Collection[str] | None = None
) -> str | None:
    """What basic strategy would do now for `seat` (the table's hint), or None when it has nothing to decide.

    Playing phase: the action for the hand whose turn it is (`hand`, if given, must be that hand). Insurance
    window: "surrender" when the seat should accept an early surrender, else "decline" (decline insurance,
    even money and surrender alike: basic strategy never insures). `allowed` narrows the engine's legal
    actions (a player who cannot afford to double is told the next best play).
    """
    legal = allowed_actions(state, seat)
    allowed = legal if allowed is None else [action for action in legal if action in allowed]
    if state.phase not in ("insurance", "playing") or not allowed:
        return None
    strategy = basic_strategy(state.rules)
    hands = state.seats[seat].hands
    up = state.dealer_cards[0]
    if state.phase == "insurance":
        if "surrender" in allowed and strategy.surrenders_early(hands[0].cards, up):
            return "surrender"
        return "decline"
    turn = state.turn
    assert turn is not None  # while playing, a seat has legal actions only on its turn
    turn_hand = turn[1]
    if hand is not None and hand != turn_hand:
        return None
    return strategy.decide(hands[turn_hand].cards, up, allowed)
