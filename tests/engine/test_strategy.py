"""Basic strategy computed from the rules, checked against the published charts cell by cell."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from blackjack.engine import RANKS, SUITS, RuleSet, apply, hand_value
from blackjack.engine.strategy import PLAYING_ACTIONS, basic_strategy, recommend
from tests.engine.conftest import start

UPCARDS = ["2", "3", "4", "5", "6", "7", "8", "9", "T", "A"]
CARDS = [rank + suit for rank in RANKS for suit in SUITS]

# The published basic strategy for 4 to 8 decks, dealer stands on soft 17, double any two cards, double after
# split, late surrender, peek (Wizard of Odds' 4-8 deck chart; the same chart is printed on casino strategy
# cards). Rows are two-card hands, columns the dealer's upcard 2..A. H hit, S stand, D double (else hit),
# Ds double (else stand), P split, Rh/Rs/Rp surrender (else hit/stand/split).
S17_DAS_LS = {
    "hard": {
        **{str(total): "H H H H H H H H H H" for total in range(5, 9)},
        "9": "H D D D D H H H H H",
        "10": "D D D D D D D D H H",
        "11": "D D D D D D D D D H",
        "12": "H H S S S H H H H H",
        "13": "S S S S S H H H H H",
        "14": "S S S S S H H H H H",
        "15": "S S S S S H H H Rh H",
        "16": "S S S S S H H Rh Rh Rh",
        **{str(total): "S S S S S S S S S S" for total in range(17, 21)},
    },
    "soft": {
        "13": "H H H D D H H H H H",
        "14": "H H H D D H H H H H",
        "15": "H H D D D H H H H H",
        "16": "H H D D D H H H H H",
        "17": "H D D D D H H H H H",
        "18": "S Ds Ds Ds Ds S S H H H",
        "19": "S S S S S S S S S S",
        "20": "S S S S S S S S S S",
    },
    "pairs": {
        "A": "P P P P P P P P P P",
        "2": "P P P P P P H H H H",
        "3": "P P P P P P H H H H",
        "4": "H H H P P H H H H H",
        "5": "D D D D D D D D H H",
        "6": "P P P P P H H H H H",
        "7": "P P P P P P H H H H",
        "8": "P P P P P P P P P P",
        "9": "P P P P P S P P S S",
        "T": "S S S S S S S S S S",
    },
}

# The same chart when the dealer hits soft 17 (Wizard of Odds' 4-8 deck H17 chart): the cells that differ.
H17_CHANGES = {
    ("hard", "11", "A"): "D",
    ("hard", "15", "A"): "Rh",
    ("hard", "17", "A"): "Rs",
    ("soft", "18", "2"): "Ds",
    ("soft", "19", "6"): "Ds",
    ("pairs", "8", "A"): "Rp",
}

# Genuinely borderline cells, where the computed strategy may differ from the chart: soft 13 against a 5 with
# 8 decks, S17. The two options are within 0.1% of a bet (total-dependent averages with and without card
# removal disagree), so the test below asserts that closeness instead of the code.
BORDERLINE = {(8, False, "soft", "13", "5"): ("As", "2h", "5d", ("double", "hit"))}


def published(dealer_hits_soft_17: bool) -> dict[tuple[str, str, str], str]:
    cells = {
        (section, row, up): code
        for section, rows in S17_DAS_LS.items()
        for row, codes in rows.items()
        for up, code in zip(UPCARDS, codes.split(), strict=True)
    }
    if dealer_hits_soft_17:
        cells.update(H17_CHANGES)
    return cells


@pytest.mark.parametrize("decks", [4, 6, 8])
@pytest.mark.parametrize("h17", [False, True], ids=["S17", "H17"])
def test_computed_chart_matches_the_published_multideck_chart(decks, h17):
    strategy = basic_strategy(RuleSet(decks=decks, dealer_hits_soft_17=h17))
    chart = strategy.chart()
    assert chart["upcards"] == UPCARDS
    mismatches = []
    for (section, row, up), code in published(h17).items():
        borderline = BORDERLINE.get((decks, h17, section, row, up))
        if borderline is not None:
            first, second, dealer_up, (option_a, option_b) = borderline
            values = strategy.expected_values([first, second], dealer_up)
            assert abs(values[option_a] - values[option_b]) < 0.001
            continue
        if chart[section][row][up] != code:
            mismatches.append(
                f"{section} {row} vs {up}: computed {chart[section][row][up]}, published {code}"
            )
    assert mismatches == []


def test_no_double_after_split_chart():
    # Published 4-8 deck pair splitting without DAS: fewer small pairs are split.
    chart = basic_strategy(RuleSet(double_after_split=False)).chart()["pairs"]
    assert [chart["2"][up] for up in UPCARDS] == ["H", "H", "P", "P", "P", "P", "H", "H", "H", "H"]
    assert [chart["3"][up] for up in UPCARDS] == ["H", "H", "P", "P", "P", "P", "H", "H", "H", "H"]
    assert [chart["4"][up] for up in UPCARDS] == ["H"] * 10
    assert [chart["6"][up] for up in UPCARDS] == ["H", "P", "P", "P", "P", "H", "H", "H", "H", "H"]


def test_without_surrender_the_surrender_cells_fall_back():
    strategy = basic_strategy(RuleSet(surrender="none"))
    chart = strategy.chart()
    codes = {
        code
        for section in ("hard", "soft", "pairs")
        for row in chart[section].values()
        for code in row.values()
    }
    assert not any(code.startswith("R") for code in codes)
    assert chart["hard"]["16"]["T"] == "H"
    assert chart["hard"]["15"]["T"] == "H"
    assert chart["pairs"]["8"]["T"] == "P"


def test_no_hole_card_game():
    # The European game: doubles and splits lose to a dealer blackjack, so 11 and A,A and 8,8 do not press
    # against a ten or an ace.
    strategy = basic_strategy(RuleSet(dealer_peek=False, double_on="9-11", surrender="none"))
    chart = strategy.chart()
    assert chart["hard"]["11"]["T"] == "H"
    assert chart["hard"]["11"]["A"] == "H"
    assert chart["hard"]["10"]["9"] == "D"
    assert chart["pairs"]["A"]["A"] == "H"
    assert chart["pairs"]["8"]["T"] == "H"
    assert chart["pairs"]["8"]["A"] == "H"
    assert chart["pairs"]["8"]["9"] == "P"
    # Double on 9-11 only: soft hands never double.
    assert all(code in ("H", "S") for row in chart["soft"].values() for code in row.values())
    # With original bets only, the extra bets are safe and the peek game's plays come back.
    obo = basic_strategy(RuleSet(dealer_peek=False, original_bets_only=True, surrender="none")).chart()
    assert obo["pairs"]["A"]["A"] == "P"
    assert obo["pairs"]["8"]["T"] == "P"


def test_double_restrictions():
    chart = basic_strategy(RuleSet(double_on="10-11")).chart()
    assert chart["hard"]["9"]["5"] == "H"
    assert chart["soft"]["17"]["5"] == "H"
    assert chart["soft"]["18"]["5"] == "S"
    assert chart["hard"]["10"]["5"] == "D"


def test_early_surrender():
    strategy = basic_strategy(RuleSet(surrender="early"))
    for cards in (["Ts", "6h"], ["9s", "7h"], ["4s", "2h"], ["Ts", "7h"], ["8s", "8h"], ["7s", "7h"]):
        assert strategy.surrenders_early(cards, "Ad"), cards
    for cards in (["Ts", "6h"], ["Ts", "4h"], ["8s", "8h"]):
        assert strategy.surrenders_early(cards, "Kd"), cards
    for cards in (["6s", "5h"], ["Ts", "9h"], ["As", "As"], ["Ts", "Th"], ["As", "7h"]):
        assert not strategy.surrenders_early(cards, "Ad"), cards
    # After the window, the pair of eights is split.
    assert strategy.decide(["8s", "8h"], "Ad", ["hit", "stand", "double", "split"]) == "split"


def test_decide_falls_back_to_the_next_best_allowed_action():
    strategy = basic_strategy(RuleSet())
    assert strategy.decide(["6s", "5h"], "6d", ["hit", "stand", "double"]) == "double"
    assert strategy.decide(["2s", "4h", "5c"], "6d", ["hit", "stand"]) == "hit"  # D -> hit
    assert strategy.decide(["As", "7h"], "4d", ["hit", "stand", "double"]) == "double"
    assert strategy.decide(["As", "2h", "5c"], "4d", ["hit", "stand"]) == "stand"  # Ds -> stand
    assert strategy.decide(["Ts", "6h"], "Td", ["hit", "stand", "double", "surrender"]) == "surrender"
    assert strategy.decide(["Ts", "6h"], "Td", ["hit", "stand", "double"]) == "hit"  # Rh -> hit
    assert strategy.decide(["8s", "8h"], "6d", ["hit", "stand", "double"]) == "stand"  # no more splits: 16
    assert strategy.decide(["As", "Kh"], "6d", ["stand"]) == "stand"  # split aces take one card
    assert strategy.decide(["2s", "Th", "4c"], "Td", ["hit", "stand"]) == "hit"  # three-card 16: Rh -> hit
    assert strategy.decide(["7s", "Th"], "Td", ["hit", "stand", "double", "surrender"]) == "stand"
    h17 = basic_strategy(RuleSet(dealer_hits_soft_17=True))
    assert h17.decide(["8s", "8h"], "Ad", ["hit", "stand", "double", "split", "surrender"]) == "surrender"
    assert h17.decide(["8s", "8h"], "Ad", ["hit", "stand", "double", "split"]) == "split"  # Rp
    assert h17.decide(["Ts", "7h"], "Ad", ["hit", "stand"]) == "stand"  # Rs
    with pytest.raises(ValueError, match="playing decision"):
        strategy.decide(["Ts", "6h"], "Td", ["insurance"])


def test_decide_always_returns_an_allowed_action():
    strategy = basic_strategy(RuleSet(decks=2, dealer_hits_soft_17=True, surrender="none"))
    ranks = "A23456789TJQK"
    allowed_sets = [("hit", "stand"), ("stand",), ("hit", "stand", "double"), tuple(PLAYING_ACTIONS)]
    for first in ranks:
        for second in ranks:
            for up in ranks:
                for allowed in allowed_sets:
                    action = strategy.decide([first + "s", second + "h"], up + "d", allowed)
                    assert action in allowed


@settings(max_examples=300, deadline=None)
@given(
    cards=st.lists(st.sampled_from(CARDS), min_size=2, max_size=7),
    up=st.sampled_from(CARDS),
    rules=st.sampled_from(
        [RuleSet(), RuleSet(charlie=5), RuleSet(decks=1, dealer_peek=False, surrender="none")]
    ),
    extra=st.sets(st.sampled_from(["double", "split", "surrender"])),
    can_hit=st.booleans(),
)
def test_decide_handles_any_hand(cards, up, rules, extra, can_hit):
    assume(hand_value(cards)[0] < 21)
    allowed = {"stand", *extra} | ({"hit"} if can_hit else set())
    assert basic_strategy(rules).decide(cards, up, allowed) in allowed


def test_charlie_makes_more_cards_worth_hitting():
    four_card_17 = ["2s", "3h", "5c", "7d"]
    assert basic_strategy(RuleSet()).decide(four_card_17, "Td", ["hit", "stand"]) == "stand"
    assert basic_strategy(RuleSet(charlie=5)).decide(four_card_17, "Td", ["hit", "stand"]) == "hit"
    values = basic_strategy(RuleSet(charlie=5)).expected_values(["2s", "3h", "5c", "7d", "2d"], "Td")
    assert values["stand"] == 1.0


def test_expected_values_are_sane():
    strategy = basic_strategy(RuleSet())
    twenty = strategy.expected_values(["Ts", "Kh"], "6d")
    assert 0.6 < twenty["stand"] < 0.8
    assert twenty["hit"] < -0.8
    eleven = strategy.expected_values(["6s", "5h"], "6d")
    assert eleven["double"] > eleven["hit"] > 0
    assert strategy.expected_values(["Ts", "6h"], "Td")["surrender"] == -0.5


def test_insurance_is_never_taken_and_strategies_are_cached():
    rules = RuleSet(decks=8)
    assert basic_strategy(rules).insurance() is False
    assert basic_strategy(rules) is basic_strategy(RuleSet(decks=8))


def test_recommend_on_a_live_round():
    state = start([("Ts", "6h"), ("9s", "3c")], "Td", "7c", draws=("2d", "5s"))
    assert state.phase == "playing"
    assert recommend(state, 1) == "surrender"
    assert recommend(state, 1, hand=0) == "surrender"
    assert recommend(state, 1, hand=1) is None
    assert recommend(state, 2) is None  # not its turn
    state = apply(state, {"action": "stand", "seat": 1})
    assert recommend(state, 2) == "hit"  # 12 against a ten
    state = apply(state, {"action": "hit", "seat": 2})
    assert recommend(state, 2) == "hit"  # 14 against a ten
    state = apply(state, {"action": "hit", "seat": 2})
    assert recommend(state, 2) == "stand"  # 18
    state = apply(state, {"action": "stand", "seat": 2})
    assert state.phase == "settled"
    assert recommend(state, 2) is None


def test_recommend_in_the_insurance_window_and_outside_play():
    state = start([("Ts", "9h")], "As", "7c")
    assert state.phase == "insurance"
    assert recommend(state, 1) == "decline"
    assert recommend(apply(state, {"action": "timeout"}), 1) == "stand"
    early = start([("Ts", "6h")], "As", "7c", rules=RuleSet(surrender="early"))
    assert recommend(early, 1) == "surrender"
    betting = start([("Ts", "9h")], "6s", "7c")
    assert recommend(betting, 3) is None  # no such seat
