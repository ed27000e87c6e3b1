"""Whole rounds through `services.perform` only: several players, every kind of decision, several rounds in a
row, on every preset; chips conserved, the ledger audit clean, and every round replayable from its log."""

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.audit import audit_ledger
from accounts.models import Wallet
from blackjack import actors, flow, selectors
from blackjack.engine import round as engine
from blackjack.engine.rules import PRESETS
from blackjack.models import Phase, Round, Seat, Table, TableEvent
from cards.errors import Refused
from live import clock
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


def fresh(table: Table) -> Table:
    return Table.objects.select_related("current_round").get(pk=table.pk)


def chips(*users) -> int:
    return sum(Wallet.objects.filter(user__in=users).values_list("balance", flat=True))


def house() -> int:
    """The house's chips, its tables' floats included."""
    return sum(Wallet.objects.filter(kind__in=["house", "float"]).values_list("balance", flat=True))


def assert_books_balance():
    report = audit_ledger()
    assert report.ok, report.discrepancies


def assert_replays(rnd: Round):
    replayed = selectors.replay_round(round_id=rnd.pk).to_dict()
    del replayed["shoe"]
    assert replayed == rnd.state


def test_insurance_even_money_and_a_timeout_in_one_window(
    table, alice, bob, carol, act, balance, at, scripted_shoe
):
    # alice 10+9 insures; bob A+K (blackjack) takes even money; carol 8+8 never answers.
    # The dealer's A+9 is no blackjack: play goes on.
    scripted_shoe(
        table, deal_cards(["Ts", "9h"], ["As", "Kd"], ["8c", "8d"], dealer=["Ah", "9c"], then=["2s"])
    )
    for user, seat in ((alice, 1), (bob, 2), (carol, 3)):
        act(table, user, "sit", seat=seat)
    for user in (alice, bob, carol):
        act(table, user, "bet", amount=100)
    assert fresh(table).phase == Phase.INSURANCE
    act(table, alice, "insurance", accept=True)
    act(table, bob, "even_money", accept=True)
    assert fresh(table).phase == Phase.INSURANCE  # still open for carol
    assert clock.sweep(now=at(fresh(table).insurance_seconds + 1)) == 1
    t = fresh(table)
    assert t.phase == Phase.PLAYING
    assert t.current_round.state["turn"] == [1, 0]
    act(table, alice, "stand")
    act(table, carol, "stand")
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    nets = {row["seat"]: row["net"] for row in t.current_round.results["seats"]}
    # alice: 19 beats 20? no: dealer A+9 = 20 beats 19 -> loses 100 and the 50 insurance.
    assert nets == {1: -150, 2: 100, 3: -100}
    assert (balance(alice), balance(bob), balance(carol)) == (9_850, 10_100, 9_900)
    assert_books_balance()
    assert_replays(t.current_round)


def test_dealer_blackjack_ends_the_round_and_pays_insurance(table, alice, bob, act, balance, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["7s", "7d"], dealer=["Ah", "Kc"]))
    act(table, alice, "sit", seat=2)
    act(table, bob, "sit", seat=5)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=100)
    act(table, alice, "insurance", accept=True)
    act(table, bob, "insurance", accept=False)
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    assert t.current_round.state["hole_revealed"] is True
    assert balance(alice) == 10_000  # loses 100, insurance 50 pays 150
    assert balance(bob) == 9_900
    assert_books_balance()
    results = TableEvent.objects.filter(table=table, kind="result").order_by("id")
    assert list(results.values_list("text", flat=True)) == [
        "Alice breaks even (lose, insurance pays 150, seat 2).",
        "Bob loses 100 (lose, seat 5).",
    ]


