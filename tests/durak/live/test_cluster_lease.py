"""A Durak table has one owner across processes (`live.lease`): its actor takes the lease when it loads, every
write is fenced by the version AND the epoch, a lost lease drops the actor, and the deadlines of a table
nobody owns are applied by the clock's fenced sweep exactly once. Other processes are played by other owner
names; time is passed in."""

from datetime import timedelta

import pytest
from django.utils import timezone

from durak import actor as durak_actor
from durak.models import DurakAction, DurakTable
from durak.table import Expire, Leave, Sit
from live import clock as live_clock
from live import lease, process
from live.lease import LEASE_SECONDS, OwnedElsewhere
from tests.durak.live.conftest import seat_and_start

pytestmark = pytest.mark.django_db

OTHER = "live.elsewhere.1.abcd"


def lease_of(table_id: int) -> tuple[str, int]:
    return DurakTable.objects.values_list("owner", "epoch").get(pk=table_id)


def version_of(table_id: int) -> int:
    return DurakTable.objects.values_list("version", flat=True).get(pk=table_id)


def held_by_other(table_id: int, *, seconds: float = 3600) -> int:
    """Another process takes the table's lease (the current one lapsed or free): its epoch."""
    return lease.acquire(
        DurakTable, table_id, now=timezone.now() - timedelta(seconds=LEASE_SECONDS - seconds), me=OTHER
    )


def test_the_actor_takes_the_lease_when_it_loads_and_keeps_its_epoch(open_durak, alice, bob):
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    assert lease_of(table.pk) == (process.name(), 1)
    assert actor.epoch == 1
    actor.handle(Sit(bob.pk, "Bob"))
    assert lease_of(table.pk) == (process.name(), 1)  # no new lease per command


def test_a_table_another_live_process_owns_is_not_loaded_here(open_durak, alice):
    table = open_durak()
    lease.acquire(DurakTable, table.pk, now=timezone.now(), me=OTHER)
    actor = durak_actor.actor_for(table.pk)
    with pytest.raises(OwnedElsewhere) as owned:
        actor.handle(Sit(alice.pk, "Alice"))
    assert owned.value.owner == OTHER
    assert table.pk not in durak_actor.DurakActor.actors  # dropped: the next command learns the owner again
    assert version_of(table.pk) == 0


def test_a_write_after_a_take_over_is_fenced_and_the_actor_dropped(open_durak, alice, bob):
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    # This process was paused past its lease: another took the table over (epoch + 1) and wrote nothing yet.
    later = timezone.now() + timedelta(seconds=LEASE_SECONDS + 1)
    assert lease.acquire(DurakTable, table.pk, now=later, me=OTHER) == 2
    with pytest.raises(OwnedElsewhere):
        actor.handle(Sit(bob.pk, "Bob"))  # the same version: only the epoch fences it
    assert version_of(table.pk) == 1
    assert [seat.user_id for seat in durak_actor.load(table.pk).seats] == [alice.pk, None, None]
    assert table.pk not in durak_actor.DurakActor.actors


def test_the_fence_is_the_version_and_the_epoch(open_durak, alice):
    table = open_durak()
    actor = durak_actor.actor_for(table.pk)
    assert "AND version = %s AND epoch = %s" in durak_actor._FENCE
    before = actor._loaded()
    outcome = durak_actor.decide(before, Sit(alice.pk, "Alice"), timezone.now())
    with pytest.raises(durak_actor.Stale):
        durak_actor.commit(before, outcome, epoch=actor.epoch + 1)  # the right version, a wrong epoch
    assert version_of(table.pk) == 0
    assert durak_actor.commit(before, outcome, epoch=actor.epoch).version == 1


def test_renewal_extends_the_leases_held_and_drops_the_actors_that_lost_theirs(open_durak, alice):
    kept, lost = open_durak(), open_durak()
    for table in (kept, lost):
        durak_actor.actor_for(table.pk).handle(Sit(alice.pk, "Alice"))
    later = timezone.now() + timedelta(seconds=LEASE_SECONDS + 1)
    lease.acquire(DurakTable, lost.pk, now=later, me=OTHER)
    assert durak_actor.DurakActor.renew_leases(now=later) == {lost.pk}
    assert lost.pk not in durak_actor.DurakActor.actors
    assert kept.pk in durak_actor.DurakActor.actors
    until = DurakTable.objects.values_list("lease_until", flat=True).get(pk=kept.pk)
    assert until == later + timedelta(seconds=LEASE_SECONDS)


def test_the_clock_renews_and_sweeps_every_game_it_knows(open_durak, alice, settings):
    settings.LIVE_TIMERS = True
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    deadline = actor.state.deadline
    durak_actor.forget_actors()  # the owner is gone (its lease still runs)
    later = deadline + timedelta(seconds=LEASE_SECONDS + 1)
    assert live_clock.sweep(now=later) >= 1  # blackjack's sweep finds nothing; Durak's applies the deadline
    assert version_of(table.pk) == 5  # the owner's count died with it: Alice marked gone, then the bot's move


def test_a_deadline_nobody_owns_is_applied_by_the_sweep_exactly_once(open_durak, alice, settings):
    settings.LIVE_TIMERS = True
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    version, deadline = actor.state.version, actor.state.deadline
    lease.release(DurakTable, [(table.pk, actor.epoch)])
    durak_actor.forget_actors()  # nobody connected, or the servers restarted
    due = deadline + timedelta(seconds=1)
    assert durak_actor.DurakActor.sweep(now=due) == 1
    assert version_of(table.pk) == version + 1
    assert DurakAction.objects.filter(version=version + 1, by_bot=True).count() == 1
    assert lease_of(table.pk)[0] == ""  # handed back
    # The same deadline again (a second process's sweep that read the table before the first wrote): nothing.
    assert durak_actor.DurakActor(table.pk).expire(version, now=due) == 0
    assert DurakAction.objects.filter(version=version + 1).count() == 1


def test_the_sweep_leaves_a_live_owners_table_to_it(open_durak, alice, settings):
    settings.LIVE_TIMERS = True
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    version, deadline = actor.state.version, actor.state.deadline
    durak_actor.forget_actors()
    lease.release(DurakTable, [(table.pk, actor.epoch)])
    lease.acquire(DurakTable, table.pk, now=timezone.now(), me=OTHER)  # alive, its timer about to ring
    due = max(deadline, timezone.now()) + timedelta(seconds=1)
    assert durak_actor.DurakActor.sweep(now=due) == 0
    assert version_of(table.pk) == version
    # That owner died: once its lease lapsed, the sweep takes the table over, marks Alice gone (the owner's
    # count died with it) and applies the deadline.
    DurakTable.objects.filter(pk=table.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert durak_actor.DurakActor.sweep(now=due) == 1
    assert version_of(table.pk) == version + 2
    assert DurakAction.objects.filter(version=version + 2, by_bot=True).count() == 1
    assert lease_of(table.pk) == ("", 3)


def test_a_leave_by_another_actor_of_this_process_is_caught_by_the_version(open_durak, alice, bob):
    table = open_durak(seats=3)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    # The same lease, the version moves (that actor counts no sockets of its own: no marks on load).
    durak_actor.DurakActor(table.pk, marks_on_load=False).handle(Sit(bob.pk, "Bob"))
    assert actor.handle(Leave(alice.pk)) == 3
    assert actor.epoch == 1
    assert actor.handle(Expire(0)) is None
