"""Closing a user's open websockets when the session that opened them ends.

Every websocket consumer of a logged-in user joins two groups on the channel layer (so every server process
hears of them): the user's (`user_group`) and its session's (`session_group`). Sending `session.ended` to a
group makes each of its consumers close with `SESSION_ENDED`. `accounts.signals` sends it when the user logs
out (that session's sockets), when their password changes (every other session is logged out by Django's
session hash, so all their sockets) and when staff suspend or deactivate them (all). A client that connects
again is whoever its session says it is now: a spectator after a log-out.
"""

import hashlib

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

#: The close code of a socket whose session ended (the 4000-4999 range is the application's).
SESSION_ENDED = 4001
MESSAGE = {"type": "session.ended"}


def user_group(user_id: int) -> str:
    return f"user-{user_id}"


def session_group(session_key: str) -> str:
    """A session key names a group by its hash: the key itself is a credential and stays out of Redis."""
    return "session-" + hashlib.sha256(session_key.encode()).hexdigest()[:40]


def close_sockets(*, user_id: int | None = None, session_key: str | None = None) -> None:
    """After the current transaction commits, close every socket of the user, or of the session."""
    if user_id is not None:
        group = user_group(user_id)
    elif session_key:
        group = session_group(session_key)
    else:
        return
    transaction.on_commit(lambda: _send(group))


def _send(group: str) -> None:
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, MESSAGE)
