"""Refusals in the connection's language, for every game: the pure code words a refusal in English (the
import contracts keep Django out of engines and flows), and the socket translates it at the edge.

A game lists its refusals as patterns (`worded`): a regular expression matching the English message whole,
its named groups the message's numbers or names, and the English template of the same sentence with those
names as `%(name)s`, marked for translation with gettext_noop. `translated` finds the first pattern that
matches and fills the template's translation with the groups (with no translation, as in English, the message
stays as it was worded). The refusals of the site's own pipeline (chat,
reactions, rate limits, a lost owner) are `COMMON`, tried after the game's. A message no pattern matches
stays as it was worded.
"""

import re
from collections.abc import Callable, Iterable, Mapping

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _

from live.route import DATABASE_DOWN, OWNER_AWAY

Pattern = tuple[re.Pattern[str], str]
#: A group's own translation: a table of its words (each marked with gettext_noop), or a function.
Words = Mapping[str, str] | Callable[[str], str]


def worded(pattern: str, template: str) -> Pattern:
    """A refusal's English message as a pattern (matched whole) and its template, marked with gettext_noop."""
    return re.compile(pattern), template


def translated(
    message: str, patterns: Iterable[Pattern], groups: Mapping[str, Words] | None = None
) -> str | None:
    """`message` in the active language by the first of `patterns` it matches whole (None: by none). A
    group named in `groups` is a word of the message translated by its own table (an action's name) or
    function."""
    for pattern, template in patterns:
        match = pattern.fullmatch(message)
        if match is not None:
            local = gettext(template)
            if local == template:  # not translated (English): the message as it was worded
                return message
            return local % {
                key: _word(value, (groups or {}).get(key)) for key, value in match.groupdict().items()
            }
    return None


def _word(value: str, words: Words | None) -> str:
    if words is None:
        return value
    if callable(words):
        return words(value)
    return gettext(words[value]) if value in words else value


COMMON = [
    worded(r"Log in to chat\.", _("Log in to chat.")),
    worded(
        r"Your account is suspended or closed: you cannot chat\.",
        _("Your account is suspended or closed: you cannot chat."),
    ),
    worded(
        r"Too many chat lines and emotes: at most (?P<lines>\d+) every (?P<seconds>\d+) seconds\.",
        _("Too many chat lines and emotes: at most %(lines)s every %(seconds)s seconds."),
    ),
    worded(
        r"A chat message is 1 to (?P<bytes>\d+) bytes of UTF-8\.",
        _("A chat message is 1 to %(bytes)s bytes of UTF-8."),
    ),
    worded(r"the chat message is empty", _("The chat message is empty.")),
    worded(
        r"the chat message contains control characters", _("The chat message contains control characters.")
    ),
    worded(
        r"the chat message is too long \((?P<size>\d+) > (?P<limit>\d+) bytes of UTF-8\)",
        _("The chat message is too long (%(size)s bytes of UTF-8; at most %(limit)s)."),
    ),
    worded(r"Too many messages: at most 20 a second\.", _("Too many messages: at most 20 a second.")),
    worded(r"Log in to play; spectators can only watch\.", _("Log in to play; spectators can only watch.")),
    worded(
        re.escape(OWNER_AWAY),
        _("The server that runs this table did not answer; try again in a few seconds."),
    ),
    worded(
        r"The server running this table did not answer; the action may have been applied\. .*",
        _("The server running this table did not answer; the action may have been applied. Try it again."),
    ),
    worded(
        re.escape(DATABASE_DOWN[1]), _("The server cannot reach its database; nothing was changed. Retry.")
    ),
    worded(
        r"The table moved to another server; try again\.", _("The table moved to another server; try again.")
    ),
    worded(
        r"The table changed while this action was applied; try again\.",
        _("The table changed while this action was applied; try again."),
    ),
]