def test_a_split_of_a_king_and_a_queen_is_no_pair_of_kings(make_table, alice, act, scripted_shoe):
    table = make_table(max_bet=5_000)
    scripted_shoe(table, deal_cards(["Kc", "Qd"], dealer=["9h", "7c"], then=["5s", "6s"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=1_000)
    act(table, alice, "split")
    texts = list(TableEvent.objects.filter(table=table).values_list("text", flat=True))
    assert "Alice splits two tens (seat 1)." in texts
    assert "Alice bets 1,000 on seat 1." in texts


def test_split_double_surrender_and_the_next_round(table, alice, bob, act, balance, scripted_shoe):
    # Round 1: alice splits 8s (gets 3 -> 11, doubles with a ten = 21; gets K -> 18 stands), bob surrenders 16
    # against the dealer's 10. Dealer 10+7 = 17.
    cards = deal_cards(["8s", "8h"], ["Tc", "6d"], dealer=["Td", "7c"], then=["3s", "Kh", "Ks"])
    scripted_shoe(table, cards)
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=50)
    act(table, bob, "bet", amount=40)
    act(table, alice, "split")
    # Named in words: "splits 8s" would read as the eight of spades (a card that may be in the hole).
    split = TableEvent.objects.filter(table=table).latest("id")
    assert split.text == "Alice splits a pair of eights (seat 1)."
    act(table, alice, "double", hand=0)
    act(table, alice, "stand", hand=1)
    act(table, bob, "surrender")
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    results = {row["seat"]: row for row in t.current_round.results["seats"]}
    assert [hand["result"] for hand in results[1]["hands"]] == ["win", "win"]
    assert results[1]["net"] == 150
    assert results[2]["net"] == -20
    assert balance(alice) == 10_150
    assert balance(bob) == 9_980
    first = t.current_round
    assert_replays(first)
    # The ready check: both ready -> the next round opens at once, on the same shoe.
    act(table, alice, "ready")
    assert fresh(table).phase == Phase.SETTLED
    act(table, bob, "ready")
    t = fresh(table)
    assert t.phase == Phase.BETTING
    assert t.current_round.number == first.number + 1
    assert t.current_round.shoe_id == first.shoe_id
    assert t.current_round.start_position == first.state["position"]
    assert_books_balance()


def test_a_player_may_bet_on_each_of_their_seats(table, alice, bob, act, balance, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "8d"], ["9s", "9d"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "sit", seat=3)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=10)  # seat 1 (her first seat without a bet)
    act(table, alice, "bet", amount=20)  # then seat 3
    act(table, bob, "bet", amount=30)
    t = fresh(table)
    assert t.phase == Phase.PLAYING
    assert [s["bet"] for s in t.current_round.state["seats"]] == [10, 30, 20]
    act(table, alice, "stand")
    act(table, bob, "stand")
    act(table, alice, "stand")
    assert balance(alice) == 10_000 + 10 + 20  # 19 and 18 beat 17
    assert balance(bob) == 10_030
    with pytest.raises(Refused) as refused:
        act(table, alice, "sit", seat=4)
    assert refused.value.code == "illegal_action"  # two seats per player at this table


def test_sitting_down_mid_round_joins_the_next_one(table, alice, bob, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=10)
    assert fresh(table).phase == Phase.PLAYING
    act(table, bob, "sit", seat=4)
    with pytest.raises(Refused) as refused:
        act(table, bob, "hit", seat=4)
    assert refused.value.code == "not_your_turn"
    act(table, alice, "stand")
    assert fresh(table).phase == Phase.SETTLED
    act(table, alice, "ready")  # bob sat down during the round: he counts as ready
    t = fresh(table)
    assert t.phase == Phase.BETTING
    assert t.current_round.seats == [1, 4]


def test_a_player_who_sits_during_betting_joins_this_round_and_bets_survive(
    table, alice, bob, carol, act, balance
):
    act(table, alice, "sit", seat=2)
    act(table, bob, "sit", seat=5)
    act(table, alice, "bet", amount=25)
    deadline = fresh(table).deadline
    act(table, carol, "sit", seat=4)
    t = fresh(table)
    assert t.current_round.seats == [2, 4, 5]
    assert t.deadline == deadline  # the countdown runs on from the first sit
    assert [s["bet"] for s in t.current_round.state["seats"]] == [25, 0, 0]
    assert balance(alice) == 9_975  # the replayed bet is not charged twice
    act(table, bob, "leave")  # no bet yet: leaves at once
    assert fresh(table).current_round.seats == [2, 4]
    act(table, carol, "bet", amount=10)
    t = fresh(table)
    assert t.phase in (Phase.PLAYING, Phase.INSURANCE, Phase.SETTLED)
    assert selectors.round_actions(round_id=t.current_round_id)[-1] == {"action": "deal"}
    assert_replays(t.current_round)


def test_a_player_who_sits_as_betting_closes_gets_time_to_bet(table, alice, bob, act):
    act(table, alice, "sit", seat=1)
    # The window has run on: 3 s are left when bob sits down.
    Table.objects.filter(pk=table.pk).update(deadline=timezone.now() + timedelta(seconds=3))
    before = timezone.now()
    act(table, bob, "sit", seat=2)
    after = timezone.now()
    deadline = fresh(table).deadline
    minimum = timedelta(seconds=flow.NEWCOMER_BETTING_SECONDS)
    assert before + minimum <= deadline <= after + minimum
    assert clock.sweep(now=deadline - timedelta(seconds=1)) == 0
    act(table, bob, "bet", amount=10)
    assert fresh(table).current_round.state["seats"][1]["bet"] == 10


def test_leave_mid_round_takes_effect_after_the_round(table, alice, bob, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "8d"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=10)
    act(table, bob, "bet", amount=10)
    act(table, bob, "leave")  # during alice's turn: bob still plays his hand when his turn comes
    assert Seat.objects.get(table=table, number=2).user == bob
    act(table, alice, "stand")
    act(table, bob, "stand")
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    assert Seat.objects.get(table=table, number=2).user is None
    act(table, alice, "leave")
    t = fresh(table)
    assert t.phase == Phase.WAITING
    assert t.deadline is None
    assert_books_balance()


