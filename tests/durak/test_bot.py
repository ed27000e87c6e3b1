"""The bot: the simple policy (`easy`'s) on scripted positions, determinism, and many games without an
exception. The levels: `test_bot_levels.py`."""

import multiprocessing
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import pytest

from durak.bot import CYCLE_BOUTS, actor, choose, play
from durak.bots import basic
from durak.engine import DurakRules, apply, legal_actions, new_deck_order, new_game
from durak.engine.rules import ATTACK_TYPES, LIMITS, VARIANTS

from .conftest import act, all_cards, position, scripted_deck

# Trump clubs; seat 0 leads.
HANDS = [["9s", "7h", "Qd", "6c", "Ks", "7d"], ["8s", "Ts", "Jh", "Ac", "Qc", "6d"]]


def simple(state, player):
    """The simple policy's action (`easy` plays it when it does not play at random)."""
    options = legal_actions(state, player)
    return basic.choose(state, player, options) if options else None


def game(**options):
    return new_game(DurakRules(players=2, **options), scripted_deck(HANDS, trump="Tc"), first_attacker=0)


def test_leads_the_lowest_non_trump_suits_in_fixed_order():
    assert simple(game(), 0) == {"action": "attack", "player": 0, "card": "7h"}
    assert simple(game(), 1) is None


def test_beats_with_the_cheapest_card():
    state = act(game(), ("attack", 0, "7h"))
    assert simple(state, 1) == {"action": "beat", "player": 1, "card": "Jh", "target": "7h"}
    state = act(game(), ("attack", 0, "9s"))
    assert simple(state, 1) == {"action": "beat", "player": 1, "card": "Ts", "target": "9s"}


def test_takes_rather_than_spend_a_high_trump_early():
    state = act(game(), ("attack", 0, "Qd"))
    assert simple(state, 1) == {"action": "take", "player": 1}


def test_spends_trumps_when_the_talon_is_low():
    state = position(DurakRules(players=2), [["Qd", "9s"], ["Qc", "8h"]], "Ac", attacker=0)
    state = act(state, ("attack", 0, "Qd"))
    assert simple(state, 1) == {"action": "beat", "player": 1, "card": "Qc", "target": "Qd"}


def test_throws_in_cheap_cards_keeps_high_ones_and_trumps():
    state = act(game(), ("attack", 0, "7h"), ("beat", 1, "Jh", "7h"))
    assert simple(state, 0) == {"action": "attack", "player": 0, "card": "7d"}
    state = act(state, ("attack", 0, "7d"), ("take", 1))
    assert simple(state, 0) == {"action": "done", "player": 0}  # no other seven


def test_transfers_when_cheap_in_perevodnoy():
    rules = DurakRules(players=3, variant="perevodnoy")
    hands = [
        ["7s", "9h", "Jd", "Kd", "As", "8d"],
        ["7h", "8s", "Th", "Qs", "Ah", "Kh"],
        ["6s", "6h", "6d", "9s", "9d", "Td"],
    ]
    state = act(position(rules, hands, "Ac", attacker=0), ("attack", 0, "7s"))
    assert simple(state, 1) == {"action": "transfer", "player": 1, "card": "7h"}


def test_passport_throws_the_defenders_passport_rank_first():
    rules = DurakRules(players=2, variant="passport")
    hands = [["7s", "7h", "Th", "Ad"], ["Tc", "9d", "Qs", "Kd"]]
    state = position(rules, hands, "Ac", attacker=0, passports=("6", "T"))
    assert simple(state, 0) == {"action": "attack", "player": 0, "card": "7s"}
    state = act(state, ("attack", 0, "7s"), ("beat", 1, "Tc", "7s"))
    assert simple(state, 0) == {"action": "attack", "player": 0, "card": "Th"}  # it forces a take
    state = act(state, ("attack", 0, "Th"))
    assert simple(state, 1) == {"action": "take", "player": 1}


def test_deterministic_without_a_generator_reproducible_with_a_seeded_one():
    deck = new_deck_order()
    random.Random(7).shuffle(deck)
    rules = DurakRules(players=4, variant="perevodnoy")
    assert play(new_game(rules, deck))[1] == play(new_game(rules, deck))[1]
    assert (
        play(new_game(rules, deck), random.Random(3))[1] == play(new_game(rules, deck), random.Random(3))[1]
    )


def bot_games(count: int, seed: str) -> int:
    rng = random.Random(seed)
    finished = 0
    for _ in range(count):
        rules = DurakRules(
            players=rng.randint(2, 6),
            variant=rng.choice(VARIANTS),
            attack=rng.choice(ATTACK_TYPES),
            limit=rng.choice(LIMITS),
        )
        deck = new_deck_order()
        rng.shuffle(deck)
        state, _ = play(new_game(rules, deck), rng)
        assert actor(state) is None
        assert sorted(all_cards(state)) == sorted(deck)
        finished += state.finished
    return finished


def test_a_few_hundred_bot_games_finish():
    assert bot_games(300, "fast") == 300


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_twelve_thousand_bot_games_finish():
    """Two processes of 6,000 seeded games each (spawned: the test process has threads to not copy): about a
    minute of both cores of a CI machine, the most of its 30 minutes this check may take."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        finished = pool.map(bot_games, [6_000, 6_000], ["slow-0", "slow-1"])
        assert sum(finished) == 12_000


def test_a_cycling_game_is_ended_by_random_legal_moves():
    """Seat 0 keeps a passport six it cannot play: the simple policy takes and throws the same cards round
    (found at bout 349 in a random run); past CYCLE_BOUTS the bot's random moves end it."""
    rules = DurakRules(players=6, variant="passport")
    hands = [["6h", "7d", "Td"], [], [], ["6s", "7s", "As", "7h", "Ad", "7c"], [], ["6c", "Ah", "Jd", "Ac"]]
    state = replace(position(rules, hands, "Jd", attacker=5, out=(1, 2, 4)), bout=CYCLE_BOUTS)
    assert choose(state, 5) == choose(state, 5)  # still deterministic without a generator
    for _ in range(5000):
        player = actor(state)
        if player is None:
            break
        state = apply(state, choose(state, player))
    assert state.finished
