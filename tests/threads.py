"""Database work from async tests, run in a worker thread as a consumer's is."""

import asyncio

from django.db import connections


async def in_a_thread(function, *args, **kwargs):
    """`function(*args, **kwargs)` in a worker thread, closing that thread's connection afterwards (an open
    one would keep the test database from being dropped)."""

    def run():
        try:
            return function(*args, **kwargs)
        finally:
            connections.close_all()

    return await asyncio.to_thread(run)
