"""Fairness: a retired shoe's seeds are shown and verify every card of the round; a tampered card, seed or
hash fails the same check."""

import io
import json
from contextlib import redirect_stdout

import pytest
from django.urls import reverse
from django.utils import timezone

from blackjack.engine import verify
from blackjack.engine.rules import PRESETS
from blackjack.engine.shoe import dealing_order, shuffled_shoe
from blackjack.history.fairness import check_dealt, verify_command
from blackjack.history.replay import replay_round
from blackjack.models import ActionLog, Round, Shoe
from cards.fairness import new_server_seed, seed_hash

pytestmark = pytest.mark.django_db

FRESH_SHOE_RULES = PRESETS["Vegas Strip"].to_dict() | {"penetration": 0}  # a new shoe every round


@pytest.fixture
def retired_round(make_table, alice, bob, play_round):
    """A round with random cards (the real shuffle), dealt from a shoe that is retired when it ends."""
    table = make_table("Fresh shoe", rules=FRESH_SHOE_RULES)
    rnd = play_round(table, [(alice, 2, 50), (bob, 5, 20)])
    return Round.objects.select_related("shoe").get(pk=rnd.pk)


def dealt_cards(rnd: Round) -> list[str]:
    return replay_round(rnd, list(ActionLog.objects.filter(round=rnd).order_by("seq"))).dealt


def test_a_retired_shoe_verifies_every_card_of_the_round(retired_round):
    shoe = retired_round.shoe
    assert shoe.retired_at is not None
    dealt = dealt_cards(retired_round)
    assert len(dealt) >= 6  # two hands and the dealer's two cards at least
    check = check_dealt(shoe=shoe, start_position=retired_round.start_position, dealt=dealt)
    assert check.ok, check.message


def test_a_tampered_card_fails(retired_round):
    dealt = dealt_cards(retired_round)
    index = 3
    swapped = next(card for card in ("As", "Kd", "2c") if card != dealt[index])
    tampered = [*dealt[:index], swapped, *dealt[index + 1 :]]
    check = check_dealt(shoe=retired_round.shoe, start_position=retired_round.start_position, dealt=tampered)
    assert check.hash_ok
    assert not check.cards_ok
    assert check.first_mismatch == index
    assert "Card 4" in check.message


def test_a_wrong_seed_or_a_wrong_published_hash_fails(retired_round):
    shoe = retired_round.shoe
    dealt = dealt_cards(retired_round)
    shoe.seed_hash = "0" * 64
    assert not check_dealt(shoe=shoe, start_position=retired_round.start_position, dealt=dealt).hash_ok
    shoe.refresh_from_db()
    shoe.server_seed = ("1" if shoe.server_seed[0] != "1" else "2") + shoe.server_seed[1:]
    check = check_dealt(shoe=shoe, start_position=retired_round.start_position, dealt=dealt)
    assert not check.ok


def test_the_shown_command_prints_the_same_cards(retired_round):
    shoe = retired_round.shoe
    command = verify_command(shoe)
    assert command.startswith("python -m blackjack.engine.verify ")
    argv = [*command.split()[3:], "--json"]
    output = io.StringIO()
    with redirect_stdout(output):
        assert verify.main(argv) == 0
    report = json.loads(output.getvalue())
    assert report["server_seed_hash"] == shoe.seed_hash
    start = retired_round.start_position
    dealt = dealt_cards(retired_round)
    assert report["cards"][start : start + len(dealt)] == dealt


def test_the_page_shows_the_revealed_seeds_and_the_verify_panel(client, retired_round):
    shoe = retired_round.shoe
    page = client.get(reverse("round_replay", args=[retired_round.pk])).content.decode()
    assert f'data-server-seed="{shoe.server_seed}"' in page
    assert f'data-client-seed="{shoe.client_seed}"' in page
    assert f'data-dealt="{" ".join(dealt_cards(retired_round))}"' in page
    assert verify_command(shoe) in page
    assert 'id="verify-button"' in page


def test_no_command_while_the_shoe_is_in_play(retired_round):
    shoe = retired_round.shoe
    shoe.retired_at = None
    assert shoe.revealed_seed is None
    assert verify_command(shoe) is None
    assert not check_dealt(shoe=shoe, start_position=0, dealt=[]).ok


@pytest.fixture
def retired_shoe(make_table):
    table = make_table("Single deck 6:5")
    server_seed = new_server_seed()
    return Shoe.objects.create(
        table=table,
        server_seed=server_seed,
        seed_hash=seed_hash(server_seed),
        client_seed="players",
        decks=1,
        cut_index=39,
        position=53,
        created_at=timezone.now(),
        retired_at=timezone.now(),
    )


def test_a_round_that_ran_out_verifies_with_the_reshuffled_discards(retired_shoe):
    shoe = retired_shoe
    order = shuffled_shoe(server_seed=shoe.server_seed, client_seed=shoe.client_seed, decks=1)
    # A round from card 38 that used 15 cards: the shoe's last 14, then the first of its reshuffled discards.
    dealt = list(dealing_order(order, 38, server_seed=shoe.server_seed, client_seed=shoe.client_seed)[38:53])
    assert dealt[:14] == order[38:]
    check = check_dealt(shoe=shoe, start_position=38, dealt=dealt)
    assert check.ok, check.message
    # A 15th card taken from the top of the shoe again instead is caught.
    assert order[0] != dealt[14] or order[1] != dealt[14]
    wrong = next(card for card in order[:2] if card != dealt[14])
    check = check_dealt(shoe=shoe, start_position=38, dealt=[*dealt[:14], wrong])
    assert not check.cards_ok
    assert check.first_mismatch == 14

    command = verify_command(shoe, ran_out_from=38)
    assert command.endswith(" --round-start 38")
    output = io.StringIO()
    with redirect_stdout(output):
        assert verify.main([*command.split()[3:], "--json"]) == 0
    assert json.loads(output.getvalue())["cards"][38:53] == dealt
