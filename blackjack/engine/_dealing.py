"""Dealing, turn order, the dealer's play and settlement: the mechanics behind `round.py`'s actions.

Private to the engine; the rules these functions implement are written down in `round.py`'s docstring.
"""

from cards.errors import Refused

from ._state import (
    ACTIVE,
    BLACKJACK,
    BUST,
    CHARLIE,
    DOUBLED,
    EVEN_MONEY,
    INSURANCE,
    PLAYING,
    SETTLED,
    STOOD,
    SUITED_678,
    SURRENDERED,
    Hand,
    RoundState,
    Seat,
)
from .cards import CARD_VALUES
from .rules import RuleSet


def can_split(rules: RuleSet, seat: Seat, hand: Hand) -> bool:
    cards = hand.cards
    if len(cards) != 2 or len(seat.hands) >= rules.max_split_hands:
        return False
    value = CARD_VALUES[cards[0]]
    if value != CARD_VALUES[cards[1]]:
        return False
    return not (value == 1 and hand.split and not rules.resplit_aces)


def draw(state: RoundState) -> str:
    position = state.position
    if position >= len(state.shoe):
        raise Refused("shoe_exhausted", "the shoe has no cards left for this round")
    card = state.shoe[position]
    if card not in CARD_VALUES:
        raise Refused("bad_message", f"the shoe holds something that is not a card: {card!r}")
    state.position = position + 1
    return card


def deal(state: RoundState) -> None:
    players = []
    for seat in state.seats.values():
        if seat.bet:
            players.append(seat)
        else:
            seat.sitting_out = True
    if not players:
        raise Refused("illegal_action", "nobody has bet")
    rules = state.rules
    # Every card of the deal is checked before anything changes, so a short or bad shoe refuses the deal.
    start = state.position
    end = start + 2 * len(players) + (2 if rules.dealer_peek else 1)
    cards = state.shoe[start:end]
    if len(cards) < end - start:
        raise Refused("shoe_exhausted", "the shoe has no cards left for this round")
    for card in cards:
        if card not in CARD_VALUES:
            raise Refused("bad_message", f"the shoe holds something that is not a card: {card!r}")
    state.position = end
    count = len(players)
    for seat, first, second in zip(players, cards[:count], cards[count + 1 : 2 * count + 1], strict=True):
        seat.hands = [Hand([first, second], seat.bet)]
    upcard = cards[count]
    state.dealer_cards = [upcard, cards[-1]] if rules.dealer_peek else [upcard]
    up = CARD_VALUES[upcard]
    early = rules.surrender == "early" and up in (1, 10)
    window = False
    for seat in players:
        hand = seat.hands[0]
        if hand.hard == 11 and hand.has_ace:
            hand.status = BLACKJACK
            if up == 1:
                seat.offers = ["even_money"]
        else:
            if up == 1 and seat.bet >= 2:
                seat.offers.append("insurance")
            if early:
                seat.offers.append("surrender")
        window = window or bool(seat.offers)
    if window:
        state.phase = INSURANCE
    else:
        close_window(state)


def close_window(state: RoundState) -> None:
    """End of the insurance window: the dealer's peek, then play."""
    dealer = state.dealer_cards
    if state.rules.dealer_peek and CARD_VALUES[dealer[0]] in (1, 10) and _is_dealer_blackjack(dealer):
        state.hole_revealed = True
        settle(state)
        return
    state.phase = PLAYING
    state.turn_seat = 0
    state.turn_hand = 0
    advance(state)


def advance(state: RoundState) -> None:
    """Move the turn to the next hand awaiting a decision, or let the dealer play when there is none."""
    turn = state.turn
    assert turn is not None  # the turn moves on from the hand that had it
    start_seat, start_hand = turn
    for number, seat in state.seats.items():
        if number < start_seat:
            continue
        hands = seat.hands
        index = start_hand if number == start_seat else 0
        while index < len(hands):
            hand = hands[index]
            if hand.status == ACTIVE:
                if len(hand.cards) == 1:
                    take_split_card(state, seat, hand)
                if hand.status == ACTIVE:
                    state.turn_seat = number
                    state.turn_hand = index
                    return
            index += 1
    state.turn_seat = None
    state.turn_hand = None
    dealer_plays(state)


def take_split_card(state: RoundState, seat: Seat, hand: Hand) -> None:
    """Second card of a split hand; split aces are done unless they may hit or resplit."""
    hand.add(draw(state))
    if hand.total == 21 or (
        CARD_VALUES[hand.cards[0]] == 1
        and not state.rules.hit_split_aces
        and not can_split(state.rules, seat, hand)
    ):
        hand.status = STOOD


