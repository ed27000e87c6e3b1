"""Template helpers of the account pages."""

import re

from django import template
from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _

register = template.Library()

#: The ledger memos the wallet services write themselves (`accounts.services`), in the reader's language;
#: any other memo (a staff adjustment's reason, a game's own) is shown as it was written.
MEMOS = {memo: memo for memo in (_("Welcome grant"), _("Daily grant"))}
#: A table's seat, which the games name in their memos ("seat 2").
SEAT = re.compile(r"seat (\d+)")


@register.filter
def memo(text: str) -> str:
    known = MEMOS.get(text)
    if known is not None:
        return gettext(known)
    if SEAT.fullmatch(text):
        return gettext("seat %(number)s") % {"number": text.split()[1]}
    return text