def test_staff_limit_edits_apply_from_the_next_round(table, alice, act, balance, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7h", "Tc"], then=["Ts", "9h", "7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    Table.objects.filter(pk=table.pk).update(min_bet=100, max_bet=1000)  # staff, mid-betting
    act(table, alice, "bet", amount=10)  # the round was opened with 10-500
    act(table, alice, "double")
    assert fresh(table).current_round.results["seats"][0]["stake"] == 20
    act(table, alice, "ready")
    with pytest.raises(Refused) as refused:
        act(table, alice, "bet", amount=10)
    assert refused.value.code == "bad_amount"
    act(table, alice, "bet", amount=100)
    assert fresh(table).current_round.min_bet == 100


@pytest.mark.parametrize("preset", list(PRESETS))
def test_random_play_on_every_preset_conserves_chips(preset, make_table, alice, bob, act, at, seeded_shoes):
    """Two players play rounds with random legal decisions (and sometimes let the clock decide). Seeded: the
    shoes' server and client seeds come from the same generator, so a failure replays exactly."""
    rng = random.Random(f"flow-{preset}")
    seeded_shoes(rng)
    table = make_table(preset, seats=3)
    players = {1: alice, 2: bob, 3: alice}
    for seat, user in players.items():
        act(table, user, "sit", seat=seat)
    start = chips(alice, bob) + house()
    rounds = 0
    for _ in range(400):
        t = fresh(table)
        if t.phase == Phase.SETTLED:
            rounds += 1
            assert_replays(t.current_round)
            if rounds == 8:
                break
        if rng.random() < 0.1:
            clock.sweep(now=at(60))
            continue
        seated = dict(Seat.objects.filter(table=table, user__isnull=False).values_list("number", "user"))
        freed = [n for n in players if n not in seated]
        if freed:  # stood up after three missed rounds (the clock below can do that): sit down again
            act(table, players[freed[0]], "sit", seat=freed[0])
            continue
        state = engine.RoundState.from_dict(dict(t.current_round.state, shoe=""))
        if t.phase == Phase.BETTING:
            seat = rng.choice([n for n in players if n in state.seats and state.seats[n].bet == 0])
            act(
                table,
                players[seat],
                "bet",
                seat=seat,
                amount=rng.choice([t.min_bet, t.min_bet * 3, t.max_bet]),
            )
        elif t.phase == Phase.SETTLED:
            for user in (alice, bob):  # both continue (a player who does not sits out)
                if fresh(table).phase == Phase.SETTLED:
                    act(table, user, "ready")
        elif t.phase == Phase.INSURANCE:
            seat = rng.choice([n for n in players if n in state.seats and state.seats[n].offers])
            name = state.seats[seat].offers[0]
            act(table, players[seat], name, seat=seat, accept=rng.random() < 0.5)
        else:
            seat, hand = state.turn
            name = rng.choice(engine.allowed_actions(state, seat))
            act(table, players[seat], name, seat=seat, hand=hand)
    assert rounds == 8
    assert chips(alice, bob) + house() == start
    assert_books_balance()


def test_a_player_who_walks_away_never_blocks_the_table(table, alice, bob, act, balance):
    """bob closes his browser during betting; alice keeps playing, and only the first round waits for him."""
    for user, seat in ((alice, 1), (bob, 2)):
        act(table, user, "sit", seat=seat)
    owner = actors.actor_for(table.pk)  # this process owns the table: it counts the sockets
    for user in (alice, bob):
        owner.count_socket(user.pk, f"ch-{user.pk}", connected=True)
    owner.count_socket(bob.pk, f"ch-{bob.pk}", connected=False)
    moment = fresh(table).deadline
    waits = {}  # round number -> windows that had to run out
    while len(waits) < 4:
        t = fresh(table)
        number = t.current_round.number
        waits.setdefault(number, 0)
        if t.phase == Phase.BETTING and t.current_round.state["seats"][0]["bet"] == 0:
            act(table, alice, "bet", amount=10)
        elif t.phase == Phase.PLAYING and t.current_round.state["turn"][0] == 1:
            act(table, alice, "stand")
        elif t.phase == Phase.INSURANCE and t.current_round.state["seats"][0]["offers"]:
            act(table, alice, t.current_round.state["seats"][0]["offers"][0], accept=False)
        elif t.phase == Phase.SETTLED and not Seat.objects.get(table=table, number=1).ready:
            act(table, alice, "ready")
        else:
            # Waiting for bob: the clock moves on at the deadline.
            moment = max(moment, t.deadline)
            assert clock.sweep(now=moment) == 1
            waits[number] += 1
    # Only round 1's betting window waited for bob; from then on he sat out, so neither bets nor ready checks
    # waited for him, and he was stood up after three missed rounds.
    assert waits == {1: 1, 2: 0, 3: 0, 4: 0}
    assert Seat.objects.get(table=table, number=2).user is None
    assert TableEvent.objects.filter(table=table, text="Bob missed 3 rounds and leaves seat 2.").exists()
    assert fresh(table).current_round.seats == [1]
    assert balance(bob) == 10_000
    assert_books_balance()
