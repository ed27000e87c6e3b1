"""The table flow without a database: `blackjack.flow.decide` over hand-built table states.

Seats, bets, the deal, insurance, play, settlement, the ready check, leaving, deadlines and refusals, each
checked on the outcome `decide` returns (the new state, chips, log rows, events). A refusal returns the state
it was given, unchanged. No test here touches the database (none is marked `django_db`).
"""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from blackjack import flow
from blackjack.engine.rules import PRESETS
from tests.blackjack.conftest import deal_cards

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
SEEDS = flow.Seeds(server="ab" * 32, client="cd" * 16)
ANN = flow.Player(1, "ann", "Ann")
BOB = flow.Player(2, "bob")
CAROL = flow.Player(3, "carol")


def new_table(**settings) -> flow.TableState:
    config = flow.Settings(
        rules=PRESETS["Vegas Strip"],
        min_bet=10,
        max_bet=500,
        seats=3,
        seats_per_player=2,
        betting_seconds=20,
        insurance_seconds=10,
        turn_seconds=20,
        ready_seconds=10,
    )
    return flow.TableState(
        id=7,
        settings=replace(config, **settings),
        version=0,
        phase="waiting",
        deadline=None,
        window_version=0,
        window_actors={},
        next_server_seed="0" * 64,
        seats={number: flow.SeatState(number) for number in (1, 2, 3)},
    )


def scripted(front: list[str]):
    """A card order that deals `front` first, then the shoe's seeded order."""

    def cards(shoe, start):
        return (*front, *flow.seeded_order(shoe, start))

    return cards


def decide(state, command, *, at=NOW, cards=flow.seeded_order) -> flow.Outcome:
    outcome = flow.decide(state, command, at, seeds=SEEDS, cards=cards)
    assert outcome.refusal is None, outcome.refusal
    assert outcome.broken is None, outcome.broken
    return outcome


def act(state, player, name, *, at=NOW, cards=flow.seeded_order, **args) -> flow.TableState:
    command = flow.Act(player, {"action": name, **args}, state.version)
    return decide(state, command, at=at, cards=cards).state


def refused(state, command) -> flow.Refusal:
    before = state.copy()
    outcome = flow.decide(state, command, NOW, seeds=SEEDS)
    assert outcome.refusal is not None
    assert not outcome.changed
    assert outcome.state is state
    assert state == before
    return outcome.refusal


def seated(*players, cards=flow.seeded_order) -> flow.TableState:
    state = new_table()
    for seat, player in enumerate(players, start=1):
        state = act(state, player, "sit", seat=seat, cards=cards)
    return state


def test_the_first_player_to_sit_opens_a_betting_round_with_a_new_shoe():
    outcome = decide(new_table(), flow.Act(ANN, {"action": "sit", "seat": 2}, 0))
    state = outcome.state
    assert state.version == 1
    assert state.phase == "betting"
    assert state.deadline == NOW + timedelta(seconds=20)
    assert state.seats[2].player == ANN
    assert state.seats[2].client_seed == SEEDS.client
    assert state.round.number == 1
    assert state.round.seats == [2]
    assert state.round.id is None
    (shoe,) = outcome.shoes
    assert shoe.id is None
    assert shoe.server_seed == "0" * 64
    assert state.next_server_seed == SEEDS.server
    assert [event.kind for event in outcome.events] == ["seat", "shoe", "round"]
    assert outcome.lobby
    assert state.window_version == 1
    assert state.window_actors == {"1": 1}


def test_refusals_leave_the_state_untouched():
    state = seated(ANN)
    assert refused(state, flow.Act(BOB, {"action": "sit", "seat": 1}, state.version)).code == "seat_taken"
    assert refused(state, flow.Act(ANN, {"action": "bet", "amount": 5}, state.version)).code == "bad_amount"
    assert refused(state, flow.Act(ANN, {"action": "hit"}, state.version)).code == "illegal_action"
    assert refused(state, flow.Act(ANN, {"action": "fold"}, state.version)).code == "bad_message"
    assert (
        refused(state, flow.Act(BOB, {"action": "bet", "amount": 10}, state.version)).code == "not_your_turn"
    )
    barred = replace(BOB, barred=True)
    assert refused(state, flow.Act(barred, {"action": "sit", "seat": 3}, state.version)).code == "suspended"


def test_a_stale_version_is_refused_except_for_side_by_side_decisions():
    state = seated(ANN, BOB)  # Bob's sitting made Ann's version stale, within the betting window
    stale = state.version - 1
    assert state.window_version <= stale
    assert act(state, ANN, "bet", amount=10).phase == "betting"
    ann_bets = decide(state, flow.Act(ANN, {"action": "bet", "amount": 10}, stale)).state
    assert ann_bets.round.engine.seats[1].bet == 10
    # A repeat of Ann's own bet against the version before it is a double click: refused.
    repeat = flow.Act(ANN, {"action": "bet", "amount": 20}, stale)
    assert refused(ann_bets, repeat).code == "stale_version"


