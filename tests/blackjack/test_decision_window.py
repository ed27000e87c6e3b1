"""Players deciding side by side in one window (betting, insurance, the ready check) are not refused because
another player acted first; a player's own repeated action still is; turn actions need the current version."""

import pytest

from blackjack import services
from blackjack.models import Table
from cards.errors import Refused

pytestmark = pytest.mark.django_db


def perform(table, user, name, v, **args):
    return services.perform(table_id=table.pk, user=user, action={"action": name, **args}, expected_version=v)


def version(table) -> int:
    return Table.objects.get(pk=table.pk).version


def test_two_players_betting_against_the_same_version_both_bet(table, alice, bob, carol, act, balance):
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, carol, "sit", seat=3)
    seen = version(table)
    perform(table, alice, "bet", seen, seat=1, amount=100)
    perform(table, bob, "bet", seen, seat=2, amount=50)  # made stale by alice's bet only
    assert (balance(alice), balance(bob)) == (9_900, 9_950)


def test_a_repeated_bet_against_the_same_version_is_refused_and_charged_once(table, alice, bob, act, balance):
    act(table, alice, "sit", seat=1)
    act(table, alice, "sit", seat=2)
    act(table, bob, "sit", seat=3)
    seen = version(table)
    perform(table, alice, "bet", seen, amount=100)  # no seat: her first seat without a bet
    after = version(table)
    with pytest.raises(Refused) as refused:
        perform(table, alice, "bet", seen, amount=100)  # the double click must not bet her second seat
    assert refused.value.code == "stale_version"
    assert version(table) == after
    assert balance(alice) == 9_900


def test_a_version_from_before_the_window_opened_is_stale(table, alice, bob, act):
    act(table, alice, "sit", seat=1)
    before_round = version(table) - 1  # before alice sat down and the betting window opened
    with pytest.raises(Refused) as refused:
        perform(table, bob, "sit", before_round, seat=2)
    assert refused.value.code == "stale_version"


def test_turn_actions_need_the_current_version(table, alice, bob, act, scripted_shoe):
    scripted_shoe(table, ["Ts", "9h", "5c", "7d", "8s", "6h"])  # alice T-7, bob 9-8, dealer 5 up
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", seat=1, amount=10)
    act(table, bob, "bet", seat=2, amount=10)
    assert Table.objects.get(pk=table.pk).phase == "playing"
    seen = version(table)
    perform(table, bob, "sit", seen, seat=3)  # another player's window action moves the version on
    with pytest.raises(Refused) as refused:
        perform(table, alice, "stand", seen, seat=1)
    assert refused.value.code == "stale_version"
    perform(table, alice, "stand", version(table), seat=1)


@pytest.mark.parametrize("v", [None, "7", 7.0, True])
def test_a_version_that_is_not_an_integer_is_stale(table, alice, v):
    with pytest.raises(Refused) as refused:
        perform(table, alice, "sit", v, seat=1)
    assert refused.value.code == "stale_version"
