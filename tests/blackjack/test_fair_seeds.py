"""The shoe's server seed is drawn one shoe ahead and shown by its hash before the players' seeds for it are
known; a player's own seed (sent with `sit`) goes into the client seed of each shoe shuffled while seated."""

import hashlib
import json

import pytest
from django.contrib.auth.models import AnonymousUser

from blackjack.engine.rules import PRESETS
from blackjack.models import Phase, Seat, Shoe, Table
from blackjack.viewmodel import build_table_view
from cards.errors import Refused
from cards.fairness import combine_client_seeds, seed_hash

pytestmark = pytest.mark.django_db

FRESH_EVERY_ROUND = PRESETS["Vegas Strip"].to_dict() | {"penetration": 0}


def digest(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def view_of(table, user=None) -> dict:
    return build_table_view(table_id=table.pk, user=user or AnonymousUser())


def finish_round(table, players, act):
    """Decline every offer and stand on every hand until the round is settled."""
    for _ in range(30):
        table_now = Table.objects.get(pk=table.pk)
        if table_now.phase == Phase.SETTLED:
            return
        for user in players:
            allowed = view_of(table, user)["you"]["allowed"]
            for name in ("insurance", "even_money"):
                if name in allowed:
                    act(table, user, name, accept=False)
            if "stand" in view_of(table, user)["you"]["allowed"]:
                act(table, user, "stand")
    raise AssertionError("the round did not end")


def test_the_first_shoes_hash_is_shown_before_anyone_sits(table):
    committed = Table.objects.get(pk=table.pk).next_server_seed
    view = view_of(table)
    assert view["table"]["shoe"] is None
    assert view["table"]["next_shoe_hash"] == seed_hash(committed)
    assert committed not in json.dumps(view)


def test_the_shoe_uses_the_committed_seed_and_the_players_own_seeds(table, alice, bob, act):
    shown = view_of(table)["table"]["next_shoe_hash"]
    act(table, alice, "sit", seat=1, seed="alice-chose-this")  # opens the round: the shoe is shuffled now
    shoe = Shoe.objects.get(table=table)
    assert shoe.seed_hash == shown  # the server seed is the one whose hash was shown before alice's seed
    assert shoe.seat_seeds == [digest("alice-chose-this")]
    assert shoe.client_seed == combine_client_seeds(["alice-chose-this"])
    view = view_of(table, alice)
    assert view["table"]["shoe"]["client_seed"] == shoe.client_seed
    assert view["table"]["shoe"]["seat_seeds"] == shoe.seat_seeds
    assert view["table"]["shoe"]["nonce"] == 0
    # A new seed is drawn for the next shoe; its hash is shown, never the seed.
    following = Table.objects.get(pk=table.pk).next_server_seed
    assert following != shoe.server_seed
    assert view["table"]["next_shoe_hash"] == seed_hash(following)
    assert following not in json.dumps(view)
    assert shoe.server_seed not in json.dumps(view)
    # bob sits without a seed: the server draws one for him, used from the next shoe on.
    act(table, bob, "sit", seat=2)
    assert len(Seat.objects.get(table=table, number=2).client_seed) == 32


def test_each_new_shoe_takes_the_hash_shown_before_and_the_seeds_seated_then(make_table, alice, bob, act):
    table = make_table("Fresh shoes", rules=FRESH_EVERY_ROUND)
    act(table, alice, "sit", seat=1, seed="a1")
    act(table, bob, "sit", seat=2, seed="b2")
    for _ in range(3):
        shown = view_of(table)["table"]["next_shoe_hash"]
        act(table, alice, "bet", amount=10)
        act(table, bob, "bet", amount=10)
        finish_round(table, [alice, bob], act)
        assert not Shoe.objects.filter(table=table, retired_at__isnull=True).exists()  # retired each round
        act(table, alice, "ready")
        act(table, bob, "ready")  # the next round opens with a new shoe
        newest = Shoe.objects.filter(table=table).order_by("-id").first()
        assert newest.seed_hash == shown
        assert newest.seat_seeds == sorted([digest("a1"), digest("b2")])
    retired = Shoe.objects.filter(table=table, retired_at__isnull=False)
    assert retired.count() >= 3
    hashes = list(Shoe.objects.filter(table=table).values_list("seed_hash", flat=True))
    assert len(set(hashes)) == len(hashes)  # a seed is never used twice


@pytest.mark.parametrize("seed", ["", "x" * 65, "a b", "<script>", 5, ["a"]])
def test_a_bad_seed_is_refused_and_changes_nothing(table, alice, act, seed):
    before = Table.objects.get(pk=table.pk)
    with pytest.raises(Refused) as refused:
        act(table, alice, "sit", seat=1, seed=seed)
    assert refused.value.code == "bad_message"
    after = Table.objects.get(pk=table.pk)
    assert (after.version, after.next_server_seed) == (before.version, before.next_server_seed)
    assert not Seat.objects.filter(table=table, user=alice).exists()
    assert not Shoe.objects.filter(table=table).exists()
