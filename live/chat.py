"""Chat and quick reactions at a table of any game: the site's, so every game has them by registering.

A chat line is stored (`live.models.ChatLine`, keyed by game and table) and shown to the table's viewers in
every process on commit (`live.fanout`: only the line's id crosses the channel layer; each process reads it).
A reaction (`emote`, a key of `live.protocol.EMOTES`) is not stored and changes no version: it is shown at
once to the table's viewers here and sent to the other processes, which check it against the list. Both count
against one limit per user, over all their sockets and (with Redis) every server process (`allowed`). The text
was checked by the protocol (`live.protocol.chat_text`); a barred (suspended or closed) account may not chat.
"""

import time
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from cards.errors import Refused
from live import fanout
from live.models import ChatLine
from live.protocol import EMOTES, MAX_CHAT_BYTES, RATE_LIMITED

#: Chat lines and reactions one user may post in a window of CHAT_WINDOW_SECONDS.
CHAT_LINES = 5
CHAT_WINDOW_SECONDS = 5
#: The lines a table's chat log shows (the newest).
CHAT_SHOWN = 30


def allowed(user_id: int, *, now: float | None = None) -> bool:
    """Count one chat line or reaction of the user; False beyond CHAT_LINES in the current window. The counter
    is in the cache (Redis when REDIS_URL is set), so ten sockets of one user share one limit."""
    now = time.time() if now is None else now
    key = f"chat-lines:{user_id}:{int(now // CHAT_WINDOW_SECONDS)}"
    cache.add(key, 0, timeout=2 * CHAT_WINDOW_SECONDS)
    try:
        return cache.incr(key) <= CHAT_LINES
    except ValueError:  # the counter expired between add and incr: a new window
        cache.add(key, 1, timeout=2 * CHAT_WINDOW_SECONDS)
        return True


def check(user) -> None:
    """Refuse a user who may not chat now: anonymous, barred, or over the limit."""
    if user is None or not user.is_authenticated:
        raise Refused("not_authenticated", "Log in to chat.")
    if user.barred:
        raise Refused("suspended", "Your account is suspended or closed: you cannot chat.")
    if not allowed(user.pk):
        raise Refused(
            RATE_LIMITED,
            f"Too many chat lines and emotes: at most {CHAT_LINES} every {CHAT_WINDOW_SECONDS} seconds.",
        )


def post(*, game: str, table_id: int, user, text: str) -> ChatLine:
    """Store a chat line (checked text of 1 to `MAX_CHAT_BYTES` bytes) and tell the table's viewers."""
    if not isinstance(text, str) or not text.strip() or len(text.encode("utf-8")) > MAX_CHAT_BYTES:
        raise Refused("bad_message", f"A chat message is 1 to {MAX_CHAT_BYTES} bytes of UTF-8.")
    with transaction.atomic():
        line = ChatLine.objects.create(game=game, table_ref=table_id, user=user, text=text.strip())
        fanout.chat_on_commit(game, table_id, line.pk)
    return line


def react(*, game: str, table_id: int, user, emote: str) -> dict[str, str]:
    """Show a quick reaction (a key of `EMOTES`) to the table's viewers, at the sender's seat and in their
    reactions log. Nothing is stored."""
    if emote not in EMOTES:
        raise Refused("bad_message", f"Unknown emote {emote!r}; emotes: {', '.join(EMOTES)}.")
    entry = {
        "emote": emote,
        "text": EMOTES[emote],
        "from": user.username,
        "display_name": user.public_name,
        "at": _iso(timezone.now()),
    }
    fanout.emote(game, table_id, entry)
    return entry


def recent(*, game: str, table_id: int) -> list[dict[str, Any]]:
    """The table's last chat lines, oldest first."""
    rows = ChatLine.objects.filter(game=game, table_ref=table_id).order_by("-id")
    rows = rows.values_list("id", "user__username", "user__display_name", "text", "created_at")[:CHAT_SHOWN]
    return [
        {"id": pk, "from": username, "display_name": display_name or username, "text": text, "at": _iso(at)}
        for pk, username, display_name, text, at in reversed(list(rows))
    ]


def line(*, game: str, table_id: int, line_id: int) -> dict[str, Any] | None:
    """One chat line of the table, as `recent` gives it (None: no such line there)."""
    found = (
        ChatLine.objects.filter(pk=line_id, game=game, table_ref=table_id)
        .values_list("id", "user__username", "user__display_name", "text", "created_at")
        .first()
    )
    if found is None:
        return None
    pk, username, display_name, text, at = found
    return {
        "id": pk,
        "from": username,
        "display_name": display_name or username,
        "text": text,
        "at": _iso(at),
    }


def panel(*, game: str, table_id: int) -> dict[str, Any]:
    """What a table page's chat panel shows at its first load (`live/chat.html#panel`)."""
    return {"chat": recent(game=game, table_id=table_id), "emotes": EMOTES.items()}


def _iso(moment) -> str:
    return moment.isoformat().replace("+00:00", "Z")
