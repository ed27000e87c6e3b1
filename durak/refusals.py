"""Durak's refusals in the viewer's language. The engine and the table flow are pure (no Django: the import
contracts), so their messages are English; the socket translates them here, at the edge: a message the
engine words the same every time by its text, any other (one naming cards or numbers) by its code. A refusal
found in neither stays as the engine worded it."""

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _

from live import refusals
from live.refusals import worded

BY_MESSAGE = {
    "the game is over": _("The game is over."),
    "the principal attacker leads the bout": _("The principal attacker leads the bout."),
    "you said done: you may add again after the next beat or take": _(
        "You said done: you may add again after the next beat or take."
    ),
    "only an attacker with cards may add cards": _("Only an attacker with cards may add cards."),
    "only cards of a rank already on the table may be added": _(
        "Only cards of a rank already on the table may be added."
    ),
    "a card of your passport rank cannot attack": _("A card of your passport rank cannot attack."),
    "only the defender beats cards": _("Only the defender beats cards."),
    "you are taking the cards": _("You are taking the cards."),
    "you were attacked with your passport rank: you must take": _(
        "You were attacked with your passport rank: you must take."
    ),
    "a card of your passport rank defends only if it is a trump": _(
        "A card of your passport rank defends only if it is a trump."
    ),
    "only the defender takes": _("Only the defender takes."),
    "you are already taking": _("You are already taking."),
    "there is no unbeaten card to take": _("There is no unbeaten card to take."),
    "the bout must be led": _("The bout must be led first."),
    "only perevodnoy allows a transfer": _("Only Perevodnoy allows a transfer."),
    "only the defender transfers": _("Only the defender transfers."),
    "a transfer comes before any card is beaten or taken": _(
        "A transfer comes before any card is beaten or taken."
    ),
    "a transfer needs a card of the attacking rank": _("A transfer needs a card of the attacking rank."),
    "the next player cannot be attacked with that many cards": _(
        "The next player cannot be attacked with that many cards."
    ),
    "The table has moved on since you looked; here is its state now.": _(
        "The table has moved on since you looked; here is its state now."
    ),
}

BY_CODE = {
    "not_in_hand": _("That card is not in your hand."),
    "limit_reached": _("This bout holds no more attacking cards."),
    "cannot_beat": _("That card does not beat this one."),
    "illegal_action": _("That move is not allowed now."),
    "not_your_turn": _("It is not your turn."),
    "table_full": _("The table is full."),
    "game_in_play": _("A game is in play."),
    "not_seated": _("You do not hold a seat at this table."),
}


#: The refusals of opening a table and quick play (`durak.services`, `durak.quick`), their numbers kept.
PATTERNS = [
    worded(
        r"Your account is suspended or closed: you cannot open a table\.",
        _("Your account is suspended or closed: you cannot open a table."),
    ),
    worded(
        r"Your account is suspended or closed: you cannot play\.",
        _("Your account is suspended or closed: you cannot play."),
    ),
    worded(
        r"You have (?P<tables>\d+) open Durak tables already\.",
        _("You have %(tables)s open Durak tables already."),
    ),
    worded(
        r"Your (?P<balance>[\d,]+) chips cannot cover a stake of (?P<stake>[\d,]+)\.",
        _("Your %(balance)s chips cannot cover a stake of %(stake)s."),
    ),
    worded(
        r"(?P<name>.+) cannot stake (?P<stake>[\d,]+) chips: a new account stakes at most (?P<limit>[\d,]+) "
        r"chips a game until it is (?P<days>\d+) days old or has finished (?P<games>\d+) games\.",
        _(
            "%(name)s cannot stake %(stake)s chips: a new account stakes at most %(limit)s chips a game "
            "until it is %(days)s days old or has finished %(games)s games."
        ),
    ),
]


def translated(code: str, message: str) -> str:
    """The refusal's message in the active language (in English, the engine's own words where they are more
    precise than the code's)."""
    worded = BY_MESSAGE.get(message)
    if worded is not None:
        return gettext(worded)
    common = refusals.translated(message, [*PATTERNS, *refusals.COMMON])
    if common is not None:
        return common
    english = BY_CODE.get(code)
    if english is not None and (local := gettext(english)) != english:
        return local
    return message
