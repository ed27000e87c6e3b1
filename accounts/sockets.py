"""Closing a user's open websockets when the session that opened them ends.

Every websocket consumer of a logged-in user joins the user's group on the channel layer (`user_group`), so
every server process hears of it. A `session.ended` message to that group closes the user's consumers with
`SESSION_ENDED`: all of them, or, when the message names a session (by `session_id`), those that session
opened. `accounts.signals` sends it when the user logs out (that session), when their password changes
(every other session is logged out by Django's session hash: all) and when staff suspend or deactivate them
(all). A client that connects again is whoever its session says it is now: a spectator after a log-out.

A `balance.changed` message to the group (`tell_balance`, sent when chips move outside a table: the daily
grant, a staff adjustment) makes each of the user's consumers read the balance afresh (`current_balance`)
and push it to its page, so the header shows it without a reload. The message carries no number: the
database is the only source of a balance.
"""

import hashlib

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from accounts.models import Wallet

#: The close code of a socket whose session ended (the 4000-4999 range is the application's).
SESSION_ENDED = 4001
MESSAGE_TYPE = "session.ended"
BALANCE_CHANGED = "balance.changed"


def user_group(user_id: int) -> str:
    return f"user-{user_id}"


def session_id(session_key: str | None) -> str | None:
    """A session's name in messages: a hash, since the key itself is a credential and stays out of Redis."""
    return hashlib.sha256(session_key.encode()).hexdigest()[:40] if session_key else None


def close_sockets(*, user_id: int, session_key: str | None = None) -> None:
    """After the current transaction commits, close the user's sockets (only `session_key`'s, if given)."""
    message = {"type": MESSAGE_TYPE, "session": session_id(session_key)}
    transaction.on_commit(lambda: _send(user_group(user_id), message))


def ended_for(event: dict, own_session: str | None) -> bool:
    """Does a `session.ended` message end a socket opened by the session `own_session`?"""
    return event.get("session") is None or event["session"] == own_session


def tell_balance(*, user_id: int) -> None:
    """After the current transaction commits, tell the user's open sockets that their balance changed. A
    channel layer that fails then is logged, not raised: the chips have moved, only the notice is lost."""
    transaction.on_commit(lambda: _send(user_group(user_id), {"type": BALANCE_CHANGED}), robust=True)


def current_balance(user_id: int) -> int | None:
    """The user's balance as committed now (None without a wallet)."""
    return (
        Wallet.objects.filter(user_id=user_id, kind=Wallet.Kind.PLAYER)
        .values_list("balance", flat=True)
        .first()
    )


def _send(group: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, message)
