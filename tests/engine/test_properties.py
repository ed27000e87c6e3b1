"""Random legal and illegal action sequences never break the round's invariants."""

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from blackjack.engine import RuleSet, allowed_actions, apply, apply_in_place, new_deck_order, replay
from blackjack.engine.round import RoundState, new_round
from cards.errors import Refused

# shoe_exhausted is not a protocol code but a documented engine refusal (the caller voids the round).
PROTOCOL_CODES = {"illegal_action", "not_your_turn", "bad_amount", "bad_message", "shoe_exhausted"}


def playable(fields: dict) -> dict:
    """Drop the combinations RuleSet refuses (test_rules covers those)."""
    fields["resplit_aces"] &= fields["max_split_hands"] >= 3
    fields["hit_split_aces"] &= fields["max_split_hands"] >= 2
    fields["original_bets_only"] &= not fields["dealer_peek"]
    if not fields["dealer_peek"] and fields["surrender"] == "early":
        fields["surrender"] = "late"
    return fields


rule_fields = st.fixed_dictionaries(
    {
        "decks": st.sampled_from([1, 2, 6, 8]),
        "dealer_hits_soft_17": st.booleans(),
        "blackjack_payout": st.sampled_from(["3:2", "6:5", "2:1", "1:1"]),
        "double_on": st.sampled_from(["any", "9-11", "10-11"]),
        "double_after_split": st.booleans(),
        "max_split_hands": st.integers(1, 4),
        "resplit_aces": st.booleans(),
        "hit_split_aces": st.booleans(),
        "surrender": st.sampled_from(["none", "late", "early"]),
        "dealer_peek": st.booleans(),
        "original_bets_only": st.booleans(),
        "charlie": st.sampled_from([None, 5, 6, 7]),
        "suited_678_bonus": st.sampled_from([None, "2:1", "3:2"]),
    }
).map(playable)

garbage = st.one_of(
    st.sampled_from(
        [
            None,
            "hit",
            ["hit"],
            {},
            {"action": "fold"},
            {"action": 3},
            {"action": "bet", "seat": 1, "amount": True},
            {"action": "bet", "seat": 1, "amount": 2.5},
            {"action": "insurance", "seat": 1, "accept": "no"},
            {"action": "hit", "seat": "1"},
            {"action": "stand", "seat": 1, "hand": True},
            {"action": "surrender", "seat": 2, "accept": 0},
        ]
    ),
    st.builds(
        lambda name, seat, hand: {"action": name, "seat": seat, "hand": hand},
        st.sampled_from(["hit", "stand", "double", "split", "surrender", "insurance", "even_money"]),
        st.integers(0, 8),
        st.integers(-1, 4),
    ),
    st.builds(
        lambda seat, amount: {"action": "bet", "seat": seat, "amount": amount},
        st.integers(0, 8),
        st.integers(-5, 120),
    ),
    st.sampled_from([{"action": "deal"}, {"action": "timeout"}]),
)


def legal_actions(state: RoundState) -> list[dict]:
    actions = []
    for number in state.seats:
        for name in allowed_actions(state, number):
            if name == "bet":
                actions.append({"action": "bet", "seat": number, "amount": state.min_bet + number})
            elif name in ("insurance", "even_money", "surrender") and state.phase == "insurance":
                actions += [{"action": name, "seat": number, "accept": accept} for accept in (True, False)]
            else:
                actions.append({"action": name, "seat": number})
    if state.phase != "settled":
        actions.append({"action": "timeout"})
    if state.phase == "betting":
        actions.append({"action": "deal"})
    return actions


def expected_payout(state: RoundState, seat, hand) -> int:
    """A hand's payout worked out from its result alone (module docstring of round.py)."""
    rules, bet = state.rules, hand.bet
    if hand.result == "win" and hand.status == "suited_678":
        num, den = rules.suited_678_ratio
        return bet + bet * num // den
    if hand.result == "blackjack":
        num, den = rules.blackjack_ratio
        return bet + bet * num // den
    if hand.result == "lose" and rules.original_bets_only and dealer_blackjack(state):
        return bet - seat.bet
    return {"win": 2 * bet, "charlie": 2 * bet, "push": bet, "surrender": bet // 2, "bust": 0, "lose": 0}[
        hand.result
    ]


