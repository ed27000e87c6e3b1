"""Deadlines with nobody connected: the clock's sweep (`clock.sweep`) with an injected `now` closes betting,
declines insurance, stands a hand, starts the next round, stands up absent players, and applies each deadline
exactly once. One test runs the real clock thread."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.audit import audit_ledger
from blackjack import actors, flow
from blackjack.models import Phase, Seat, Table, TableEvent
from blackjack.viewmodel import build_table_view
from cards.errors import Refused
from live import clock, fanout
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


def fresh(table: Table) -> Table:
    return Table.objects.select_related("current_round").get(pk=table.pk)


def after_deadline(table: Table, seconds: float = 0.5):
    return fresh(table).deadline + timedelta(seconds=seconds)


def seat_of(table: Table, number: int) -> Seat:
    return Seat.objects.get(table=table, number=number)


def test_nothing_is_due_before_the_deadline(table, alice, act):
    act(table, alice, "sit", seat=1)
    version = fresh(table).version
    assert clock.sweep(now=fresh(table).deadline - timedelta(seconds=0.1)) == 0
    assert fresh(table).version == version


def test_betting_timeout_deals_the_bettors_and_sits_out_the_rest(table, alice, bob, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=10)
    assert clock.sweep(now=after_deadline(table)) == 1
    t = fresh(table)
    assert t.phase == Phase.PLAYING
    assert t.current_round.state["seats"][1]["sitting_out"] is True
    bob_seat = seat_of(table, 2)
    assert (bob_seat.user, bob_seat.sitting_out, bob_seat.missed_rounds) == (bob, True, 1)
    assert seat_of(table, 1).missed_rounds == 0


def test_three_missed_rounds_stand_a_player_up(table, alice, act):
    act(table, alice, "sit", seat=4)
    for missed in (1, 2):
        clock.sweep(now=after_deadline(table))
        t = fresh(table)
        assert t.phase == Phase.BETTING  # an empty round ends and the next betting round opens
        assert seat_of(table, 4).missed_rounds == missed
    clock.sweep(now=after_deadline(table))
    t = fresh(table)
    assert seat_of(table, 4).user is None
    assert t.phase == Phase.WAITING
    assert t.deadline is None
    assert TableEvent.objects.filter(table=table, text__contains="missed 3 rounds").exists()


def test_a_bet_resets_the_missed_rounds(table, alice, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    clock.sweep(now=after_deadline(table))
    clock.sweep(now=after_deadline(table))
    assert seat_of(table, 1).missed_rounds == 2
    act(table, alice, "bet", amount=10)
    assert seat_of(table, 1).missed_rounds == 0


def test_insurance_timeout_declines_for_the_undecided(table, alice, bob, act, balance, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "8d"], dealer=["Ah", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=100)
    act(table, alice, "insurance", accept=True)
    assert fresh(table).phase == Phase.INSURANCE
    assert clock.sweep(now=after_deadline(table)) == 1
    t = fresh(table)
    assert t.phase == Phase.PLAYING
    seats = {s["seat"]: s for s in t.current_round.state["seats"]}
    assert (seats[1]["insurance"], seats[2]["insurance"]) == (50, 0)
    assert balance(bob) == 9_900


def test_turn_timeout_stands_the_hand_and_the_round_finishes(table, alice, bob, act, balance, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "8d"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    act(table, bob, "bet", amount=100)
    clock.sweep(now=after_deadline(table))  # alice stands on 19
    assert fresh(table).current_round.state["turn"] == [2, 0]
    clock.sweep(now=after_deadline(table))  # bob stands on 18
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    assert (balance(alice), balance(bob)) == (10_100, 10_100)
    assert TableEvent.objects.filter(table=table, text__contains="ran out of time").count() == 2
    assert audit_ledger().ok


def test_each_decision_restarts_the_turn_countdown(table, alice, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["2s", "3h"], dealer=["7h", "Tc"], then=["2c", "2d"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=10)
    first = fresh(table).deadline
    act(table, alice, "hit")
    assert fresh(table).deadline >= first
    assert fresh(table).phase == Phase.PLAYING


def test_ready_timeout_opens_the_next_round_and_sits_out_the_unready(table, alice, bob, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "8d"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=10)
    act(table, bob, "bet", amount=10)
    act(table, alice, "stand")
    act(table, bob, "stand")
    act(table, alice, "ready")
    settled = fresh(table)
    assert settled.phase == Phase.SETTLED
    assert clock.sweep(now=after_deadline(table)) == 1
    t = fresh(table)
    assert t.phase == Phase.BETTING
    assert t.current_round.number == settled.current_round.number + 1
    assert seat_of(table, 2).sitting_out is True
    # bob is not waited for: alice's bet closes betting at once.
    act(table, alice, "bet", amount=10)
    assert fresh(table).phase != Phase.BETTING


def test_an_expiry_applies_once(table, alice, act):
    act(table, alice, "sit", seat=1)
    moment = after_deadline(table)
    assert clock.sweep(now=moment) == 1
    t = fresh(table)
    assert clock.sweep(now=moment) == 0
    assert fresh(table).version == t.version
    assert fresh(table).current_round_id == t.current_round_id


def test_a_table_failing_to_expire_does_not_stop_the_others(make_table, alice, bob, act, monkeypatch, caplog):
    broken, other = make_table(name="broken"), make_table(name="other")
    act(broken, alice, "sit", seat=1)
    act(other, bob, "sit", seat=1)
    decide = flow.decide

    def failing_for_broken(state, command, now, **inputs):
        if state.id == broken.pk and isinstance(command, flow.Expire):
            raise OverflowError("date value out of range")  # what a window too long for the clock raised
        return decide(state, command, now, **inputs)

    monkeypatch.setattr(flow, "decide", failing_for_broken)
    moment = max(after_deadline(broken), after_deadline(other))
    before, others = fresh(broken).version, fresh(other).version
    assert clock.sweep(now=moment) == 1
    assert fresh(other).version > others  # the other table moved on (bob missed his bet)
    assert fresh(broken).version == before  # left as it was, nothing half-applied
    assert "the deadline of version" in caplog.text
    monkeypatch.setattr(flow, "decide", decide)
    assert clock.sweep(now=moment) == 1  # once mended, it goes on


def test_an_expiry_keyed_on_an_old_version_does_nothing(table, alice, act):
    """What a second clock sees when the first one applied the deadline between its read and its lock."""
    act(table, alice, "sit", seat=1)
    stale = fresh(table).version
    act(table, alice, "ready")  # any change bumps the version
    t = fresh(table)
    claimant = actors.BlackjackActor(table.pk, marks_on_load=False)
    later = t.deadline + timedelta(seconds=1)
    assert clock.claim(Table, claimant, stale, now=later, registry=actors.BlackjackActor.actors) == 0
    assert fresh(table).version == t.version


def test_a_disconnected_player_keeps_the_seat_for_the_grace_period(table, alice, act):
    act(table, alice, "sit", seat=3)
    owner = actors.actor_for(table.pk)
    owner.count_socket(alice.pk, "c1", connected=True)
    owner.count_socket(alice.pk, "c1", connected=False)
    gone_at = seat_of(table, 3).disconnected_at
    assert gone_at is not None
    # Before the grace period ends the betting deadline is still ahead, so only the grace matters here.
    Table.objects.filter(pk=table.pk).update(deadline=gone_at + timedelta(hours=1))
    assert clock.sweep(now=gone_at + timedelta(seconds=29)) == 0
    assert seat_of(table, 3).user == alice
    assert clock.sweep(now=gone_at + timedelta(seconds=31)) == 1
    assert seat_of(table, 3).user is None
    assert fresh(table).phase == Phase.WAITING


def test_reconnecting_within_the_grace_period_keeps_the_seat(table, alice, act):
    act(table, alice, "sit", seat=3)
    owner = actors.actor_for(table.pk)
    owner.count_socket(alice.pk, "c1", connected=True)
    owner.count_socket(alice.pk, "c2", connected=True)
    owner.count_socket(alice.pk, "c1", connected=False)
    assert seat_of(table, 3).disconnected_at is None  # another tab is still open
    owner.count_socket(alice.pk, "c2", connected=False)
    assert seat_of(table, 3).disconnected_at is not None
    owner.count_socket(alice.pk, "c3", connected=True)
    assert seat_of(table, 3).disconnected_at is None
    assert clock.sweep(now=timezone.now() + timedelta(seconds=10)) == 0


def test_a_new_owner_counts_nobody_until_their_sockets_tell_it(table, alice, bob, carol, act):
    """Who is connected is not stored: a table's new owner marks every seated player gone from its first load
    (the previous owner's count died with it) until a socket of theirs tells it."""
    act(table, alice, "sit", seat=3)
    act(table, bob, "sit", seat=4)
    before = fresh(table).version
    owner = actors.actor_for(table.pk)
    owner.count_socket(alice.pk, "a1", connected=True)
    assert fresh(table).version == before + 1  # bob marked, in one change
    seats = {s["seat"]: s for s in build_table_view(table_id=table.pk, user=carol)["table"]["seats"]}
    assert (seats[3]["connected"], seats[4]["connected"]) == (True, False)
    owner.count_socket(alice.pk, "a2", connected=True)  # a second tab
    owner.count_socket(carol.pk, "c1", connected=True)  # a spectator
    assert fresh(table).version == before + 1  # neither changes what anyone sees
    owner.count_socket(bob.pk, "b1", connected=True)  # his socket tells the owner again
    assert seat_of(table, 4).disconnected_at is None


def test_the_sweep_marks_the_players_of_a_dead_owners_table_and_stands_up_those_not_back(
    table, alice, bob, act
):
    """A process killed outright never closes its websockets: once its lease has lapsed, the sweep claims
    its table and marks every seated player gone; a player whose socket on a live process tells the next owner
    keeps the seat, the other is stood up after the grace period."""
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    now = timezone.now()
    Table.objects.filter(pk=table.pk).update(
        owner="live.dead-host.1.x", lease_until=now - timedelta(seconds=1), deadline=now + timedelta(hours=1)
    )
    version = fresh(table).version
    clock.sweep(now=now)
    assert seat_of(table, 1).disconnected_at == seat_of(table, 2).disconnected_at == now
    assert fresh(table).version == version + 1  # the viewers see them marked away
    assert fresh(table).owner == ""  # handed back
    assert clock.sweep(now=now) == 0  # nothing more to do
    actors.actor_for(table.pk).count_socket(bob.pk, "live-b", connected=True)  # bob's tab on a live process
    assert seat_of(table, 2).disconnected_at is None
    actors.forget_actors()  # this process's actor goes too: the table has no live owner again
    Table.objects.filter(pk=table.pk).update(lease_until=now)
    assert clock.sweep(now=now + timedelta(seconds=31)) == 1
    assert seat_of(table, 1).user is None  # stood up after the grace period, as after any disconnect
    assert seat_of(table, 2).user == bob


def test_a_table_nobody_owned_keeps_its_players_unmarked(table, alice, act):
    """A table only the services have written (the lobby's one-click seat with nobody watching) had no
    owner whose count could be lost: the sweep leaves its players as they are."""
    act(table, alice, "sit", seat=1)
    version = fresh(table).version
    assert clock.sweep(now=fresh(table).deadline - timedelta(seconds=0.1)) == 0
    assert fresh(table).version == version
    assert seat_of(table, 1).disconnected_at is None


def test_a_disconnected_player_in_a_round_plays_out_by_timeouts_then_leaves(
    table, alice, bob, act, balance, scripted_shoe
):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "8d"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=10)
    act(table, bob, "bet", amount=10)
    owner = actors.actor_for(table.pk)
    owner.count_socket(bob.pk, "b", connected=True)
    owner.count_socket(alice.pk, "a", connected=True)
    owner.count_socket(alice.pk, "a", connected=False)
    later = timezone.now() + timedelta(seconds=45)
    Table.objects.filter(pk=table.pk).update(deadline=later)  # her turn outlasts the grace period
    assert clock.sweep(now=later) == 1  # her hand stands
    assert seat_of(table, 1).user == alice  # still in the round
    act(table, bob, "stand")
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    assert balance(alice) == 10_010  # paid like everyone
    assert seat_of(table, 1).user == alice  # her grace period is not over yet
    gone_at = seat_of(table, 1).disconnected_at
    clock.sweep(now=gone_at + timedelta(seconds=31))
    assert seat_of(table, 1).user is None
    assert seat_of(table, 2).user == bob
    assert fresh(table).current_round.seats == [2]


def test_the_clock_thread_applies_a_due_deadline(transactional_db, table, alice, act, settings):
    settings.LIVE_TIMERS = True
    act(table, alice, "sit", seat=1)
    Table.objects.filter(pk=table.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert clock.start()
    try:
        limit = time.monotonic() + 10  # its sweep runs every second; a busy machine may take longer
        while fresh(table).current_round.number == 1 and time.monotonic() < limit:
            time.sleep(0.05)
    finally:
        clock.stop()
    # The empty round ended and the next one opened.
    assert fresh(table).current_round.number == 2


def test_the_clock_stays_off_where_the_timers_are_off(settings):
    settings.LIVE_TIMERS = False
    assert clock.start() is False


def test_changes_are_broadcast_after_commit(
    table, alice, act, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(fanout, "_on_loop", lambda work, notice, lobby=False: sent.append((notice, lobby)))
    with django_capture_on_commit_callbacks(execute=True):
        version = act(table, alice, "sit", seat=1)
    assert (
        {"type": "live.changed", "game": "blackjack", "table": table.pk, "v": version},
        True,
    ) in sent  # and the lobby
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(Refused):
        act(table, alice, "bet", amount=1)
    assert sent == []
