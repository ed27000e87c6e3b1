"""The documented cluster: two Daphne processes behind HAProxy with the configuration `make run-cluster` runs
(deploy/haproxy.cfg.template, docs/deployment.md). (a) Every socket of a table reaches one process, chosen by
the socket's path, and that process owns the table; the tables spread over both processes. (b) A process is
killed outright mid-play: the health check takes it out, its players reconnect through the balancer to the
other process, which takes its tables over, while the other's own tables keep their owner; started again, the
process is back in rotation. The balancer's log (path and process of every socket) is the witness."""

import asyncio
import time
from collections import defaultdict

import pytest

from accounts.audit import audit_ledger
from blackjack.models import Table
from tests.scale.play import Crew
from tests.threads import in_a_thread
from tools.loadtest.fixtures import prepare

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

HANG_SECONDS = 60.0


def owners(table_ids) -> dict[int, tuple[str, int]]:
    """table id -> (lease owner, epoch)."""
    rows = Table.objects.filter(pk__in=table_ids).values_list("id", "owner", "epoch")
    return {table_id: (owner, epoch) for table_id, owner, epoch in rows}


def routed(cluster) -> dict[int, list[str]]:
    """table id -> the processes (balancer names) its sockets reached, one entry per socket ended so far."""
    found = defaultdict(list)
    for name, path in cluster.balancer.routes():
        parts = path.strip("/").split("/")
        if len(parts) == 3 and parts[:2] == ["ws", "tables"]:
            found[int(parts[2])].append(name)
    return found


def pid_of(owner: str) -> int:
    """The process id in a lease owner's name (`live.process.name()`: host.pid.random); 0 for none (a lease
    given up: its table waits for a viewer)."""
    return int(owner.split(".")[-2]) if owner else 0


def test_a_tables_sockets_reach_one_process_by_path_and_the_tables_spread(cluster):
    site = cluster(2)
    fixture = prepare(run_id="balanced", tables=16, players=2)
    crew = Crew(fixture, [site.url])  # every player through the balancer

    async def scenario():
        await crew.start(timeout=60)
        await crew.play_rounds(len(fixture.table_ids), timeout=120)
        leases = await in_a_thread(owners, fixture.table_ids)
        await crew.finish()
        return leases

    leases = asyncio.run(scenario())
    assert crew.recorder.unexpected_errors == 0, crew.recorder.errors
    routes = routed(site)
    assert set(routes) == set(fixture.table_ids)  # the log holds every table's sockets, once closed
    assert all(len(names) == 2 for names in routes.values()), routes  # two players each, no reconnects
    assert all(len(set(names)) == 1 for names in routes.values()), routes  # one process per table
    assert {names[0] for names in routes.values()} == {"p1", "p2"}, routes  # both processes have tables
    # The process a table's sockets reached is the table's owner: its commands stayed there.
    for table_id, (owner, _) in leases.items():
        assert pid_of(owner) == site.by_name(routes[table_id][0]).process.pid, (table_id, owner)
    report = audit_ledger()
    assert report.ok, report.discrepancies


def test_a_killed_process_is_taken_out_and_its_tables_taken_over(cluster):
    site = cluster(2)
    fixture = prepare(run_id="lbkill", tables=12, players=2)
    table_ids = fixture.table_ids
    crew = Crew(fixture, [site.url])

    async def scenario():
        await crew.start(timeout=60)
        await crew.play_rounds(len(table_ids), timeout=120)
        before = await in_a_thread(owners, table_ids)
        victim = site.by_name("p1")
        if not any(pid_of(owner) == victim.process.pid for owner, _ in before.values()):
            victim = site.by_name("p2")  # the hash put every table on one process: kill that one
        survivor = next(server for server in site.servers if server is not victim)
        lost = {t for t, (owner, _) in before.items() if pid_of(owner) == victim.process.pid}
        killed_at = time.monotonic()
        victim.kill()
        name = site.name(victim)
        while not site.balancer.states()[name].startswith("DOWN"):
            assert time.monotonic() - killed_at < HANG_SECONDS, site.balancer.states()
            await asyncio.sleep(0.1)
        down_after = time.monotonic() - killed_at

        def taken_over() -> bool:
            now = owners(lost)
            return all(pid_of(now[t][0]) == survivor.process.pid and now[t][1] > before[t][1] for t in lost)

        while not await in_a_thread(taken_over):
            assert time.monotonic() - killed_at < HANG_SECONDS, await in_a_thread(owners, table_ids)
            await asyncio.sleep(0.1)
        taken_after = time.monotonic() - killed_at
        await crew.play_rounds(len(table_ids), timeout=120)  # every table plays on
        victim.start()
        while site.balancer.states()[name] != "UP":
            assert time.monotonic() - killed_at < 2 * HANG_SECONDS, site.balancer.states()
            await asyncio.sleep(0.1)
        await crew.finish()
        return before, lost, victim, survivor, down_after, taken_after

    before, lost, victim, survivor, down_after, taken_after = asyncio.run(scenario())
    print(
        f"\nbehind HAProxy, SIGKILL of the owner of {len(lost)} of {len(table_ids)} busy tables: down by its "
        f"health check after {down_after:.2f} s, every lost table taken over after {taken_after:.2f} s"
    )
    assert lost  # the killed process owned tables
    assert crew.recorder.errors["reconnect_failed"] == 0
    assert crew.recorder.reconnects >= 2 * len(lost)  # the killed process's players came back
    after = owners(table_ids)
    kept = set(table_ids) - lost
    assert {t: after[t] for t in kept} == {t: before[t] for t in kept}  # the survivor's tables never moved
    assert all(pid_of(after[t][0]) == survivor.process.pid for t in lost)
    # Through the balancer, each lost table's sockets reached the killed process, then the survivor only.
    names = routed(site)
    for t in lost:
        assert set(names[t]) == {site.name(victim), site.name(survivor)}, (t, names[t])
    report = audit_ledger()
    assert report.ok, report.discrepancies
