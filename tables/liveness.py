"""The table websockets this process holds open, for its clock to vouch for (`services.refresh_presence`).

A consumer adds itself once its presence row is written and removes itself when it closes; the clock thread
reads a copy. Nothing here touches the database.
"""

import threading

_lock = threading.Lock()
_open: dict[str, tuple[int, object]] = {}  # channel name -> (table id, user)


def opened(channel_name: str, table_id: int, user) -> None:
    with _lock:
        _open[channel_name] = (table_id, user)


def closed(channel_name: str) -> None:
    with _lock:
        _open.pop(channel_name, None)


def held() -> dict[str, tuple[int, object]]:
    with _lock:
        return dict(_open)
