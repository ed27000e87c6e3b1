"""Properties over random games: every card accounted for, no hand in another viewer's view, refusals change
nothing and agree with `legal_actions`, replay equals live play, the JSON round trip, and the simultaneous
throw-in (every attacker who may add can add, whoever moves first, and the game still ends)."""

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cards.errors import Refused
from durak.engine import DurakRules, GameState, apply, legal_actions, new_deck_order, new_game, replay
from durak.engine.cards import CARDS
from durak.engine.game import ACTIONS
from durak.engine.rules import ATTACK_TYPES, LIMITS, VARIANTS
from durak.engine.state import attackers, throwers
from durak.engine.view import view_for

from .conftest import all_cards

DECK = sorted(new_deck_order())
ALL_CARDS = sorted(CARDS)

rules_strategy = st.builds(
    DurakRules,
    players=st.integers(2, 6),
    variant=st.sampled_from(VARIANTS),
    attack=st.sampled_from(ATTACK_TYPES),
    limit=st.sampled_from(LIMITS),
)


def probe(rng: random.Random, state: GameState) -> dict:
    """An action that may or may not be legal: often a card of the player's own hand."""
    player = rng.randrange(state.rules.players)
    hand = state.hands[player]
    card = rng.choice(hand) if hand and rng.random() < 0.7 else rng.choice(ALL_CARDS)
    targets = [attack for attack, defence in state.table if defence is None]
    target = rng.choice(targets) if targets and rng.random() < 0.8 else rng.choice(ALL_CARDS)
    return {"action": rng.choice(MOVES), "player": player, "card": card, "target": target}


#: The moves of play, accepted exactly when `legal_actions` lists them; `surrender` is open to any player
#: still in the game at any time and listed nowhere (the loop below checks it apart).
MOVES = tuple(action for action in ACTIONS if action != "surrender")


def canonical(action: dict) -> dict:
    """The action without the keys its kind does not use (as `legal_actions` lists it)."""
    keep = {"attack": ("card",), "transfer": ("card",), "beat": ("card", "target")}.get(action["action"], ())
    return {key: value for key, value in action.items() if key in ("action", "player", *keep)}


def check_views(state: GameState) -> None:
    for viewer in (None, *range(state.rules.players)):
        text = json.dumps(view_for(state, viewer))
        for seat, hand in enumerate(state.hands):
            if seat == viewer:
                continue
            # The trump card is public: face up under the talon, or shown at the deal with 6 players.
            assert not [card for card in hand if card != state.trump and f'"{card}"' in text]


@pytest.mark.slow
@settings(derandomize=True, max_examples=120, deadline=None)
@given(rules=rules_strategy, seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(rules, seed):
    rng = random.Random(seed)
    deck = new_deck_order()
    rng.shuffle(deck)
    state = new_game(rules, deck)
    actions = []
    while not state.finished:
        assert sorted(all_cards(state)) == DECK
        check_views(state)
        check_throw_in(state)
        attempt = probe(rng, state)
        legal = legal_actions(state, attempt["player"])
        before = json.dumps(state.to_dict())
        if canonical(attempt) in legal:
            apply(state, attempt)
        else:
            with pytest.raises(Refused):
                apply(state, attempt)
            assert json.dumps(state.to_dict()) == before
        quitter = rng.randrange(rules.players)
        if quitter in state.out:
            with pytest.raises(Refused):
                apply(state, {"action": "surrender", "player": quitter})
        else:
            conceded = apply(state, {"action": "surrender", "player": quitter})
            assert (conceded.finished, conceded.fool) == (True, quitter)
            assert sorted(all_cards(conceded)) == DECK
        options = [action for player in range(rules.players) for action in legal_actions(state, player)]
        assert options, "nobody can move in an unfinished game"
        action = rng.choice(options)
        state = apply(state, action)
        actions.append(action)
    assert sorted(all_cards(state)) == DECK
    assert legal_actions(state, 0) == []
    live = json.dumps(state.to_dict())
    assert json.dumps(replay(rules, deck, actions).to_dict()) == live
    assert json.dumps(GameState.from_dict(json.loads(live)).to_dict()) == live


def check_throw_in(state: GameState) -> None:
    """Once the bout is led, every attacker the attack type allows who has cards and is not done may add
    (done is offered them, and any fitting card of theirs is accepted while the bout has room); nobody else
    may add or say done."""
    if not state.table or state.finished:
        return
    ranks = {card[0] for pair in state.table for card in pair if card is not None}
    eligible = [seat for seat in attackers(state) if state.hands[seat] and seat not in state.done]
    assert throwers(state) == eligible
    for seat in range(state.rules.players):
        done = {"action": "done", "player": seat}
        assert (done in legal_actions(state, seat)) == (seat in eligible)
        if seat not in eligible:
            with pytest.raises(Refused) as refused:
                apply(state, done)
            assert refused.value.code in ("not_your_turn", "game_over")
            continue
        passport = state.passports[seat] if state.passports else None
        for card in state.hands[seat]:
            if card[0] in ranks and card[0] != passport and len(state.table) < state.limit:
                after = apply(state, {"action": "attack", "player": seat, "card": card})
                assert (card, None) in after.table or after.bout == state.bout + 1


@settings(derandomize=True, max_examples=60, deadline=None)
@given(rules=rules_strategy, seed=st.integers(0, 2**32 - 1))
def test_any_attacker_may_throw_in_first_and_the_game_still_ends(rules, seed):
    """Whoever of the attackers moves (chosen at random among everyone's legal actions, attackers often
    before the defender), the throw-in rule holds and the game ends; the action log replays to it."""
    rng = random.Random(seed)
    deck = new_deck_order()
    rng.shuffle(deck)
    state = new_game(rules, deck)
    actions = []
    while not state.finished:
        check_throw_in(state)
        options = [action for player in range(rules.players) for action in legal_actions(state, player)]
        adding = [action for action in options if action["player"] != state.defender]
        action = rng.choice(adding if adding and rng.random() < 0.5 else options)
        state = apply(state, action)
        actions.append(action)
        assert len(actions) < 3000, "the game does not end"
    assert json.dumps(replay(rules, deck, actions).to_dict()) == json.dumps(state.to_dict())
