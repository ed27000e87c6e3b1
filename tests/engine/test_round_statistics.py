"""Rounds dealt from real provably fair shoes match exact probabilities (reference: blackjack-facts.md)."""

import math

import pytest

from blackjack.engine import RuleSet, apply_in_place, new_round, shuffled_shoe

SEED = "c0ffee" * 10 + "c0de"
SEATS = range(1, 8)


def natural_probability(decks: int) -> float:
    return 2 * (4 * decks) * (16 * decks) / ((52 * decks) * (52 * decks - 1))


def test_the_reference_formula():
    assert natural_probability(1) == pytest.approx(0.048265, abs=5e-7)
    assert natural_probability(6) == pytest.approx(0.047489, abs=5e-7)


@pytest.mark.slow
@pytest.mark.parametrize(("decks", "rounds"), [(1, 12_000), (6, 4_000)])
def test_natural_rate_and_hole_card_after_an_ace(decks, rounds):
    """Seven seats and the dealer, a fresh shoe every round: each two-card hand is a natural with the exact
    probability, and behind an ace the hole card is a ten with probability 16d / (52d - 1)."""
    rules = RuleSet(decks=decks, penetration=0)
    naturals = hands = aces_up = tens_behind = 0
    for nonce in range(rounds):
        shoe = shuffled_shoe(server_seed=SEED, client_seed="naturals", decks=decks, nonce=nonce)
        state = new_round(rules=rules, shoe=shoe, position=0, seats=SEATS, min_bet=1, max_bet=1)
        for seat in SEATS:
            apply_in_place(state, {"action": "bet", "seat": seat, "amount": 1})
        apply_in_place(state, {"action": "deal"})
        player_naturals = sum(seat.hands[0].status == "blackjack" for seat in state.seats.values())
        up, hole = state.dealer_cards
        dealer_natural = {up[0], hole[0]} & {"A"} and {up[0], hole[0]} & set("TJQK")
        naturals += player_naturals + bool(dealer_natural)
        hands += len(SEATS) + 1
        if up[0] == "A":
            aces_up += 1
            tens_behind += hole[0] in "TJQK"
    p = natural_probability(decks)
    standard_error = math.sqrt(p * (1 - p) / hands)
    assert abs(naturals / hands - p) < 4 * standard_error, (naturals / hands, p, standard_error)
    q = 16 * decks / (52 * decks - 1)
    standard_error = math.sqrt(q * (1 - q) / aces_up)
    assert abs(tens_behind / aces_up - q) < 4 * standard_error, (tens_behind / aces_up, q)
