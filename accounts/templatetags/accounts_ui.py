"""Template helpers of the account pages."""

from django import template

from accounts import memos

register = template.Library()


@register.filter
def memo(text: str) -> str:
    """A ledger memo in the reader's language (`accounts.memos`)."""
    return memos.translated(text)