def test_bets_move_chips_and_the_last_bet_deals():
    cards = scripted(deal_cards(["Ts", "9h"], ["8c", "8d"], dealer=["7c", "Kd"]))
    state = seated(ANN, BOB, cards=cards)
    first = decide(state, flow.Act(ANN, {"action": "bet", "amount": 100}, state.version))
    assert [(move.player_id, move.amount) for move in first.moves] == [(1, 100)]
    assert [row.action for row in first.logs] == [{"action": "bet", "seat": 1, "amount": 100}]
    assert first.logs[0].version_after == first.state.version
    last = decide(first.state, flow.Act(BOB, {"action": "bet", "amount": 50}, first.state.version))
    assert [row.action["action"] for row in last.logs] == ["bet", "deal"]
    assert last.state.phase == "playing"
    assert last.state.round.engine.turn == (1, 0)
    assert last.state.deadline == NOW + timedelta(seconds=20)


def play_to_settlement():
    cards = scripted(deal_cards(["Ts", "9h"], ["8c", "8d"], dealer=["7c", "Kd"], then=["5s"]))
    state = seated(ANN, BOB, cards=cards)
    state = act(state, ANN, "bet", amount=100)
    state = act(state, BOB, "bet", amount=50)
    state = act(state, ANN, "stand")
    return state, decide(state, flow.Act(BOB, {"action": "hit"}, state.version))


def test_the_last_decision_settles_pays_and_opens_the_ready_check():
    _, outcome = play_to_settlement()
    state = outcome.state
    assert state.phase == "settled"
    # The ready check's 10 s start once the dealer's turn (the hole card; 17 stands) has been shown.
    assert state.deadline == NOW + timedelta(seconds=10 + flow.DEALER_CARD_SECONDS)
    (payments,) = outcome.payments
    # Ann's 19 and Bob's 21 (16 and a five) beat the dealer's 17.
    assert payments.payments == [(1, 200, "payout", "seat 1"), (2, 100, "payout", "seat 2")]
    results = {seat["seat"]: seat["net"] for seat in outcome.settled.results["seats"]}
    assert results == {1: 100, 2: 50}
    assert outcome.settled is state.round
    assert outcome.settled in outcome.rounds
    assert not any(seat.ready for seat in state.seats.values() if seat.player)


def test_everyone_ready_opens_the_next_round():
    playing, outcome = play_to_settlement()
    assert refused(playing, flow.Act(ANN, {"action": "ready"}, playing.version)).code == "illegal_action"
    state = act(outcome.state, ANN, "ready")
    assert state.phase == "settled"
    state = act(state, BOB, "ready")
    assert state.phase == "betting"
    assert state.round.number == 2
    assert state.round.id is None


def test_insurance_window_expires_into_play():
    cards = scripted(deal_cards(["Ts", "9h"], dealer=["As", "7d"]))
    state = seated(ANN, cards=cards)
    state = act(state, ANN, "bet", amount=100, cards=cards)
    assert state.phase == "insurance"
    assert state.deadline == NOW + timedelta(seconds=10)
    early = decide(state, flow.Expire(state.version), at=state.deadline - timedelta(seconds=1))
    assert not early.changed
    assert early.state is state
    due = decide(state, flow.Expire(state.version), at=state.deadline)
    assert due.state.phase == "playing"
    assert [event.kind for event in due.events][:1] == ["timeout"]
    assert not decide(due.state, flow.Expire(state.version), at=state.deadline).changed  # applied once


def test_a_betting_window_without_bets_closes_empty_and_opens_the_next():
    state = seated(ANN)
    outcome = decide(state, flow.Expire(state.version), at=state.deadline)
    new = outcome.state
    assert [rnd.number for rnd in outcome.rounds] == [1, 2]
    assert outcome.rounds[0].results == {"seats": [], "empty": True}
    assert new.round.number == 2
    assert new.seats[1].missed_rounds == 1
    assert not new.seats[1].sitting_out


def test_three_missed_rounds_stand_a_player_up():
    state = seated(ANN, BOB)
    for _ in range(3):
        state = act(state, BOB, "bet", amount=10)
        state = decide(state, flow.Expire(state.version), at=state.deadline + timedelta(hours=1)).state
        while state.phase != "betting":
            state = decide(state, flow.Expire(state.version), at=state.deadline + timedelta(hours=1)).state
    assert state.seats[1].player is None
    assert state.seats[2].player == BOB


def test_leaving_frees_the_seat_or_waits_for_the_round_with_chips_in_play():
    state = seated(ANN, BOB)
    state = act(state, ANN, "bet", amount=10)
    state = act(state, ANN, "leave")
    assert state.seats[1].leaving_after_round
    assert state.seats[1].player == ANN
    state = act(state, BOB, "leave")
    assert state.seats[2].player is None
    assert state.phase == "playing" or state.phase == "settled"  # Ann's bet was the last one missing


def test_the_last_player_leaving_empties_the_table():
    state = act(seated(ANN), ANN, "leave")
    assert state.phase == "waiting"
    assert state.deadline is None
    assert state.round.results == {"seats": [], "empty": True}


