"""Shoes at live tables: the hash is published before any card, the client seed comes from the seated players,
the shoe is retired at the cut card (every round with penetration 0) and its seed then verifies the hash and
the order the cards came out in. Also the demo data command."""

import pytest
from django.core.management import call_command

from blackjack.engine.rules import PRESETS, RuleSet
from blackjack.engine.shoe import shuffled_shoe
from blackjack.models import RulePreset, Seat, Shoe, Table, TableEvent
from cards.fairness import combine_client_seeds, seed_hash

pytestmark = pytest.mark.django_db


def play_one_round(table, user, act):
    """Bet the minimum, stand on whatever comes (or let the hand finish itself), then get ready."""
    act(table, user, "bet", amount=table.min_bet)
    while Table.objects.get(pk=table.pk).phase in ("playing", "insurance"):
        phase = Table.objects.get(pk=table.pk).phase
        if phase == "insurance":
            act(table, user, "insurance" if "insurance" in offers(table) else "even_money", accept=False)
        else:
            act(table, user, "stand")
    act(table, user, "ready")


def offers(table) -> list[str]:
    state = Table.objects.get(pk=table.pk).current_round.state
    return [offer for seat in state["seats"] for offer in seat["offers"]]


def test_the_first_shoe_publishes_its_hash_and_combines_the_players_seeds(table, alice, act):
    act(table, alice, "sit", seat=1)
    shoe = Shoe.objects.get(table=table)
    assert shoe.seed_hash == seed_hash(shoe.server_seed)
    seed = Seat.objects.get(table=table, number=1).client_seed
    assert len(seed) == 32
    assert shoe.client_seed == combine_client_seeds([seed])
    assert shoe.revealed_seed is None
    assert TableEvent.objects.filter(table=table, text__contains=shoe.seed_hash[:16]).exists()


def test_penetration_zero_shuffles_a_fresh_shoe_every_round(make_table, alice, act):
    rules = RuleSet(penetration=0).to_dict()
    table = make_table("Fresh every round", rules=rules)
    act(table, alice, "sit", seat=1)
    for _ in range(3):
        play_one_round(table, alice, act)
    shoes = list(Shoe.objects.filter(table=table).order_by("id"))
    assert len(shoes) == 4  # three retired, one for the round now betting
    assert [shoe.retired_at is not None for shoe in shoes] == [True, True, True, False]
    assert len({shoe.server_seed for shoe in shoes}) == 4


def test_a_retired_shoe_verifies_its_hash_and_the_cards_dealt(make_table, alice, act):
    table = make_table("One deck, half", rules=RuleSet(decks=1, penetration=0.5).to_dict())
    act(table, alice, "sit", seat=1)
    first = Shoe.objects.get(table=table)
    while first.retired_at is None:
        play_one_round(table, alice, act)
        first.refresh_from_db()
    assert first.position >= first.cut_index == 26
    assert seed_hash(first.revealed_seed) == first.seed_hash
    order = shuffled_shoe(
        server_seed=first.revealed_seed, client_seed=first.client_seed, decks=first.decks, nonce=first.nonce
    )
    dealt = []
    for rnd in first.rounds.order_by("number"):
        state = rnd.state
        assert state["start_position"] == len(dealt)
        cards = [card for seat in state["seats"] for hand in seat["hands"] for card in hand["cards"]]
        cards += state["dealer_cards"]
        dealt += order[state["start_position"] : state["position"]]
        assert sorted(cards) == sorted(order[state["start_position"] : state["position"]])
    assert len(dealt) == first.position


def test_a_change_of_decks_by_staff_starts_a_new_shoe_next_round(table, alice, act):
    act(table, alice, "sit", seat=1)
    first = Shoe.objects.get(table=table)
    RulePreset.objects.filter(pk=table.preset_id).update(rules=RuleSet(decks=2).to_dict())
    play_one_round(table, alice, act)
    first.refresh_from_db()
    assert first.retired_at is not None
    assert Shoe.objects.filter(table=table, retired_at__isnull=True).get().decks == 2


def test_seed_demo_is_idempotent():
    call_command("seed_demo", verbosity=0)
    call_command("seed_demo", verbosity=0)
    assert sorted(RulePreset.objects.values_list("name", flat=True)) == sorted(PRESETS)
    assert Table.objects.count() == len(PRESETS)
    for table in Table.objects.select_related("preset"):
        assert table.ruleset() == PRESETS[table.preset.name]
        assert 1 <= table.min_bet < table.max_bet
        assert Seat.objects.filter(table=table).count() == table.seats
    from django.contrib.auth import get_user_model

    users = get_user_model().objects.filter(username__in=["alice", "bob"])
    assert users.count() == 2
    assert all(user.check_password("cardroom-demo") for user in users)
