"""Crash recovery: the round lives in the database, so a restarted process continues it; a round whose stored
state cannot be loaded is voided and every stake refunded."""

import pytest
from django.urls import reverse

from accounts import services as accounts
from accounts.audit import audit_ledger
from accounts.models import LedgerEntry
from blackjack import operations, selectors, services
from blackjack.engine.shoe import dealing_order
from blackjack.models import Phase, Round, Seat, Shoe, Table, TableEvent
from cards.errors import Refused
from live import clock
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


def fresh(table: Table) -> Table:
    return Table.objects.select_related("current_round").get(pk=table.pk)


@pytest.fixture
def mid_round(table, alice, bob, act, scripted_shoe):
    """alice and bob bet 100 each; alice doubled (9 + T = 19, stake 200); bob's turn is next."""
    scripted_shoe(table, deal_cards(["5s", "4h"], ["Tc", "8d"], dealer=["7h", "Tc"], then=["Ts", "2c"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=100)
    act(table, alice, "double")  # 9 + T = 19, stake 200
    return table


def test_a_round_resumes_from_the_database(mid_round, alice, bob, act, balance):
    table = mid_round
    # A restart: nothing survives but the database; recovery finds nothing to void.
    assert services.recover_tables() == 0
    t = fresh(table)
    assert t.phase == Phase.PLAYING
    assert t.current_round.state["turn"] == [2, 0]
    act(table, bob, "stand")
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    assert (balance(alice), balance(bob)) == (10_200, 10_100)
    replayed = selectors.replay_round(round_id=t.current_round_id).to_dict()
    del replayed["shoe"]
    assert replayed == t.current_round.state
    assert audit_ledger().ok


@pytest.mark.parametrize(
    "corrupt",
    [
        {"garbage": True},
        "not even an object",
        {"phase": "playing"},
    ],
)
def test_a_corrupt_round_is_voided_and_refunded_at_recovery(mid_round, alice, bob, balance, corrupt):
    table = mid_round
    rnd = fresh(table).current_round
    assert (balance(alice), balance(bob)) == (9_800, 9_900)
    Round.objects.filter(pk=rnd.pk).update(state=corrupt)
    assert services.recover_tables() == 1
    rnd.refresh_from_db()
    assert rnd.voided
    assert rnd.results["refunds"] == {str(alice.pk): 200, str(bob.pk): 100}
    assert (balance(alice), balance(bob)) == (10_000, 10_000)
    refunds = LedgerEntry.objects.filter(round_ref=rnd.pk, kind="refund", wallet__user__isnull=False)
    assert refunds.count() == 2
    t = fresh(table)
    assert t.phase == Phase.BETTING  # both still seated: the next round opens
    assert t.current_round_id != rnd.pk
    assert Shoe.objects.get(pk=rnd.shoe_id).retired_at is not None
    assert TableEvent.objects.filter(table=table, text__contains="voided").exists()
    assert audit_ledger().ok
    assert services.recover_tables() == 0  # voided once, never twice


def seated(table: Table) -> list[int]:
    return list(Seat.objects.filter(table=table, user__isnull=False).values_list("number", flat=True))


def test_a_voided_last_round_of_a_closed_table_leaves_it_empty_and_waiting(mid_round, alice, bob, balance):
    table = mid_round
    operations.close_table(table_id=table.pk)  # its last round: both players leave after it
    Round.objects.filter(pk=fresh(table).current_round_id).update(state={"seats": "?"})
    assert services.recover_tables() == 1
    assert (balance(alice), balance(bob)) == (10_000, 10_000)
    assert (seated(table), fresh(table).phase) == ([], Phase.WAITING)  # not dealt in again
    assert audit_ledger().ok


def test_a_voided_round_frees_the_seat_of_a_player_who_asked_to_leave(mid_round, alice, bob, act):
    table = mid_round
    act(table, alice, "leave")  # her chips are in play: she leaves after the round
    assert services.void_round(round_id=fresh(table).current_round_id, reason="test")
    assert seated(table) == [2]
    t = fresh(table)
    assert (t.phase, t.current_round.seats) == (Phase.BETTING, [2])


def test_a_voided_round_frees_the_seat_of_a_suspended_player(mid_round, alice, bob, make_user):
    table = mid_round
    accounts.suspend_user(user=alice, staff=make_user("staff", is_staff=True))
    operations.release_user_seats(user=alice)  # the admin's "Suspend": her chips are in play, so after it
    assert seated(table) == [1, 2]
    assert services.void_round(round_id=fresh(table).current_round_id, reason="test")
    assert seated(table) == [2]


def test_a_corrupt_round_found_by_an_action_is_voided(mid_round, alice, bob, act, balance):
    table = mid_round
    rnd = fresh(table).current_round
    Round.objects.filter(pk=rnd.pk).update(state={"seats": "?"})
    with pytest.raises(Refused) as refused:
        act(table, bob, "stand")
    assert refused.value.code == "illegal_action"
    assert Round.objects.get(pk=rnd.pk).voided
    assert (balance(alice), balance(bob)) == (10_000, 10_000)
    assert audit_ledger().ok


def test_a_corrupt_round_found_by_the_clock_is_voided(mid_round, alice, bob, balance, at):
    table = mid_round
    Round.objects.filter(pk=fresh(table).current_round_id).update(state={})
    assert clock.sweep(now=at(3600)) >= 1
    assert (balance(alice), balance(bob)) == (10_000, 10_000)
    assert audit_ledger().ok


def test_a_round_that_runs_out_of_cards_goes_on_with_the_discards_reshuffled(
    make_table, alice, act, balance, monkeypatch, client
):
    table = make_table("Single deck 6:5")
    act(table, alice, "sit", seat=1)
    # Ten cards: round 1 deals four (Alice T 7 stands, the dealer 9 8: a push); round 2 deals the other six
    # and needs more.
    first_round = ["Ts", "9s", "7h", "8h"]
    monkeypatch.setattr(
        services, "_shoe_order", lambda shoe: [*first_round, "2s", "5d", "3s", "Td", "2d", "4c"]
    )
    act(table, alice, "bet", amount=50)
    act(table, alice, "stand")
    act(table, alice, "ready")
    t = fresh(table)
    assert t.current_round.start_position == 4
    act(table, alice, "bet", amount=50)  # 2 3 against the dealer's 5 (T in the hole)
    act(table, alice, "hit")  # 7
    act(table, alice, "hit")  # 11: the shoe's last card
    act(table, alice, "hit")  # from the discards of round 1, reshuffled
    t = fresh(table)
    rnd = t.current_round
    shoe = Shoe.objects.get(pk=rnd.shoe_id)
    discards = dealing_order(
        first_round, 4, server_seed=shoe.server_seed, client_seed=shoe.client_seed, nonce=shoe.nonce
    )[4:]
    assert sorted(discards) == sorted(first_round)
    assert rnd.state["seats"][0]["hands"][0]["cards"] == ["2s", "3s", "2d", "4c", discards[0]]
    if t.phase != Phase.SETTLED:  # 21 with the ten or the nine: the round plays itself out
        act(table, alice, "stand")
    rnd = Round.objects.get(pk=rnd.pk)
    assert rnd.phase == Phase.SETTLED
    assert not rnd.voided
    # The dealer's 15 drew from the discards too, after Alice's card; then the shoe is done.
    assert rnd.results["dealer"]["cards"] == ["5d", "Td", discards[1]]
    shoe.refresh_from_db()
    assert shoe.position == 12
    assert shoe.retired_at is not None
    assert balance(alice) == 10_000 + rnd.results["seats"][0]["net"]
    assert selectors.replay_round(round_id=rnd.pk).to_dict() | {"shoe": ""} == dict(rnd.state, shoe="")
    assert audit_ledger().ok
    # The round's page gives the command that prints the cards it was dealt, discards included.
    page = client.get(reverse("round_replay", args=[rnd.pk])).content.decode()
    assert "--decks 1 --nonce 0 --round-start 4" in page
    assert "the round went on with 2 cards from the earlier rounds' discards, reshuffled" in page


def test_a_round_that_runs_out_of_a_fresh_shoe_is_voided(make_table, alice, act, balance, monkeypatch):
    table = make_table()
    act(table, alice, "sit", seat=1)
    # A shoe of five cards cannot finish a round that draws more (and a fresh shoe has no discards).
    monkeypatch.setattr(services, "_shoe_order", lambda shoe: ["2s", "2h", "2d", "2c", "3s"])
    act(table, alice, "bet", amount=50)
    act(table, alice, "hit")  # 2 + 2 + 3: the last card
    rnd = fresh(table).current_round
    with pytest.raises(Refused) as refused:
        act(table, alice, "hit")
    assert refused.value.code == "illegal_action"
    assert Round.objects.get(pk=rnd.pk).voided
    assert balance(alice) == 10_000
    assert audit_ledger().ok