def after_hit(rules: RuleSet, hand: Hand) -> None:
    if hand.hard > 21:
        hand.status = BUST
        return
    count = len(hand.cards)
    if count == rules.charlie:
        hand.status = CHARLIE
    elif count == 3 and rules.suited_678_bonus is not None and not hand.split and _suited_678(hand.cards):
        hand.status = SUITED_678
    elif hand.total == 21:
        hand.status = STOOD


def _suited_678(cards: list[str]) -> bool:
    return sorted(card[0] for card in cards) == ["6", "7", "8"] and len({card[1] for card in cards}) == 1


def _hard_total(cards: list[str]) -> tuple[int, bool]:
    """Sum of the card values with aces as 1, and whether there is an ace."""
    hard = 0
    has_ace = False
    for card in cards:
        value = CARD_VALUES[card]
        hard += value
        if value == 1:
            has_ace = True
    return hard, has_ace


def _is_dealer_blackjack(dealer: list[str]) -> bool:
    if len(dealer) != 2:
        return False
    hard, has_ace = _hard_total(dealer)
    return hard == 11 and has_ace


def dealer_plays(state: RoundState) -> None:
    rules = state.rules
    dealer = state.dealer_cards
    live = undecided = insured = False
    for seat in state.seats.values():
        if seat.insurance:
            insured = True
        for hand in seat.hands:
            status = hand.status
            if status in (STOOD, DOUBLED):
                live = undecided = True
            elif status not in (BUST, EVEN_MONEY):
                undecided = True
    if not rules.dealer_peek:
        # The second card matters to insurance and to every hand not yet decided for good (a dealer blackjack
        # beats all but blackjacks, which it pushes).
        if undecided or insured:
            dealer.append(draw(state))
        if _is_dealer_blackjack(dealer):
            live = False
    state.hole_revealed = True
    if live:
        hard, has_ace = _hard_total(dealer)
        hits_soft_17 = rules.dealer_hits_soft_17
        while True:
            soft = has_ace and hard <= 11
            total = hard + 10 if soft else hard
            if total > 17 or (total == 17 and not (soft and hits_soft_17)):
                break
            card = draw(state)
            dealer.append(card)
            value = CARD_VALUES[card]
            hard += value
            if value == 1:
                has_ace = True
    settle(state)


def settle(state: RoundState) -> None:
    rules = state.rules
    dealer = state.dealer_cards
    hard, has_ace = _hard_total(dealer)
    dealer_blackjack = len(dealer) == 2 and hard == 11 and has_ace
    dealer_total = hard + 10 if has_ace and hard <= 11 else hard
    bj_num, bj_den = rules.blackjack_ratio
    for seat in state.seats.values():
        returned = 0
        original_lost = False
        for hand in seat.hands:
            status = hand.status
            bet = hand.bet
            if status == EVEN_MONEY:
                result, payout = "win", 2 * bet
            elif status == BUST:
                result, payout = "bust", 0
            elif dealer_blackjack:
                if status == BLACKJACK:
                    result, payout = "push", bet
                elif status == SURRENDERED and not rules.dealer_peek:
                    result, payout = "lose", 0
                elif status == SURRENDERED:
                    result, payout = "surrender", bet // 2
                elif rules.original_bets_only and original_lost:
                    result, payout = "push", bet
                elif rules.original_bets_only:
                    original_lost = True
                    result, payout = "lose", bet - seat.bet
                else:
                    result, payout = "lose", 0
            elif status == BLACKJACK:
                result, payout = "blackjack", bet + bet * bj_num // bj_den
            elif status == SURRENDERED:
                result, payout = "surrender", bet // 2
            elif status == CHARLIE:
                result, payout = "charlie", 2 * bet
            elif status == SUITED_678:
                bonus = rules.suited_678_ratio
                assert bonus is not None  # a hand is marked a suited 6-7-8 only with the bonus on
                bonus_num, bonus_den = bonus
                result, payout = "win", bet + bet * bonus_num // bonus_den
            else:
                total = hand.total
                if dealer_total > 21 or total > dealer_total:
                    result, payout = "win", 2 * bet
                elif total == dealer_total:
                    result, payout = "push", bet
                else:
                    result, payout = "lose", 0
            hand.result = result
            hand.payout = payout
            returned += payout
        seat.insurance_payout = 3 * seat.insurance if dealer_blackjack else 0
        seat.returned = returned + seat.insurance_payout
    state.phase = SETTLED