def test_a_player_gone_past_the_grace_period_is_stood_up():
    state = seated(ANN)
    gone = decide(state, flow.Present(frozenset())).state
    assert gone.seats[1].disconnected_at == NOW
    assert not decide(gone, flow.StandUpAbsent(), at=NOW + timedelta(seconds=29)).changed
    left = decide(gone, flow.StandUpAbsent(), at=NOW + timedelta(seconds=30)).state
    assert left.seats[1].player is None
    assert left.phase == "waiting"
    back = decide(gone, flow.Present(frozenset({ANN.id}))).state
    assert back.seats[1].disconnected_at is None


def test_presence_marks_the_players_without_a_socket_and_keeps_an_earlier_mark():
    state = seated(ANN, BOB)
    assert not decide(state, flow.Present(frozenset({ANN.id, BOB.id, 99}))).changed  # a spectator's too
    gone = decide(state, flow.Present(frozenset({ANN.id}))).state
    assert (gone.seats[1].disconnected_at, gone.seats[2].disconnected_at) == (None, NOW)
    later = decide(gone, flow.Present(frozenset()), at=NOW + timedelta(seconds=10))
    assert later.state.seats[2].disconnected_at == NOW  # his grace period runs from when he went
    assert later.state.seats[1].disconnected_at == NOW + timedelta(seconds=10)


@pytest.mark.parametrize("amount", [9, 501, "ten"])
def test_a_bet_outside_the_limits_moves_nothing(amount):
    state = seated(ANN)
    refusal = refused(state, flow.Act(ANN, {"action": "bet", "amount": amount}, state.version))
    assert refusal.code in ("bad_amount", "bad_message")


def test_leaving_during_your_own_turn_stands_every_hand_of_the_seat_at_once():
    # Ann's 8 8 splits (8 3 and 8 2); Bob stands on 19 against the dealer's 17.
    cards = scripted(deal_cards(["8c", "8d"], ["Ts", "9h"], dealer=["7c", "Kd"], then=["3s", "2h"]))
    state = seated(ANN, BOB, cards=cards)
    state = act(state, ANN, "bet", amount=100)
    state = act(state, BOB, "bet", amount=50)
    state = act(state, ANN, "split")
    assert state.round.engine.turn == (1, 0)
    later = NOW + timedelta(seconds=3)
    outcome = decide(state, flow.Act(ANN, {"action": "leave"}, state.version), at=later)
    left = outcome.state
    assert [row.action for row in outcome.logs] == [
        {"action": "stand", "seat": 1, "hand": 0},
        {"action": "stand", "seat": 1, "hand": 1},
    ]
    assert [hand.status for hand in left.round.engine.seats[1].hands] == ["stood", "stood"]
    assert left.round.engine.turn == (2, 0)  # the round goes on with Bob, on a fresh clock
    assert left.deadline == later + timedelta(seconds=20)
    assert left.seats[1].player == ANN
    assert left.seats[1].leaving_after_round
    assert [event.text for event in outcome.events][-1] == "Ann stands on leaving (seat 1)."
    settled = act(left, BOB, "stand")
    assert settled.phase == "settled"
    assert settled.seats[1].player is None  # freed after the round, as leaving with chips in play is


def test_leaving_when_it_is_not_your_turn_stands_nothing():
    cards = scripted(deal_cards(["Ts", "7h"], ["Tc", "9h"], dealer=["7c", "Kd"]))
    state = seated(ANN, BOB, cards=cards)
    state = act(state, ANN, "bet", amount=100)
    state = act(state, BOB, "bet", amount=50)
    outcome = decide(state, flow.Act(BOB, {"action": "leave"}, state.version))
    assert outcome.logs == []
    assert outcome.state.round.engine.turn == (1, 0)
    assert outcome.state.deadline == state.deadline
    assert outcome.state.seats[2].leaving_after_round


def test_a_newcomer_to_a_betting_window_gets_a_minimum_time_to_bet():
    assert flow.NEWCOMER_BETTING_SECONDS == 10
    state = seated(ANN)
    assert state.deadline == NOW + timedelta(seconds=20)
    # Bob sits with 15 s left: the deadline stays (never shortened).
    state = act(state, BOB, "sit", seat=2, at=NOW + timedelta(seconds=5))
    assert state.deadline == NOW + timedelta(seconds=20)
    # Carol sits with 3 s left: she gets 10 s from now.
    state = act(state, CAROL, "sit", seat=3, at=NOW + timedelta(seconds=17))
    assert state.deadline == NOW + timedelta(seconds=27)
    assert not decide(state, flow.Expire(state.version), at=NOW + timedelta(seconds=26)).changed


def test_a_newcomer_never_gets_more_than_the_betting_window_itself():
    state = decide(new_table(betting_seconds=6), flow.Act(ANN, {"action": "sit", "seat": 1}, 0)).state
    assert state.deadline == NOW + timedelta(seconds=6)
    state = act(state, BOB, "sit", seat=2, at=NOW + timedelta(seconds=5))
    assert state.deadline == NOW + timedelta(seconds=11)
