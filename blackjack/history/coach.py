"""The coach figure: every player decision of a round compared with basic strategy and priced.

For each decision in the action log the state just before it is known (from the replay), so the coach asks
`blackjack.engine.strategy` what basic strategy would do with the same cards, the same upcard and the same
allowed actions, and prices a different choice with the strategy's own expected values:

    cost = (EV of the best allowed action - EV of the action taken) x the hand's initial bet      (chips)

The strategy's EVs are for a total-dependent basic strategy with the shoe minus the visible cards (see
`blackjack.engine.strategy`), so the cost is an estimate of the same precision as the chart. Insurance and
even money are priced from the shoe's composition minus the seat's two cards and the ace up: an insured chip
is worth 3p - 1 (p = chance of a ten in the hole), even money is worth one bet against the blackjack's payout
times (1 - p). Timeouts are not decisions (the table stood for the player) and are not counted."""

from dataclasses import dataclass
from typing import Any

from blackjack.engine.cards import CARD_VALUES
from blackjack.engine.round import RoundState, allowed_actions
from blackjack.engine.strategy import PLAYING_ACTIONS, basic_strategy


@dataclass
class Decision:
    seat: int
    hand: int
    cards: list[str]
    dealer_up: str
    action: str
    best: str
    bet: int
    ev_cost: float  # chips, 0 when the action was the best one

    @property
    def deviates(self) -> bool:
        return self.action != self.best


def analyse(states: list[RoundState], actions: list[dict[str, Any]]) -> list[Decision]:
    """Decisions of a replayed round: `states[i]` is the state before `actions[i]`."""
    decisions = []
    for before, action in zip(states, actions, strict=False):
        decision = judge(before, action)
        if decision is not None:
            decisions.append(decision)
    return decisions


def judge(before: RoundState, action: dict[str, Any]) -> Decision | None:
    name = action.get("action")
    seat_number = action.get("seat")
    seat = before.seats.get(seat_number) if type(seat_number) is int else None
    if seat is None or not before.dealer_cards:
        return None
    up = before.dealer_cards[0]
    if before.phase == "insurance":
        return _judge_window(before, seat, name, action, up)
    if before.phase != "playing" or name not in PLAYING_ACTIONS or before.turn is None:
        return None
    index = before.turn[1]
    cards = list(seat.hands[index].cards)
    allowed = [a for a in allowed_actions(before, seat_number) if a in PLAYING_ACTIONS]
    strategy = basic_strategy(before.rules)
    best = strategy.decide(cards, up, allowed)
    values = strategy.expected_values(cards, up)
    cost = 0.0
    if name != best and name in values and best in values:
        cost = max(0.0, values[best] - values[name]) * seat.bet
    return Decision(seat_number, index, cards, up, name, best, seat.bet, cost)


def _judge_window(before: RoundState, seat, name: str, action: dict[str, Any], up: str) -> Decision | None:
    cards = list(seat.hands[0].cards) if seat.hands else []
    if name == "surrender":
        accept = action.get("accept", True)
        strategy = basic_strategy(before.rules)
        values = strategy.expected_values(cards, up)
        others = max(v for a, v in values.items() if a != "surrender")
        surrender_value = values.get("surrender", -0.5)
        best_accepts = surrender_value > others
        taken = "surrender" if accept else "play on"
        best = "surrender" if best_accepts else "play on"
        cost = abs(surrender_value - others) * seat.bet if accept != best_accepts else 0.0
        return Decision(seat.number, 0, cards, up, taken, best, seat.bet, cost)
    if name not in ("insurance", "even_money"):
        return None
    accept = bool(action.get("accept"))
    p = hole_ten_probability(before.rules.decks, [*cards, up])
    if name == "insurance":
        insured = seat.bet // 2
        per_chip = 3 * p - 1  # value of one insured chip
        best_accepts = per_chip > 0
        cost = abs(per_chip) * insured if accept != best_accepts else 0.0
        taken, best = ("insure" if accept else "decline"), ("insure" if best_accepts else "decline")
    else:
        num, den = before.rules.blackjack_ratio
        keep = (1 - p) * num / den  # the blackjack pays unless the dealer has one too (then a push)
        best_accepts = keep < 1.0
        cost = abs(1.0 - keep) * seat.bet if accept != best_accepts else 0.0
        taken = "even money" if accept else "decline"
        best = "even money" if best_accepts else "decline"
    return Decision(seat.number, 0, cards, up, taken, best, seat.bet, cost)


def hole_ten_probability(decks: int, seen: list[str]) -> float:
    """Chance that the hole card is a ten-valued card, given the cards seen (full shoe otherwise)."""
    tens = 16 * decks - sum(1 for card in seen if CARD_VALUES[card] == 10)
    return tens / (52 * decks - len(seen))
