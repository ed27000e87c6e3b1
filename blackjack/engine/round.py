"""The round state machine: `new_round`, `apply`, `apply_in_place`, `allowed_actions`, `replay`.

A round is a value (`RoundState`). `apply(state, action)` returns a new state and never changes its input;
`apply_in_place` is the same code mutating the state (for the simulator). Anything refused raises
`Refused` before any change. (One exception: running out of cards after the deal raises
`shoe_exhausted` mid-action; `apply` still leaves its input untouched, `apply_in_place` leaves a half-done
state. A round cannot go on without cards: near the end of a shoe the caller should pass the shoe followed by
the next shuffled shoe, whose hash it has published, or void the round.)

Phases: "betting" -> "insurance" (only when there is something to decide) -> "playing" -> "settled".

Deal order: one card to each betting seat in seat order, the dealer's upcard, a second card to each seat, then
the hole card. In the no-hole-card (European) game the dealer takes a second card only when the players are
done, and only if some hand or insurance bet still depends on it.

The insurance window is the round's decisions before the dealer checks for blackjack. Every seat answers each
offer it has (`state.seats[s].offers`, also what `allowed_actions` lists); the window closes when all are
answered or on `timeout` (every open offer declined):
- ace up: `insurance` (costs floor(bet / 2), pays 2:1; a 1-chip bet cannot insure) to hands that are not
  blackjacks, `even_money` (a sure 1:1 win instead of the blackjack's payout) to blackjacks;
- early surrender, ace or ten up (peek game only): `surrender` with `accept` true or false, to hands that are
  not blackjacks. A hand surrendered here gets half its bet back even if the dealer has blackjack.
Then, in the peek game with an ace or ten up, the dealer checks: a blackjack ends the round at once. Late
surrender (and early surrender against other upcards, or after the window) is a playing decision: first two
cards of an unsplit hand. In the no-hole-card game a surrendered hand loses its whole bet if the dealer's
second card makes a blackjack.

Play goes seat by seat, hand by hand, split hands left to right. A split hand takes its second card when its
turn comes. Hands of 21 stand by themselves; blackjacks and even-money hands need no turn. A split needs two
cards of equal value (a king and a ten split) and room under `max_split_hands`; aces resplit only with
`resplit_aces`. Split aces take one card each and are done, unless `hit_split_aces` (then they play on,
without doubling) or the card is another ace they may resplit. 21 after a split is not a blackjack. A double
adds one bet and takes one card; its restriction (`double_on`) is on the hand's total (9-11 and 10-11 are hard
totals), and after a split it needs `double_after_split`. Charlie: a hand reaching `charlie` cards without
busting is done and wins 1:1. Suited 6-7-8: a hand (not split, not doubled) whose first three cards are 6, 7
and 8 of one suit is done and wins at the bonus ratio. Neither is paid against a dealer blackjack (in the peek
game the dealer has none by then; in the no-hole-card game a dealer blackjack beats them).

Settlement, in integer chips (a hand's `payout` is every chip returned for it, stake included; 0 is a loss):
- win, charlie: 2 * bet; push: bet; blackjack: bet + floor(bet * num / den) (3:2 on 5 chips wins 7, 6:5 on 7
  chips wins 8); suited 6-7-8: bet + floor(bet * num / den) of the bonus ratio; even money: 2 * bet (result
  "win");
- surrender: floor(bet / 2) (the house keeps an odd chip); bust and lose: 0;
- insurance: 3 * insurance on a dealer blackjack, else 0 (seat `insurance_payout`);
- dealer blackjack in the no-hole-card game: blackjacks push, every other hand loses all its chips, unless
  `original_bets_only`: then the seat loses one original bet (on its first hand that has not busted; a busted
  hand was lost when it busted) and every other chip of those hands comes back (those hands show "push").
A seat's `returned` is the sum of its hands' payouts plus its insurance payout. The house result of the round
is the sum of `stake` minus the sum of `returned` over the seats. While betting, `stake` is the seat's current
bet: a smaller replacement bet or `sit_out` lowers it, and the caller refunds the difference.
"""

from collections.abc import Iterable, Sequence
from typing import Any

from cards.errors import Refused

from ._dealing import advance, after_hit, can_split, close_window, deal, draw, take_split_card
from ._state import (
    ACTIVE,
    BETTING,
    BUST,
    DOUBLED,
    EVEN_MONEY,
    INSURANCE,
    PLAYING,
    STOOD,
    SURRENDERED,
    Hand,
    RoundState,
    Seat,
)
from .cards import CARD_VALUES
from .rules import RuleSet

__all__ = ["RoundState", "allowed_actions", "apply", "apply_in_place", "new_round", "replay"]

MAX_SEATS = 7


