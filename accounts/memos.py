"""Ledger memos in the reader's language. A memo is stored as it was written, in English; the pages show it
translated by pattern: the wallet services' own (`accounts.services`), a table's seat, and each game's,
registered from its `AppConfig.ready()` (`register`). A memo no pattern matches (a staff adjustment's reason)
is shown as written."""

import re

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _

#: (pattern matched whole, its English template marked with gettext_noop; the groups fill its %(name)s).
PATTERNS: list[tuple[re.Pattern[str], str]] = []


def register(pattern: str, template: str) -> None:
    """A memo written as `pattern` (a regular expression with named groups) reads as `template` translated."""
    PATTERNS.append((re.compile(pattern), template))


def translated(text: str) -> str:
    for pattern, template in PATTERNS:
        match = pattern.fullmatch(text)
        if match is not None:
            return gettext(template) % match.groupdict()
    return text


register(r"Welcome grant", _("Welcome grant"))
register(r"Daily grant", _("Daily grant"))
register(r"seat (?P<number>\d+)", _("seat %(number)s"))
