"""This process's identity: `name()`, a string unique per server process (`live.<host>.<pid>.<random>`).

It is what a live object's row names as its `owner` (`live.lease`), and it is a valid Channels channel name
(letters, digits, `.`, `-`, `_`; under 100 characters): a process that owns tables receives the commands other
processes forward to it on exactly this channel name. It is a plain module-level function so that every part
of the process (the lease, the forwarder, the sweeper) reads the same value without being handed it. A forked
child gets a name of its own (the pid is part of the key), never its parent's. `LIVE_PROCESS` in the
environment sets the name instead (tests that start servers name them; it must be unique among running
processes).
"""

import os
import re
import secrets
import socket

_names: dict[int, str] = {}


def name() -> str:
    """This process's name (made once per pid)."""
    pid = os.getpid()
    found = _names.get(pid)
    if found is None and os.environ.get("LIVE_PROCESS"):
        found = _names[pid] = os.environ["LIVE_PROCESS"]
    if found is None:
        host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"
        found = _names[pid] = f"live.{host}.{pid}.{secrets.token_hex(4)}"
    return found
