"""Template tags of the history pages, loaded as `{% load history_tags %}` (the `tables` app's tag library
`tables/templatetags/history_tags.py` re-exports this one)."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()


_SUITS = {"s": ("♠", "spades"), "h": ("♥", "hearts"), "d": ("♦", "diamonds"), "c": ("♣", "clubs")}
_RANKS = {"A": "Ace", "T": "10", "J": "Jack", "Q": "Queen", "K": "King"}


@register.filter
def playing_card(card) -> str:
    """A small face-up card ("Ah" -> A♥ in red); None (a card not turned over yet) -> a card back."""
    if not card:
        return mark_safe(
            '<span class="pc pc-back" title="Face-down card"><span class="sr-only">hidden</span></span>'
        )
    rank, suit = card[0], card[1]
    symbol, suit_name = _SUITS[suit]
    label = "10" if rank == "T" else rank
    tone = " pc-red" if suit in "hd" else ""
    return format_html(
        '<span class="pc{}" title="{} of {}">{}{}</span>',
        tone,
        _RANKS.get(rank, rank),
        suit_name,
        label,
        symbol,
    )


@register.filter
def signed(value) -> str:
    """+1,250 / -300 / 0."""
    try:
        amount = int(value)
    except (TypeError, ValueError):
        return ""
    return f"{amount:+,}" if amount else "0"


@register.filter
def percent(value, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.{int(digits)}f}%"
