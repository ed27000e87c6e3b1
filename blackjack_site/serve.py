"""Daphne on uvloop's event loop: `python -m blackjack_site.serve <daphne's arguments>`.

Daphne runs Twisted on an asyncio loop that it makes when `daphne.server` is first imported. This entry point
picks uvloop's loop for it first, then hands the command line to Daphne unchanged. Under the load benchmark
(100 tables x 5 players, two processes) uvloop cut the servers' CPU per action by about a tenth and the p99
by a third, since the Redis relay, the thread pool's callbacks and the timers all run through the loop.

Without uvloop (it does not exist on Windows) or with `UVLOOP=0`, Daphne runs on asyncio's own loop, exactly
as the plain `daphne` command does. `make run` keeps Django's development server; `make run-cluster` and the
benchmarks use this.
"""

import asyncio
import os
import sys


def uvloop_module():
    """uvloop, unless `UVLOOP=0` or it is not installed (None)."""
    if os.environ.get("UVLOOP", "1").strip().lower() in ("0", "false", "off", "no"):
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


def main() -> None:
    uvloop = uvloop_module()
    if uvloop is not None:
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    from daphne.cli import CommandLineInterface

    sys.argv[0] = "daphne"
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