def new_round(
    *, rules: RuleSet, shoe: Sequence[str], position: int, seats: Iterable[int], min_bet: int, max_bet: int
) -> RoundState:
    """A round in the betting phase. `shoe` is the whole shoe order, `position` the index of the next card."""
    if not isinstance(rules, RuleSet):
        raise Refused("bad_message", "rules must be a RuleSet")
    numbers = []
    for number in seats:
        if type(number) is not int or not 1 <= number <= MAX_SEATS:
            raise Refused("bad_message", f"seats must be numbers 1 to {MAX_SEATS}, not {number!r}")
        numbers.append(number)
    numbers = sorted(set(numbers))
    if not numbers:
        raise Refused("bad_message", "a round needs at least one seat")
    if type(min_bet) is not int or type(max_bet) is not int or not 1 <= min_bet <= max_bet:
        raise Refused("bad_message", "bet limits must be integers with 1 <= min_bet <= max_bet")
    if type(position) is not int or not 0 <= position <= len(shoe):
        raise Refused("bad_message", "position must be an index into the shoe")
    return RoundState(
        rules=rules,
        shoe=shoe if type(shoe) is tuple else tuple(shoe),
        position=position,
        seats=numbers,
        min_bet=min_bet,
        max_bet=max_bet,
    )


def apply(state: RoundState, action: dict[str, Any]) -> RoundState:
    """The state after `action`; `state` itself never changes. Raises Refused if the action is refused."""
    new = state.copy()
    apply_in_place(new, action)
    return new


def apply_in_place(state: RoundState, action: dict[str, Any]) -> None:
    """Apply `action` to `state` itself (the simulator's fast path; live play goes through `apply`)."""
    if type(action) is not dict:
        raise Refused("bad_message", "an action must be a JSON object")
    name = action.get("action")
    handler = _HANDLERS.get(name) if type(name) is str else None
    if handler is None:
        raise Refused("bad_message", f"unknown action {name!r}")
    handler(state, action)


def replay(
    rules: RuleSet,
    shoe: Sequence[str],
    position: int,
    seats: Iterable[int],
    min_bet: int,
    max_bet: int,
    actions: Iterable[dict[str, Any]],
) -> RoundState:
    """Rebuild a round from its inputs and the accepted actions, in order."""
    state = new_round(
        rules=rules, shoe=shoe, position=position, seats=seats, min_bet=min_bet, max_bet=max_bet
    )
    for action in actions:
        apply_in_place(state, action)
    return state


def allowed_actions(state: RoundState, seat: int) -> list[str]:
    """The actions `seat` may take now (round-level actions such as `deal` and `timeout` are not listed)."""
    seat_state = state.seats.get(seat) if type(seat) is int else None
    if seat_state is None:
        return []
    phase = state.phase
    if phase == BETTING:
        return ["bet", "sit_out"]
    if phase == INSURANCE:
        return list(seat_state.offers)
    turn = state.turn
    if phase == PLAYING and turn is not None and turn[0] == seat:
        return _hand_actions(state.rules, seat_state, seat_state.hands[turn[1]])
    return []


# --- actions ------------------------------------------------------------------------------------------------


def _bet(state: RoundState, action: dict[str, Any]) -> None:
    _require_phase(state, BETTING, "bet")
    seat = _seat(state, action)
    amount = action.get("amount")
    if type(amount) is not int:
        raise Refused("bad_message", "amount must be a whole number of chips")
    if not state.min_bet <= amount <= state.max_bet:
        raise Refused("bad_amount", f"the bet must be between {state.min_bet} and {state.max_bet} chips")
    seat.bet = amount
    seat.stake = amount
    seat.sitting_out = False


def _sit_out(state: RoundState, action: dict[str, Any]) -> None:
    _require_phase(state, BETTING, "sit out")
    seat = _seat(state, action)
    seat.bet = 0
    seat.stake = 0
    seat.sitting_out = True


def _deal_action(state: RoundState, action: dict[str, Any]) -> None:
    _require_phase(state, BETTING, "deal")
    deal(state)


def _timeout(state: RoundState, action: dict[str, Any]) -> None:
    phase = state.phase
    if phase == BETTING:
        deal(state)
    elif phase == INSURANCE:
        for seat in state.seats.values():
            seat.offers.clear()
        close_window(state)
    elif phase == PLAYING:
        _current_hand(state).status = STOOD
        advance(state)
    else:
        raise Refused("illegal_action", "the round is over")


def _insurance(state: RoundState, action: dict[str, Any]) -> None:
    seat, accept = _answer(state, action, "insurance")
    if accept:
        seat.insurance = seat.bet // 2
        seat.stake += seat.insurance
    _answered(state, seat, "insurance")


def _even_money(state: RoundState, action: dict[str, Any]) -> None:
    seat, accept = _answer(state, action, "even_money")
    if accept:
        seat.hands[0].status = EVEN_MONEY
    _answered(state, seat, "even_money")


def _surrender(state: RoundState, action: dict[str, Any]) -> None:
    if state.phase == INSURANCE:
        seat, accept = _answer(state, action, "surrender", default=True)
        if accept:
            seat.hands[0].status = SURRENDERED
        _answered(state, seat, "surrender")
        return
    seat, hand = _turn_hand(state, action, "surrender")
    if not _can_surrender(state.rules, seat, hand):
        raise Refused("illegal_action", "surrender is only allowed on the first two cards of an unsplit hand")
    hand.status = SURRENDERED
    advance(state)