def dealer_blackjack(state: RoundState) -> bool:
    return sorted(min("A23456789TJQK".index(card[0]) + 1, 10) for card in state.dealer_cards) == [1, 10]


def dealer_total(state: RoundState) -> int:
    values = ["A23456789TJQK".index(card[0]) + 1 for card in state.dealer_cards]
    total = sum(min(value, 10) for value in values)
    return total + 10 if 1 in values and total <= 11 else total


def check_invariants(state: RoundState) -> None:
    data = state.to_dict()
    assert RoundState.from_dict(json.loads(json.dumps(data))) == state
    dealt = [card for seat in state.seats.values() for hand in seat.hands for card in hand.cards]
    dealt += state.dealer_cards
    assert Counter(dealt) == Counter(state.shoe[state.start_position : state.position])
    for seat in state.seats.values():
        if seat.hands:
            assert seat.stake == sum(hand.bet for hand in seat.hands) + seat.insurance
            assert all(hand.bet in (seat.bet, 2 * seat.bet) for hand in seat.hands)
        else:
            assert seat.stake == seat.bet
    if state.phase == "playing":
        seat_number, hand_index = state.turn
        assert state.seats[seat_number].hands[hand_index].status == "active"
    else:
        assert state.turn is None
    if state.phase != "settled":
        return
    assert state.hole_revealed
    house = 0
    for seat in state.seats.values():
        paid = 0
        for hand in seat.hands:
            assert hand.payout == expected_payout(state, seat, hand)
            paid += expected_payout(state, seat, hand)
            if hand.status in ("stood", "doubled") and not dealer_blackjack(state):
                mine, theirs = hand.total, dealer_total(state)
                outcome = "win" if theirs > 21 or mine > theirs else "push" if mine == theirs else "lose"
                assert hand.result == outcome
        paid += 3 * seat.insurance if dealer_blackjack(state) else 0
        house += seat.stake - paid
    assert sum(seat.stake - seat.returned for seat in state.seats.values()) == house


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fields=rule_fields,
    shoe_seed=st.integers(0, 2**32),
    seats=st.sets(st.integers(1, 7), min_size=1, max_size=7),
    data=st.data(),
)
def test_random_action_sequences_keep_every_invariant(fields, shoe_seed, seats, data):
    rules = RuleSet.from_dict(fields)
    shoe = new_deck_order(rules.decks)
    rng = random.Random(shoe_seed)
    # Half the time a shoe of a few kinds of card only, so that pairs, splits and resplits are common.
    few = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(shoe[:52]), min_size=2, max_size=4)), "few")
    if few:
        shoe = rng.choices(few, k=len(shoe))
    else:
        rng.shuffle(shoe)
    position = data.draw(st.integers(0, len(shoe) // 3), label="position")
    state = new_round(rules=rules, shoe=shoe, position=position, seats=seats, min_bet=2, max_bet=100)
    accepted = []
    for _ in range(60):
        if state.phase == "settled":
            break
        if data.draw(st.integers(0, 3), label="legal?"):
            action = data.draw(st.sampled_from(legal_actions(state)), label="legal")
        else:
            action = data.draw(garbage, label="any")
        before = state.to_dict()
        try:
            new = apply(state, action)
        except Refused as exc:
            error = exc
        else:
            error = None
        if error is not None:
            assert error.code in PROTOCOL_CODES, error
            assert error.message
            assert state.to_dict() == before
            continue
        in_place = state.copy()
        apply_in_place(in_place, action)
        assert in_place == new
        state = new
        accepted.append(action)
        check_invariants(state)
    assert replay(rules, shoe, position, seats, 2, 100, accepted) == state
    event(f"ended in {state.phase}")
    for seat in state.seats.values():
        if len(seat.hands) > 1:
            event("split")
        if seat.insurance:
            event("insured")
        for hand in seat.hands:
            event(f"hand {hand.status}")
