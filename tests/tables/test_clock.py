"""Deadlines with nobody connected: `expire_due` with an injected `now` closes betting, declines insurance,
stands a hand, starts the next round, stands up absent players, and applies each deadline exactly once.
One test runs the real clock thread."""

import gc
import time
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.audit import audit_ledger
from tables import broadcast, clock, flow, liveness, services
from tables.models import Phase, Presence, Seat, Table, TableEvent
from tables.services import actions
from tables.viewmodel import build_table_view
from tests.tables.conftest import deal_cards

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
    assert services.expire_due(now=fresh(table).deadline - timedelta(seconds=0.1)) == 0
    assert fresh(table).version == version


def test_betting_timeout_deals_the_bettors_and_sits_out_the_rest(table, alice, bob, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=10)
    assert services.expire_due(now=after_deadline(table)) == 1
    t = fresh(table)
    assert t.phase == Phase.PLAYING
    assert t.current_round.state["seats"][1]["sitting_out"] is True
    bob_seat = seat_of(table, 2)
    assert (bob_seat.user, bob_seat.sitting_out, bob_seat.missed_rounds) == (bob, True, 1)
    assert seat_of(table, 1).missed_rounds == 0


def test_three_missed_rounds_stand_a_player_up(table, alice, act):
    act(table, alice, "sit", seat=4)
    for missed in (1, 2):
        services.expire_due(now=after_deadline(table))
        t = fresh(table)
        assert t.phase == Phase.BETTING  # an empty round ends and the next betting round opens
        assert seat_of(table, 4).missed_rounds == missed
    services.expire_due(now=after_deadline(table))
    t = fresh(table)
    assert seat_of(table, 4).user is None
    assert t.phase == Phase.WAITING
    assert t.deadline is None
    assert TableEvent.objects.filter(table=table, text__contains="missed 3 rounds").exists()


