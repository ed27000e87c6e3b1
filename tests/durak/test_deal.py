"""The deal, the trump, the first attacker, and the provably fair deck (shared with the blackjack shoe)."""

import hashlib
import json

import pytest

from blackjack.engine.shoe import shuffled_shoe
from cards.errors import Refused
from cards.fairness import combine_client_seeds, seed_hash
from durak.engine import DurakRules, new_deck_order, new_game, shuffled_deck
from durak.engine.verify import main as verify_main
from tests.engine.test_shoe import reference_fisher_yates

from .conftest import scripted_deck

SEED = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"


def test_two_players_get_six_each_and_the_trump_lies_under_the_talon():
    deck = new_deck_order()
    state = new_game(DurakRules(players=2), deck)
    assert state.hands == (tuple(deck[0:12:2]), tuple(deck[1:12:2]))
    assert state.trump == deck[12] == "9s"
    assert state.talon == (*deck[13:], "9s")
    assert len(state.talon) == 24
    assert state.attacker == 0  # 6s, the lowest trump
    assert state.defender == 1


def test_six_players_leave_no_talon_and_the_last_card_dealt_is_the_trump():
    deck = new_deck_order()
    state = new_game(DurakRules(players=6), deck)
    assert state.talon == ()
    assert state.trump == deck[35] == "Ac"
    assert "Ac" in state.hands[5]  # it stays with the last seat, shown to all
    assert all(len(hand) == 6 for hand in state.hands)
    assert state.attacker == 3  # 6c, dealt fourth
    assert state.defender == 4


def test_the_lowest_trump_leads():
    hands = [["7s", "8s", "9c", "Ts", "Js", "Qs"], ["6h", "7h", "8c", "9h", "Th", "Jh"]]
    state = new_game(DurakRules(players=2), scripted_deck(hands, trump="Ac"))
    assert state.attacker == 1


def test_without_a_trump_in_any_hand_the_lowest_card_leads():
    hands = [["7s", "8s", "9s", "Ts", "Js", "6d"], ["6h", "7h", "8h", "9h", "Th", "Jh"]]
    state = new_game(DurakRules(players=2), scripted_deck(hands, trump="6c"))
    assert state.attacker == 1  # 6h: sixes are the lowest, hearts come before diamonds


@pytest.mark.parametrize(("previous_fool", "leader"), [(0, 1), (1, 2), (2, 0)])
def test_the_player_left_of_the_previous_fool_leads(previous_fool, leader):
    state = new_game(DurakRules(players=3), new_deck_order(), previous_fool=previous_fool)
    assert (state.attacker, state.defender) == (leader, (leader + 1) % 3)


def test_an_explicit_first_attacker_leads():
    assert new_game(DurakRules(players=4), new_deck_order(), first_attacker=2).attacker == 2


@pytest.mark.parametrize(
    "kwargs",
    [
        {"first_attacker": 1, "previous_fool": 0},
        {"first_attacker": 3},
        {"previous_fool": -1},
        {"passports": ["6", "6"]},
    ],
)
def test_bad_game_arguments_are_refused(kwargs):
    with pytest.raises(Refused) as caught:
        new_game(DurakRules(players=3), new_deck_order(), **kwargs)
    assert caught.value.code == "bad_message"


@pytest.mark.parametrize("deck", [new_deck_order()[:35], [*new_deck_order()[:35], "6s"], ["As"] * 36])
def test_a_deck_must_be_the_36_cards(deck):
    with pytest.raises(Refused) as caught:
        new_game(DurakRules(), deck)
    assert caught.value.code == "bad_message"


@pytest.mark.parametrize(
    "bad", [{"players": 1}, {"players": 7}, {"variant": "x"}, {"attack": "x"}, {"limit": 6}]
)
def test_bad_rules_are_refused(bad):
    with pytest.raises(Refused) as caught:
        DurakRules.parse(bad)
    assert caught.value.code == "invalid_rules"


def test_the_blackjack_shoe_order_is_unchanged():
    """Pinned before the shuffle was shared with Durak: a blackjack shoe never changes."""
    one_deck = shuffled_shoe(server_seed=SEED, client_seed="alice", decks=1)
    assert " ".join(one_deck) == (
        "Jc 2h Ah 4d As Kd Js 6c 4h 8c Td 4s 7c 7d 6h 6s 8h Kc 6d 7h Kh 3s Jd 5s 7s 9s Jh 4c 8s Qd "
        "2c 2s 5c Ad Ac 3h Qs Ks 9h 9c 8d Ts Tc Th 3d 2d 5d Qh 9d Qc 5h 3c"
    )
    six_decks = shuffled_shoe(server_seed=SEED, client_seed="pinned", decks=6, nonce=7)
    digest = hashlib.sha256(" ".join(six_decks).encode()).hexdigest()
    assert digest == "f2d4bcd769f3551608805e68db7a7c69ce195c73dae4f101ef09dfc798894c1b"


@pytest.mark.parametrize(("client_seed", "nonce"), [("alice", 0), ("", 5)])
def test_the_deck_is_the_shoe_algorithm_on_36_cards(client_seed, nonce):
    deck = shuffled_deck(server_seed=SEED, client_seed=client_seed, nonce=nonce)
    assert deck == reference_fisher_yates(SEED, f"{client_seed}:{nonce}", new_deck_order())
    assert sorted(deck) == sorted(new_deck_order())
    assert deck != shuffled_deck(server_seed=SEED, client_seed=client_seed, nonce=nonce + 1)


def test_verify_prints_the_deck_and_the_deal(capsys):
    assert (
        verify_main(
            ["--server-seed", SEED, "--player-seed", "a", "--player-seed", "b", "--players", "3", "--json"]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    client_seed = combine_client_seeds(["b", "a"])
    deck = shuffled_deck(server_seed=SEED, client_seed=client_seed)
    game = new_game(DurakRules(players=3), deck)
    assert report["server_seed_hash"] == seed_hash(SEED)
    assert report["client_seed"] == client_seed
    assert report["deck"] == deck
    assert report["hands"] == [list(hand) for hand in game.hands]
    assert report["trump"] == game.trump
    assert report["talon"] == list(game.talon)


def test_verify_refuses_a_bad_seed(capsys):
    assert verify_main(["--server-seed", "00", "--client-seed", "x", "--players", "2"]) == 2
    assert "64 hexadecimal" in capsys.readouterr().err
