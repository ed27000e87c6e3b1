"""Where the consumers' database work runs (`on_database`): on one shared thread with SQLite, on a pool of
`DATABASE_THREADS` threads with PostgreSQL, so that actions at different tables overlap."""

import asyncio
import threading

import pytest

from tables import consumers
from tables.consumers import on_database

pytestmark = pytest.mark.asyncio


def thread_name() -> str:
    return threading.current_thread().name


async def test_with_several_database_threads_calls_run_side_by_side(settings, monkeypatch):
    settings.DATABASE_THREADS = 2
    monkeypatch.setattr(consumers, "_pool", None)
    both_inside = threading.Barrier(2, timeout=5)

    def meet() -> str:
        both_inside.wait()  # BrokenBarrierError unless the other call runs meanwhile
        return thread_name()

    try:
        names = await asyncio.gather(on_database(meet)(), on_database(meet)())
    finally:
        consumers._pool.shutdown()
    assert len(set(names)) == 2
    assert all(name.startswith("database") for name in names)


async def test_with_one_database_thread_calls_share_one_thread(db, settings, monkeypatch):
    # `db`: the shared thread may hold a connection from an earlier test, which the clean-up around each
    # call (Channels' `close_old_connections`) checks with a query.
    settings.DATABASE_THREADS = 1
    monkeypatch.setattr(consumers, "_pool", None)
    names = await asyncio.gather(*(on_database(thread_name)() for _ in range(4)))
    assert len(set(names)) == 1
    assert consumers._pool is None
