"""Template tags of the history pages, loaded as `{% load history_tags %}` (the `tables` app's tag library
`tables/templatetags/history_tags.py` re-exports this one)."""

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext, pgettext_lazy

register = template.Library()


#: A hand's result or final status (`blackjack.engine`) as the history pages write it.
HAND_WORDS = {
    "win": pgettext_lazy("blackjack: a hand's result", "win"),
    "lose": pgettext_lazy("blackjack: a hand's result", "lose"),
    "push": pgettext_lazy("blackjack: a hand's result", "push"),
    "blackjack": pgettext_lazy("blackjack: a hand's result", "blackjack"),
    "surrender": pgettext_lazy("blackjack: a hand's result", "surrender"),
    "charlie": pgettext_lazy("blackjack: a hand's result", "charlie"),
    "stood": pgettext_lazy("blackjack: a hand's status", "stood"),
    "doubled": pgettext_lazy("blackjack: a hand's status", "doubled"),
    "bust": pgettext_lazy("blackjack: a hand's status", "bust"),
    "surrendered": pgettext_lazy("blackjack: a hand's status", "surrendered"),
    "suited_678": pgettext_lazy("blackjack: a hand's status", "suited 6-7-8"),
    "even_money": pgettext_lazy("blackjack: a hand's status", "even money"),
}


#: A playing decision (the coach's notes) as the history pages write it.
MOVE_WORDS = {
    "hit": pgettext_lazy("blackjack: a decision", "hit"),
    "stand": pgettext_lazy("blackjack: a decision", "stand"),
    "double": pgettext_lazy("blackjack: a decision", "double"),
    "split": pgettext_lazy("blackjack: a decision", "split"),
    "surrender": pgettext_lazy("blackjack: a decision", "surrender"),
}


@register.filter
def hand_words(summary) -> str:
    """A round's hands as the history lists them ("win, bust") in the active language."""
    return ", ".join(hand_word(word.strip()) for word in str(summary or "").split(",") if word.strip())


@register.filter
def move_word(value) -> str:
    """ "hit", "double": a decision in the active language."""
    word = MOVE_WORDS.get(value)
    return str(word) if word is not None else str(value or "")


@register.filter
def hand_word(value) -> str:
    """ "win", "stood", "suited 6-7-8": a hand's result or status in the active language."""
    word = HAND_WORDS.get(value)
    return str(word) if word is not None else str(value or "").replace("_", " ")


_SUITS = {"s": ("♠", "spades"), "h": ("♥", "hearts"), "d": ("♦", "diamonds"), "c": ("♣", "clubs")}
_RANKS = {"A": "Ace", "T": "10", "J": "Jack", "Q": "Queen", "K": "King"}


@register.filter
def playing_card(card) -> str:
    """A small face-up card ("Ah" -> A♥ in red); None (a card not turned over yet) -> a card back."""
    if not card:
        return format_html(
            '<span class="pc pc-back" title="{}"><span class="sr-only">{}</span></span>',
            gettext("Face-down card"),
            gettext("hidden"),
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
        return gettext("n/a")
    return f"{100 * value:.{int(digits)}f}%"