def test_a_bet_resets_the_missed_rounds(table, alice, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    services.expire_due(now=after_deadline(table))
    services.expire_due(now=after_deadline(table))
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
    assert services.expire_due(now=after_deadline(table)) == 1
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
    services.expire_due(now=after_deadline(table))  # alice stands on 19
    assert fresh(table).current_round.state["turn"] == [2, 0]
    services.expire_due(now=after_deadline(table))  # bob stands on 18
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
    assert services.expire_due(now=after_deadline(table)) == 1
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
    assert services.expire_due(now=moment) == 1
    t = fresh(table)
    assert services.expire_due(now=moment) == 0
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
    assert services.expire_due(now=moment) == 1
    assert fresh(other).version > others  # the other table moved on (bob missed his bet)
    assert fresh(broken).version == before  # left as it was, nothing half-applied
    assert "expiry failed" in caplog.text
    monkeypatch.setattr(flow, "decide", decide)
    assert services.expire_due(now=moment) == 1  # once mended, it goes on


def test_an_expiry_keyed_on_an_old_version_does_nothing(table, alice, act):
    """What a second clock sees when the first one applied the deadline between its read and its lock."""
    act(table, alice, "sit", seat=1)
    stale = fresh(table).version
    act(table, alice, "ready")  # any change bumps the version
    t = fresh(table)
    assert actions.guarded(table.pk, flow.Expire(stale), t.deadline + timedelta(seconds=1)) == 0
    assert fresh(table).version == t.version


def test_a_disconnected_player_keeps_the_seat_for_the_grace_period(table, alice, act):
    act(table, alice, "sit", seat=3)
    services.note_presence(table_id=table.pk, user=alice, connected=True, channel_name="c1")
    services.note_presence(table_id=table.pk, user=alice, connected=False, channel_name="c1")
    gone_at = seat_of(table, 3).disconnected_at
    assert gone_at is not None
    # Before the grace period ends the betting deadline is still ahead, so only the grace matters here.
    Table.objects.filter(pk=table.pk).update(deadline=gone_at + timedelta(hours=1))
    assert services.expire_due(now=gone_at + timedelta(seconds=29)) == 0
    assert seat_of(table, 3).user == alice
    assert services.expire_due(now=gone_at + timedelta(seconds=31)) == 1
    assert seat_of(table, 3).user is None
    assert fresh(table).phase == Phase.WAITING


def test_reconnecting_within_the_grace_period_keeps_the_seat(table, alice, act):
    act(table, alice, "sit", seat=3)
    services.note_presence(table_id=table.pk, user=alice, connected=True, channel_name="c1")
    services.note_presence(table_id=table.pk, user=alice, connected=True, channel_name="c2")
    services.note_presence(table_id=table.pk, user=alice, connected=False, channel_name="c1")
    assert seat_of(table, 3).disconnected_at is None  # another tab is still open
    services.note_presence(table_id=table.pk, user=alice, connected=False, channel_name="c2")
    assert seat_of(table, 3).disconnected_at is not None
    services.note_presence(table_id=table.pk, user=alice, connected=True, channel_name="c3")
    assert seat_of(table, 3).disconnected_at is None
    assert services.expire_due(now=timezone.now() + timedelta(seconds=10)) == 0


def test_a_player_who_sat_before_connecting_shows_online_once_connected(table, alice, bob, act):
    """Sitting from the lobby (HTTP) comes before the table page's websocket: its arrival is a change."""
    act(table, alice, "sit", seat=3)
    before = fresh(table).version
    services.note_presence(table_id=table.pk, user=alice, connected=True, channel_name="c1")
    assert fresh(table).version == before + 1
    seat = next(s for s in build_table_view(table_id=table.pk, user=bob)["table"]["seats"] if s["seat"] == 3)
    assert seat["connected"] is True
    services.note_presence(table_id=table.pk, user=alice, connected=True, channel_name="c2")  # a second tab
    services.note_presence(table_id=table.pk, user=bob, connected=True, channel_name="c3")  # a spectator
    assert fresh(table).version == before + 1  # neither changes what anyone sees


@dataclass(eq=False)
class Websocket:
    """What `tables.liveness` needs of a consumer."""

    channel_name: str
    table_id: int
    user: object


def connected(table, user, channel_name: str, *, seen_at=None) -> None:
    services.note_presence(table_id=table.pk, user=user, connected=True, channel_name=channel_name)
    if seen_at is not None:
        Presence.objects.filter(channel_name=channel_name).update(seen_at=seen_at)


def test_the_connections_of_a_process_that_stopped_vouching_are_dropped(table, alice, bob, act, settings):
    """A process killed outright never closes its websockets: after PRESENCE_TIMEOUT_SECONDS without being
    vouched for, its rows go, and a player left without any connection counts as disconnected from then on."""
    settings.PRESENCE_TIMEOUT_SECONDS = 60
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    now = timezone.now()
    connected(table, alice, "dead-a", seen_at=now - timedelta(seconds=61))
    connected(table, bob, "dead-b", seen_at=now - timedelta(seconds=61))
    connected(table, bob, "live-b", seen_at=now - timedelta(seconds=59))  # his other tab, on a live process
    version = fresh(table).version
    assert services.sweep_presence(now=now) == 2
    assert set(Presence.objects.values_list("channel_name", flat=True)) == {"live-b"}
    assert seat_of(table, 1).disconnected_at is not None
    assert seat_of(table, 2).disconnected_at is None
    assert fresh(table).version == version + 1  # the viewers see her marked away
    assert services.sweep_presence(now=now) == 0
    gone_at = seat_of(table, 1).disconnected_at
    Table.objects.filter(pk=table.pk).update(deadline=gone_at + timedelta(hours=1))
    assert services.expire_due(now=gone_at + timedelta(seconds=31)) == 1
    assert seat_of(table, 1).user is None  # stood up after the grace period, as after any disconnect
    assert seat_of(table, 2).user == bob


def test_a_live_process_vouches_for_its_connections_and_restores_dropped_ones(table, alice, act, settings):
    settings.PRESENCE_TIMEOUT_SECONDS = 60
    act(table, alice, "sit", seat=1)
    long_ago = timezone.now() - timedelta(minutes=5)
    connected(table, alice, "tab-1", seen_at=long_ago)
    connected(table, alice, "tab-2", seen_at=long_ago)
    held = {"tab-1": (table.pk, alice), "tab-2": (table.pk, alice)}
    assert services.refresh_presence(held) == 0
    assert services.sweep_presence() == 0  # both vouched for just now
    # The database was out of reach for longer than the timeout: another process dropped both rows.
    assert services.sweep_presence(now=timezone.now() + timedelta(seconds=61)) == 2
    assert seat_of(table, 1).disconnected_at is not None
    # The second tab closed while the heartbeat ran: its row is not written again.
    assert services.refresh_presence(held, still_open=lambda name: name == "tab-1") == 1
    assert list(Presence.objects.values_list("channel_name", flat=True)) == ["tab-1"]
    assert seat_of(table, 1).disconnected_at is None  # written again, the mark cleared


@pytest.mark.django_db(transaction=True)  # the heartbeat closes the connection around its work
def test_the_clock_heartbeat_vouches_for_the_websockets_this_process_holds(table, alice, bob, act, settings):
    settings.PRESENCE_TIMEOUT_SECONDS = 60
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    long_ago = timezone.now() - timedelta(minutes=5)
    connected(table, alice, "held-here", seen_at=long_ago)
    connected(table, bob, "held-elsewhere", seen_at=long_ago)
    consumer = Websocket(channel_name="held-here", table_id=table.pk, user=alice)
    liveness.opened(consumer)
    try:
        clock.heartbeat()
    finally:
        liveness.closed(consumer)
    assert list(Presence.objects.values_list("channel_name", flat=True)) == ["held-here"]
    assert seat_of(table, 1).disconnected_at is None
    assert seat_of(table, 2).disconnected_at is not None
    assert "held-here" not in liveness.held()


def test_a_consumer_gone_without_closing_is_no_longer_vouched_for():
    consumer = Websocket(channel_name="cancelled", table_id=1, user=None)
    liveness.opened(consumer)
    assert liveness.held()["cancelled"] == (1, None)
    assert liveness.is_open("cancelled")
    del consumer
    gc.collect()
    assert "cancelled" not in liveness.held()
    assert not liveness.is_open("cancelled")


def test_a_disconnected_player_in_a_round_plays_out_by_timeouts_then_leaves(
    table, alice, bob, act, balance, scripted_shoe
):
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "8d"], dealer=["7h", "Tc"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=10)
    act(table, bob, "bet", amount=10)
    services.note_presence(table_id=table.pk, user=alice, connected=True, channel_name="a")
    services.note_presence(table_id=table.pk, user=alice, connected=False, channel_name="a")
    later = timezone.now() + timedelta(seconds=45)
    Table.objects.filter(pk=table.pk).update(deadline=later)  # her turn outlasts the grace period
    assert services.expire_due(now=later) == 1  # her hand stands
    assert seat_of(table, 1).user == alice  # still in the round
    act(table, bob, "stand")
    t = fresh(table)
    assert t.phase == Phase.SETTLED
    assert balance(alice) == 10_010  # paid like everyone
    assert seat_of(table, 1).user == alice  # her grace period is not over yet
    gone_at = seat_of(table, 1).disconnected_at
    services.expire_due(now=gone_at + timedelta(seconds=31))
    assert seat_of(table, 1).user is None
    assert seat_of(table, 2).user == bob
    assert fresh(table).current_round.seats == [2]


