"""The table websockets this process holds open, for its clock to vouch for (`services.refresh_presence`).

A consumer adds itself once its presence row is written and removes itself when it closes. The set holds it
weakly: a consumer that goes away without closing (its task cancelled at shutdown) drops out by itself rather
than being vouched for forever. The clock thread reads a copy. Nothing here touches the database.
"""

import threading
import weakref

_lock = threading.Lock()
_open: "weakref.WeakSet" = weakref.WeakSet()  # consumers with `channel_name`, `table_id` and `user`


def opened(consumer) -> None:
    with _lock:
        _open.add(consumer)


def closed(consumer) -> None:
    with _lock:
        _open.discard(consumer)


def is_open(channel_name: str) -> bool:
    with _lock:
        return any(consumer.channel_name == channel_name for consumer in _open)


def held() -> dict[str, tuple[int, object]]:
    """channel name -> (table id, user) of every open table websocket of this process."""
    with _lock:
        consumers = list(_open)
    return {consumer.channel_name: (consumer.table_id, consumer.user) for consumer in consumers}
