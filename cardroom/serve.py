"""Daphne on uvloop's event loop: `python -m cardroom.serve <daphne's arguments>`.

Daphne runs Twisted on an asyncio loop that it makes when `daphne.server` is first imported. This entry point
picks uvloop's loop for it first, then hands the command line to Daphne unchanged. Under the load benchmark
(100 tables x 5 players, two processes) uvloop cut the servers' CPU per action by about a tenth and the p99
by a third, since the Redis relay, the database thread's callbacks and the timers all run through the loop.

Without uvloop (it does not exist on Windows) or with `UVLOOP=0`, Daphne runs on asyncio's own loop, exactly
as the plain `daphne` command does. `make run` keeps Django's development server; `make run-cluster` and the
benchmarks use this.

`quiet_gc` tunes the cyclic garbage collector of a long-running process: the ASGI application calls it once
loaded (whatever server runs it), and the load tester before its bots start.
"""

import asyncio
import gc
import sys

from cardroom.env import env_bool

#: The cyclic garbage collector's thresholds in a server process (`quiet_gc`): a young pass every 20,000 new
#: objects instead of 2,000, a full pass every 5,000 young ones instead of 100.
GC_THRESHOLDS = (20_000, 50, 100)


def uvloop_module():
    """uvloop, unless `UVLOOP=0` or it is not installed (None)."""
    if not env_bool("UVLOOP", True):
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop


def loop_factory():
    """The loop factory for `asyncio.run` in tools (the load tester's bots): uvloop's, or None for asyncio's
    own."""
    uvloop = uvloop_module()
    return None if uvloop is None else uvloop.new_event_loop


def quiet_gc() -> None:
    """Keep what is loaded by now out of the cyclic garbage collector's passes, and make its passes rarer.

    A pass stops the whole process for as long as it takes to walk every object it tracks. Under the load
    benchmark (100 tables x 5 players, two processes), with Python's thresholds each server process stopped
    for a 55-75 ms full pass every 20-40 s and for a 10-30 ms young pass every few seconds (measured with a
    `gc.callbacks` hook). Under three quarters busy, the queue each pause left behind took several times the
    pause to drain, and the pauses alone made the p99 of the actions: 240-520 ms against a median of 25.
    Freezing what the process loaded (Django, Channels, the code: it lives as long as the process) cut a full
    pass from 120-150 ms to that; these thresholds brought the p99 to about 120 ms, with the same CPU an
    action. Reference counting, which frees almost everything, is not affected; a full pass mostly frees the
    objects of closed connections, and still comes."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def main() -> None:
    uvloop = uvloop_module()
    if uvloop is not None:
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    from daphne.cli import CommandLineInterface

    sys.argv[0] = "daphne"
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