def test_the_clock_thread_applies_a_due_deadline_within_two_seconds(
    transactional_db, table, alice, act, monkeypatch
):
    monkeypatch.setenv("TABLE_CLOCK", "1")
    act(table, alice, "sit", seat=1)
    Table.objects.filter(pk=table.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert clock.start()
    try:
        limit = time.monotonic() + 2
        while fresh(table).current_round.number == 1 and time.monotonic() < limit:
            time.sleep(0.05)
    finally:
        clock.stop()
    # The empty round ended and the next one opened.
    assert fresh(table).current_round.number == 2
    disconnected_at = Seat.objects.get(table=table, number=1).disconnected_at
    if broadcast.single_process():
        # The restart marked alice as disconnected: no websocket survives a restart of the only process.
        assert disconnected_at is not None
    else:
        # Other processes may hold her websocket: only their presence rows going stale mark her (the sweep).
        assert disconnected_at is None


def test_the_clock_stays_off_under_pytest_unless_asked(monkeypatch):
    monkeypatch.delenv("TABLE_CLOCK", raising=False)
    assert clock.enabled() is False
    monkeypatch.setenv("TABLE_CLOCK", "0")
    assert clock.start() is False


def test_changes_are_broadcast_after_commit(
    table, alice, act, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(broadcast, "send", lambda group, message: sent.append((group, message)))
    with django_capture_on_commit_callbacks(execute=True):
        version = act(table, alice, "sit", seat=1)
    assert (f"table-{table.pk}", {"type": "table.changed", "v": version, "table": table.pk}) in sent
    assert ("lobby", {"type": "lobby.changed"}) in sent
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(services.ActionRefused):
        act(table, alice, "bet", amount=1)
    assert sent == []
