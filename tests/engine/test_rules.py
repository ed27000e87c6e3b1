import json

import pytest

from blackjack.engine import PRESETS, RuleSet, get_preset, parse_rules
from cards.errors import Refused


def test_defaults_are_the_vegas_strip_game():
    assert RuleSet() == PRESETS["Vegas Strip"]
    assert RuleSet().summary() == "6 decks · S17 · DAS · LS · 3:2"


def test_presets_follow_the_issue():
    assert set(PRESETS) == {"Vegas Strip", "Downtown", "Atlantic City", "European", "Single deck 6:5"}
    downtown = PRESETS["Downtown"]
    assert (downtown.decks, downtown.dealer_hits_soft_17, downtown.double_after_split) == (2, True, True)
    atlantic = PRESETS["Atlantic City"]
    assert (atlantic.decks, atlantic.dealer_hits_soft_17, atlantic.surrender) == (8, False, "late")
    european = PRESETS["European"]
    assert (european.decks, european.dealer_peek, european.double_on) == (6, False, "9-11")
    single = PRESETS["Single deck 6:5"]
    assert (single.decks, single.dealer_hits_soft_17, single.double_after_split) == (1, True, False)
    assert single.blackjack_payout == "6:5"
    assert single.summary() == "1 deck · H17 · 6:5"


def test_get_preset_ignores_letter_case_and_refuses_unknown_names():
    assert get_preset("european") is PRESETS["European"]
    with pytest.raises(Refused) as caught:
        get_preset("Monte Carlo")
    assert caught.value.code == "invalid_rules"


def test_dict_round_trip_is_json_safe():
    rules = RuleSet(decks=2, charlie=5, suited_678_bonus="2:1", penetration=0, dealer_peek=False)
    data = json.loads(json.dumps(rules.to_dict()))
    assert RuleSet.from_dict(data) == rules
    assert RuleSet.from_dict({"decks": 1}) == RuleSet(decks=1)


def test_ratios():
    assert RuleSet().blackjack_ratio == (3, 2)
    assert RuleSet(blackjack_payout="6:5").blackjack_ratio == (6, 5)
    assert RuleSet(suited_678_bonus="3:1").suited_678_ratio == (3, 1)
    assert RuleSet().suited_678_ratio is None


def test_summary_names_every_departure_from_the_default_game():
    rules = RuleSet(
        decks=1,
        dealer_hits_soft_17=True,
        dealer_peek=False,
        original_bets_only=True,
        double_on="10-11",
        max_split_hands=3,
        resplit_aces=True,
        hit_split_aces=True,
        surrender="none",
        blackjack_payout="6:5",
        charlie=5,
        suited_678_bonus="2:1",
    )
    assert rules.summary() == (
        "1 deck · H17 · no hole card (OBO) · D10-11 · DAS · split to 3 · RSA · HSA · 6:5 · 5-card charlie"
        " · suited 6-7-8 2:1"
    )
    assert RuleSet(max_split_hands=1, surrender="early").summary() == "6 decks · S17 · no split · ES · 3:2"


@pytest.mark.parametrize(
    "fields",
    [
        {"decks": 0},
        {"decks": 9},
        {"blackjack_payout": "7:5"},
        {"blackjack_payout": "3/2"},
        {"double_on": "9-10"},
        {"max_split_hands": 0},
        {"max_split_hands": 5},
        {"surrender": "always"},
        {"penetration": 0.3},
        {"penetration": 0.95},
        {"penetration": float("nan")},
        {"charlie": 4},
        {"suited_678_bonus": "2:0"},
        {"suited_678_bonus": "two to one"},
        {"resplit_aces": True, "max_split_hands": 1},
        {"resplit_aces": True, "max_split_hands": 2},
        {"hit_split_aces": True, "max_split_hands": 1},
        {"surrender": "early", "dealer_peek": False},
        {"original_bets_only": True},
    ],
)
def test_invalid_values_and_combinations_are_refused(fields):
    with pytest.raises(Refused) as caught:
        RuleSet.from_dict(fields)
    assert caught.value.code == "invalid_rules"
    assert caught.value.message


@pytest.mark.parametrize(
    "fields",
    [
        {"decks": True},
        {"decks": "6"},
        {"decks": 6.0},
        {"dealer_hits_soft_17": 1},
        {"penetration": "0.75"},
        {"penetration": True},
        {"charlie": 5.0},
        {"blackjack_payout": None},
        {"colour": "green"},
    ],
)
def test_wrong_types_and_unknown_fields_are_bad_messages(fields):
    with pytest.raises(Refused) as caught:
        RuleSet.from_dict(fields)
    assert caught.value.code == "bad_message"


@pytest.mark.parametrize(
    ("valid", "wrong"),
    [({"decks": 6}, {"decks": 6.0}), ({"dealer_hits_soft_17": True}, {"dealer_hits_soft_17": 1})],
)
def test_a_rule_set_built_before_is_reused_but_never_for_a_value_of_another_type(valid, wrong):
    assert RuleSet.from_dict(dict(valid)) is RuleSet.from_dict(dict(valid))  # built once, immutable
    assert valid == wrong  # equal in Python, yet the wrong type is still refused
    with pytest.raises(Refused) as caught:
        RuleSet.from_dict(wrong)
    assert caught.value.code == "bad_message"


def test_meaningless_but_harmless_options_are_accepted():
    # Double after split is on by default; with no splitting it simply never applies.
    assert RuleSet(max_split_hands=1).double_after_split
    assert RuleSet(dealer_peek=False, original_bets_only=True).original_bets_only
    assert RuleSet(penetration=0).penetration == 0


def test_from_dict_needs_an_object():
    with pytest.raises(Refused) as caught:
        RuleSet.from_dict(["decks", 6])
    assert caught.value.code == "bad_message"


def test_parse_rules_accepts_a_preset_or_json():
    assert parse_rules(" Downtown ") is PRESETS["Downtown"]
    assert parse_rules('{"decks": 2, "surrender": "none"}') == RuleSet(decks=2, surrender="none")
    with pytest.raises(Refused) as caught:
        parse_rules('{"decks": 2,')
    assert caught.value.code == "bad_message"