def _hit(state: RoundState, action: dict[str, Any]) -> None:
    _, hand = _turn_hand(state, action, "hit")
    if hand.split and not state.rules.hit_split_aces and CARD_VALUES[hand.cards[0]] == 1:
        raise Refused("illegal_action", "split aces take one card each")
    hand.add(draw(state))
    after_hit(state.rules, hand)
    if hand.status != ACTIVE:
        advance(state)


def _stand(state: RoundState, action: dict[str, Any]) -> None:
    _, hand = _turn_hand(state, action, "stand")
    hand.status = STOOD
    advance(state)


def _double(state: RoundState, action: dict[str, Any]) -> None:
    seat, hand = _turn_hand(state, action, "double")
    if not _can_double(state.rules, hand):
        raise Refused("illegal_action", "this hand cannot double")
    seat.stake += hand.bet
    hand.bet *= 2
    hand.doubled = True
    hand.add(draw(state))
    hand.status = BUST if hand.hard > 21 else DOUBLED
    advance(state)


def _split(state: RoundState, action: dict[str, Any]) -> None:
    seat, hand = _turn_hand(state, action, "split")
    if not can_split(state.rules, seat, hand):
        raise Refused("illegal_action", "this hand cannot split")
    second = hand.cards.pop()
    hand.hard = CARD_VALUES[hand.cards[0]]
    hand.has_ace = hand.hard == 1
    hand.split = True
    turn = state.turn
    assert turn is not None  # `_turn_hand` refused a split out of turn
    seat.hands.insert(turn[1] + 1, Hand([second], seat.bet, split=True))
    seat.stake += seat.bet
    take_split_card(state, seat, hand)
    if hand.status != ACTIVE:
        advance(state)


_HANDLERS = {
    "bet": _bet,
    "sit_out": _sit_out,
    "deal": _deal_action,
    "timeout": _timeout,
    "insurance": _insurance,
    "even_money": _even_money,
    "surrender": _surrender,
    "hit": _hit,
    "stand": _stand,
    "double": _double,
    "split": _split,
}


# --- validation helpers -------------------------------------------------------------------------------------


def _require_phase(state: RoundState, phase: str, what: str) -> None:
    if state.phase != phase:
        raise Refused("illegal_action", f"cannot {what} now: the round is {state.phase}")


def _seat(state: RoundState, action: dict[str, Any]) -> Seat:
    number = action.get("seat")
    seat = state.seats.get(number) if type(number) is int else None
    if seat is None:
        raise Refused("bad_message", f"seat {number!r} is not in this round")
    return seat


def _answer(
    state: RoundState, action: dict[str, Any], offer: str, default: bool | None = None
) -> tuple[Seat, bool]:
    seat = _seat(state, action)
    accept = action.get("accept", default)
    if type(accept) is not bool:
        raise Refused("bad_message", "accept must be true or false")
    if state.phase != INSURANCE or offer not in seat.offers:
        raise Refused(
            "illegal_action", f"no {offer.replace('_', ' ')} decision is open for seat {seat.number}"
        )
    return seat, accept


def _answered(state: RoundState, seat: Seat, offer: str) -> None:
    seat.offers.remove(offer)
    for other in state.seats.values():
        if other.offers:
            return
    close_window(state)


def _turn_hand(state: RoundState, action: dict[str, Any], what: str) -> tuple[Seat, Hand]:
    _require_phase(state, PLAYING, what)
    seat = _seat(state, action)
    index = action.get("hand", state.turn_hand if seat.number == state.turn_seat else None)
    if index is not None and type(index) is not int:
        raise Refused("bad_message", "hand must be a hand number (0 for the first hand)")
    if seat.number != state.turn_seat or index != state.turn_hand:
        raise Refused("not_your_turn", f"it is not the turn of seat {seat.number}, hand {index}")
    assert index is not None  # the turn's hand: the seat has the turn
    return seat, seat.hands[index]


def _hand_actions(rules: RuleSet, seat: Seat, hand: Hand) -> list[str]:
    if hand.split and CARD_VALUES[hand.cards[0]] == 1 and not rules.hit_split_aces:
        actions = ["stand"]
    else:
        actions = ["hit", "stand"]
        if _can_double(rules, hand):
            actions.append("double")
    if can_split(rules, seat, hand):
        actions.append("split")
    if _can_surrender(rules, seat, hand):
        actions.append("surrender")
    return actions


def _can_double(rules: RuleSet, hand: Hand) -> bool:
    if len(hand.cards) != 2:
        return False
    if hand.split and (not rules.double_after_split or CARD_VALUES[hand.cards[0]] == 1):
        return False
    double_on = rules.double_on
    if double_on == "any":
        return True
    total = hand.total
    return 9 <= total <= 11 if double_on == "9-11" else 10 <= total <= 11


def _can_surrender(rules: RuleSet, seat: Seat, hand: Hand) -> bool:
    return rules.surrender != "none" and len(seat.hands) == 1 and len(hand.cards) == 2 and not hand.split


def _current_hand(state: RoundState) -> Hand:
    turn = state.turn
    assert turn is not None  # asked only while a hand is played
    seat, hand = turn
    return state.seats[seat].hands[hand]
