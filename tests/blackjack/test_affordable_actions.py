"""A double, a split or insurance the player's balance cannot cover is not offered: the view leaves double and
split out of the allowed actions, the hint falls back to the next best play, and the page disables "Take
insurance". The server refuses them anyway (insufficient_chips): the view only stops offering what would
fail."""

import pytest

from accounts.models import Wallet
from blackjack.engine.round import RoundState
from blackjack.engine.strategy import recommend
from blackjack.models import Round
from blackjack.rendering import region
from blackjack.viewmodel import build_table_view
from tests.blackjack.test_viewmodel import deal_round, make_table

pytestmark = pytest.mark.django_db

# Seat 1: 8h 8c (a pair of eights), dealer Th up, Kd in the hole.
PAIR = ["8h", "Th", "8c", "Kd", "2c", "3c", "4c"]
# Seat 1: 6h 5c (eleven), dealer 6d up, Kd in the hole.
ELEVEN = ["6h", "6d", "5c", "Kd", "2c", "3c", "4c"]
# Seat 1: 9h 7c, dealer Ah up (insurance offered), Kd in the hole.
ACE_UP = ["9h", "Ah", "7c", "Kd", "2c", "3c", "4c"]


def set_balance(user, balance: int) -> None:
    Wallet.objects.filter(user=user).update(balance=balance)


def test_a_player_who_can_cover_the_bet_may_split_and_double(django_user_model):
    alice = django_user_model.objects.create_user(username="alice")
    table = make_table()
    deal_round(table, {1: alice}, PAIR)
    set_balance(alice, 10)
    you = build_table_view(table_id=table.pk, user=alice)["you"]
    assert you["allowed_by_seat"]["1"] == ["hit", "stand", "double", "split", "surrender"]
    assert you["hint"]["action"] == "split"


def test_a_split_and_a_double_the_balance_cannot_cover_are_not_offered(django_user_model):
    alice = django_user_model.objects.create_user(username="alice")
    table = make_table()
    round_, _shoe = deal_round(table, {1: alice}, PAIR)
    set_balance(alice, 9)
    you = build_table_view(table_id=table.pk, user=alice)["you"]

    assert you["allowed_by_seat"]["1"] == ["hit", "stand", "surrender"]
    assert not {"double", "split"} & set(you["allowed"])
    # Sixteen against a ten without the split: basic strategy surrenders instead.
    assert you["hint"]["action"] == "surrender"
    state = RoundState.from_dict(Round.objects.get(pk=round_.pk).state)
    assert recommend(state, 1) == "split"  # the engine alone, not knowing the balance, still says split


def test_the_hint_falls_back_from_an_unaffordable_double_to_a_hit(django_user_model):
    alice = django_user_model.objects.create_user(username="alice")
    table = make_table()
    deal_round(table, {1: alice}, ELEVEN)
    set_balance(alice, 10)
    assert build_table_view(table_id=table.pk, user=alice)["you"]["hint"]["action"] == "double"
    set_balance(alice, 9)
    you = build_table_view(table_id=table.pk, user=alice)["you"]
    assert "double" not in you["allowed"]
    assert you["hint"]["action"] == "hit"


@pytest.mark.parametrize(("balance", "disabled"), [(5, False), (4, True)])
def test_take_insurance_is_disabled_when_the_balance_cannot_cover_it(django_user_model, balance, disabled):
    alice = django_user_model.objects.create_user(username="alice")
    table = make_table()
    deal_round(table, {1: alice}, ACE_UP)
    set_balance(alice, balance)
    view = build_table_view(table_id=table.pk, user=alice)
    assert "insurance" in view["you"]["allowed"]  # declining stays possible whatever the balance
    html = str(region("page", {"view": view, "user": alice}))
    button = html.split('id="insurance-yes"', 1)[1].split(">", 1)[0]
    assert ("disabled" in button) is disabled
    assert "disabled" not in html.split('id="insurance-no"', 1)[1].split(">", 1)[0]
