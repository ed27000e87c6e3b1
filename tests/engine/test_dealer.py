"""Exact dealer probabilities against the published tables (shared/reference/blackjack-facts.md)."""

import pytest

from blackjack.engine.dealer import (
    BLACKJACK,
    BUST,
    OUTCOMES,
    blackjack_probability,
    bust_probability,
    composition,
    dealer_distribution,
    remove,
)

# One deck, dealer stands on soft 17, before the peek (upcard removed, nothing else).
# Columns: 17, 18, 19, 20, 21, blackjack, bust.
ONE_DECK_S17 = {
    2: (0.138976, 0.131762, 0.131815, 0.123948, 0.120526, 0.000000, 0.352973),
    3: (0.130313, 0.130946, 0.123761, 0.123345, 0.116047, 0.000000, 0.375588),
    4: (0.130973, 0.114163, 0.120679, 0.116286, 0.115096, 0.000000, 0.402803),
    5: (0.119687, 0.123483, 0.116909, 0.104694, 0.106321, 0.000000, 0.428905),
    6: (0.166948, 0.106454, 0.107192, 0.100705, 0.097878, 0.000000, 0.420823),
    7: (0.372345, 0.138583, 0.077334, 0.078897, 0.072987, 0.000000, 0.259854),
    8: (0.130857, 0.362989, 0.129445, 0.068290, 0.069791, 0.000000, 0.238627),
    9: (0.121886, 0.103921, 0.357391, 0.122250, 0.061109, 0.000000, 0.233442),
    10: (0.114418, 0.112879, 0.114662, 0.328879, 0.036466, 0.078431, 0.214264),
    1: (0.126128, 0.131003, 0.129486, 0.131553, 0.051565, 0.313725, 0.116540),
}

# Infinite deck, before the peek (Krigman's tables, four decimals).
INFINITE_BUST_S17 = {
    2: 0.3536,
    3: 0.3739,
    4: 0.3945,
    5: 0.4164,
    6: 0.4232,
    7: 0.2623,
    8: 0.2447,
    9: 0.2284,
    10: 0.2121,
    1: 0.1153,
}
INFINITE_BUST_H17 = {6: 0.4395, 1: 0.1389}


@pytest.mark.parametrize("up", sorted(ONE_DECK_S17))
def test_one_deck_table_to_a_millionth(up):
    got = dealer_distribution(up, remove(composition(1), up), hits_soft_17=False)
    assert got == pytest.approx(ONE_DECK_S17[up], abs=1e-6)
    assert sum(got) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("up", sorted(INFINITE_BUST_S17))
def test_infinite_deck_bust_rates_s17(up):
    assert bust_probability(up, None, hits_soft_17=False) == pytest.approx(INFINITE_BUST_S17[up], abs=0.00005)


def test_infinite_deck_bust_rates_h17():
    for up, published in INFINITE_BUST_H17.items():
        assert bust_probability(up, None, hits_soft_17=True) == pytest.approx(published, abs=0.00005)
    for up in (2, 3, 4, 5, 7, 8, 9, 10):
        h17 = bust_probability(up, None, hits_soft_17=True)
        assert h17 == pytest.approx(INFINITE_BUST_S17[up], abs=0.004)
        assert h17 >= bust_probability(up, None, hits_soft_17=False) - 1e-12


def test_no_blackjack_is_the_table_without_blackjacks_renormalised():
    for decks in (1, 6):
        for up in (1, 10):
            counts = remove(composition(decks), up)
            before = dealer_distribution(up, counts, hits_soft_17=True)
            after = dealer_distribution(up, counts, hits_soft_17=True, no_blackjack=True)
            assert after[BLACKJACK] == 0
            kept = 1 - before[BLACKJACK]
            expected = [q / kept if k != BLACKJACK else 0 for k, q in enumerate(before)]
            assert after == pytest.approx(expected, abs=1e-12)
            assert before[BLACKJACK] == pytest.approx(blackjack_probability(up, counts), abs=1e-15)


def test_upcards_without_blackjack_are_not_changed_by_the_peek():
    counts = remove(composition(2), 7)
    assert dealer_distribution(7, counts, hits_soft_17=False, no_blackjack=True) == dealer_distribution(
        7, counts, hits_soft_17=False
    )
    assert blackjack_probability(7, counts) == 0


def test_insurance_fact_six_decks():
    # Ace up, nothing else known: 96 tens among the 311 other cards.
    assert blackjack_probability(1, remove(composition(6), 1)) == pytest.approx(96 / 311, abs=1e-15)


def test_h17_changes_only_hands_through_soft_17():
    counts = remove(composition(6), 6)
    s17 = dealer_distribution(6, counts, hits_soft_17=False)
    h17 = dealer_distribution(6, counts, hits_soft_17=True)
    assert h17[0] < s17[0]  # fewer 17s
    assert h17[BUST] > s17[BUST]
    assert sum(h17) == pytest.approx(1.0, abs=1e-12)


def test_a_finite_shoe_converges_to_the_infinite_deck():
    infinite = dealer_distribution(6, None, hits_soft_17=False)
    one = dealer_distribution(6, remove(composition(1), 6), hits_soft_17=False)
    eight = dealer_distribution(6, remove(composition(8), 6), hits_soft_17=False)
    assert max(abs(a - b) for a, b in zip(eight, infinite, strict=True)) < max(
        abs(a - b) for a, b in zip(one, infinite, strict=True)
    )
    assert eight == pytest.approx(infinite, abs=0.003)


def test_depleted_shoe_follows_the_cards_left():
    # Only tens left: a 6 up draws a ten (16), then must draw again and busts.
    tens_only = (0,) * 9 + (5,)
    assert dealer_distribution(6, tens_only, hits_soft_17=False)[BUST] == 1.0
    # Only sevens left behind a ten: 17 every time.
    sevens = (0,) * 6 + (3,) + (0,) * 3
    assert dealer_distribution(10, sevens, hits_soft_17=False)[0] == 1.0


def test_bad_inputs():
    assert len(OUTCOMES) == 7
    with pytest.raises(ValueError, match="upcard"):
        dealer_distribution(11, None, hits_soft_17=False)
    with pytest.raises(ValueError, match="no card"):
        remove((0,) * 10, 5)
    with pytest.raises(ValueError, match="no cards left"):
        dealer_distribution(5, (0,) * 10, hits_soft_17=False)
