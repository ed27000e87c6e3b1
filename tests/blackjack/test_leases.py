"""Table leases with an epoch (`live.lease`) and the fence they put on the actor's writes, with a fake clock
(`now` passed in) and other processes played by other owner names: acquire, renew, lapse, steal, release, and
a stale owner whose writes change nothing."""

import os
from datetime import timedelta

import pytest
from channels.layers import BaseChannelLayer
from django.utils import timezone

from blackjack import actors
from blackjack.models import Table
from live import lease, process
from live.lease import LEASE_SECONDS, OwnedElsewhere

pytestmark = pytest.mark.django_db


OTHER = "live.elsewhere.1.abcd"
T0 = timezone.now()


def at(seconds: float):
    return T0 + timedelta(seconds=seconds)


def lease_of(table) -> tuple[str, int, object]:
    return Table.objects.values_list("owner", "epoch", "lease_until").get(pk=table.pk)


def version_of(table) -> int:
    return Table.objects.values_list("version", flat=True).get(pk=table.pk)


def test_the_process_name_is_a_channel_name_of_its_own():
    name = process.name()
    assert BaseChannelLayer().require_valid_channel_name(name)
    assert len(name) < 100
    assert f".{os.getpid()}." in name
    assert process.name() == name  # one per process


def test_a_free_lease_is_taken_and_kept_by_its_owner_without_a_new_epoch(table):
    assert lease.acquire(Table, table.pk, now=at(0)) == 1
    assert lease_of(table) == (process.name(), 1, at(LEASE_SECONDS))
    assert lease.acquire(Table, table.pk, now=at(2)) == 1  # ours already: the same epoch, a longer lease
    assert lease_of(table) == (process.name(), 1, at(2 + LEASE_SECONDS))


def test_a_live_lease_of_another_process_is_refused_with_its_owners_name(table):
    lease.acquire(Table, table.pk, now=at(0), me=OTHER)
    with pytest.raises(OwnedElsewhere) as owned:
        lease.acquire(Table, table.pk, now=at(LEASE_SECONDS - 0.001))
    assert (owned.value.key, owned.value.owner) == (table.pk, OTHER)
    assert lease_of(table) == (OTHER, 1, at(LEASE_SECONDS))  # untouched


def test_a_lapsed_lease_is_taken_over_with_the_next_epoch(table):
    lease.acquire(Table, table.pk, now=at(0), me=OTHER)
    assert lease.acquire(Table, table.pk, now=at(LEASE_SECONDS)) == 2
    assert lease_of(table)[:2] == (process.name(), 2)


def test_renewal_extends_the_leases_held_and_reports_the_lost_ones(make_table):
    kept, taken = make_table(name="kept"), make_table(name="taken")
    held = {
        kept.pk: lease.acquire(Table, kept.pk, now=at(0)),
        taken.pk: lease.acquire(Table, taken.pk, now=at(0)),
    }
    assert lease.renew(Table, held, now=at(1)) == set()
    assert lease_of(kept)[2] == at(1 + LEASE_SECONDS)
    # Paused past its lease: another process takes one table over meanwhile.
    lease.acquire(Table, taken.pk, now=at(1 + LEASE_SECONDS), me=OTHER)
    assert lease.renew(Table, held, now=at(7)) == {taken.pk}  # a lapsed lease nobody took is renewed
    assert lease_of(kept) == (process.name(), 1, at(7 + LEASE_SECONDS))
    assert lease_of(taken)[:2] == (OTHER, 2)  # the renewal did not touch it


def test_a_released_lease_is_free_at_once_and_its_epoch_stays(table):
    epoch = lease.acquire(Table, table.pk, now=at(0), me=OTHER)
    lease.release(Table, [(table.pk, epoch - 1)], me=OTHER)  # an older epoch's release does nothing
    assert lease_of(table)[0] == OTHER
    lease.release(Table, [(table.pk, epoch)], me=OTHER)
    assert lease_of(table) == ("", 1, None)
    assert lease.acquire(Table, table.pk, now=at(1)) == 2


def test_no_lease_for_a_missing_table():
    assert lease.acquire(Table, 987654, now=at(0)) is None
    with pytest.raises(Table.DoesNotExist):
        actors.BlackjackActor(987654).handle(lambda loaded: None)


def test_the_actor_takes_the_lease_when_it_loads(table, alice):
    actor = actors.actor_for(table.pk)
    actor.handle(actors.player_action(alice, {"action": "sit", "seat": 1}, 0))
    owner, epoch, _ = lease_of(table)
    assert (owner, epoch, actor.epoch) == (process.name(), 1, 1)


def test_an_actor_cannot_load_a_table_another_process_owns(table, alice):
    lease.acquire(Table, table.pk, now=timezone.now(), me=OTHER)
    with pytest.raises(OwnedElsewhere) as owned:
        actors.actor_for(table.pk).handle(actors.player_action(alice, {"action": "sit", "seat": 1}, 0))
    assert owned.value.owner == OTHER
    assert table.pk not in actors.BlackjackActor.actors
    assert version_of(table) == 0


def test_the_fence_refuses_a_stale_epoch_even_at_the_same_version(table, alice, bob):
    actor = actors.actor_for(table.pk)
    seen = actor.handle(actors.player_action(alice, {"action": "sit", "seat": 1}, 0))
    # Paused past its lease; another process takes the table over but writes nothing yet: the version is the
    # one in memory, only the epoch tells the stale owner apart.
    lease.acquire(Table, table.pk, now=timezone.now() + timedelta(seconds=LEASE_SECONDS), me=OTHER)
    with pytest.raises(OwnedElsewhere):
        actor.handle(actors.player_action(bob, {"action": "sit", "seat": 2}, seen))
    assert version_of(table) == seen  # nothing committed
    assert actor.state is None  # dropped
    assert table.pk not in actors.BlackjackActor.actors
    assert lease_of(table)[:2] == (OTHER, 2)


def test_renewing_drops_the_actors_whose_lease_was_lost(make_table, alice):
    kept, taken = make_table(name="kept"), make_table(name="taken")
    for table in (kept, taken):
        actors.actor_for(table.pk).handle(actors.player_action(alice, {"action": "sit", "seat": 1}, 0))
    lease.acquire(Table, taken.pk, now=timezone.now() + timedelta(seconds=LEASE_SECONDS), me=OTHER)
    assert actors.BlackjackActor.renew_leases() == {taken.pk}
    assert set(actors.BlackjackActor.actors) == {kept.pk}
