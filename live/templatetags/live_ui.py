"""Template helpers every game's table pages share: times as the pages show them (`clock`, `iso`), how many
seconds are left of a deadline (`seconds_left`) and how a card is drawn (`card_face`)."""

from datetime import UTC, datetime

from django import template
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _

from live.faces import card_face
from live.protocol import EMOTES

register = template.Library()
register.filter("card_face", card_face)

#: The quick reactions' words (`live.protocol.EMOTES`: a key -> the English text) in the reader's language.
EMOTE_WORDS = {"gg": _("GG"), "nice_hand": _("Nice hand"), "ouch": _("Ouch"), "good_luck": _("Good luck")}


@register.filter
def emote_label(key: str) -> str:
    """A quick reaction as the page shows it: its words in the active language, or its symbol."""
    words = EMOTE_WORDS.get(key)
    return gettext(words) if words is not None else EMOTES.get(key, "")


def as_datetime(value) -> datetime | None:
    """A datetime from an ISO-8601 text or a datetime (naive ones are UTC); None for anything else."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value:
        moment = parse_datetime(value.replace("Z", "+00:00"))
        if moment is None:
            return None
    else:
        return None
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


@register.filter
def clock(value) -> str:
    """ "14:03:07" (UTC) from an ISO-8601 time or datetime (the page shows it in the reader's own zone)."""
    moment = as_datetime(value)
    return moment.astimezone(UTC).strftime("%H:%M:%S") if moment else ""


@register.filter
def iso(value) -> str:
    """A machine-readable time for `<time datetime=...>`."""
    moment = as_datetime(value)
    return moment.isoformat() if moment else ""


@register.filter
def seconds_left(deadline) -> int | str:
    """Whole seconds from now until an ISO-8601 deadline (never negative); "" when there is none. Rendered at
    send time, so the browser counts down from it without trusting its own clock."""
    moment = as_datetime(deadline)
    if moment is None:
        return ""
    return max(0, round((moment - timezone.now()).total_seconds()))
