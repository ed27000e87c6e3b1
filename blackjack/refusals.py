"""Blackjack's refusals in the viewer's language. The engine and the table flow are pure (no Django: the
import contracts), so they word their refusals in English; the socket translates them here, at the edge, by
pattern (`live.refusals`): each message whole, its seat numbers, amounts and limits kept. A message matched
by none of these nor by the site's own (`live.refusals.COMMON`) is said by its code, and one whose code says
nothing either stays as it was worded."""

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _

from live import refusals
from live.refusals import worded

#: The decisions a refusal may name, as the flow and the engine write them.
DECISIONS = {
    "insurance": _("insurance"),
    "even money": _("even money"),
    "surrender": _("surrender"),
    "early surrender": _("early surrender"),
    "hit": _("hit"),
    "stand": _("stand"),
    "double": _("double"),
    "split": _("split"),
}
PHASES = {
    "betting": _("betting"),
    "insurance": _("insurance"),
    "playing": _("playing"),
    "settled": _("settled"),
}
GROUPS = {"decision": DECISIONS, "phase": PHASES}

PATTERNS = [
    # The table's flow (`blackjack.flow`).
    worded(r"Bets are not open now\.", _("Bets are not open now.")),
    worded(r"No (?P<decision>[a-z ]+) decision is open\.", _("No %(decision)s decision is open.")),
    worded(
        r"You have no open (?P<decision>[a-z ]+) decision\.", _("You have no open %(decision)s decision.")
    ),
    worded(r"You cannot (?P<decision>[a-z ]+) now\.", _("You cannot %(decision)s now.")),
    worded(
        r"There is no early surrender offer to decline now\.",
        _("There is no early surrender offer to decline now."),
    ),
    worded(r"It is not your turn\.", _("It is not your turn.")),
    worded(r"You join the next round\.", _("You join the next round.")),
    worded(r"Take a seat to play\.", _("Take a seat to play.")),
    worded(r"Seat (?P<seat>\S+) is not yours\.", _("Seat %(seat)s is not yours.")),
    worded(r"Seat (?P<seat>\d+) joins the next round\.", _("Seat %(seat)s joins the next round.")),
    worded(r"This table is closed to new players\.", _("This table is closed to new players.")),
    worded(r"Choose a seat from 1 to (?P<seats>\d+)\.", _("Choose a seat from 1 to %(seats)s.")),
    worded(
        r"A seed is 1 to (?P<letters>\d+) letters, digits, '-', '_' or '\.'\.",
        _("A seed is 1 to %(letters)s letters, digits, '-', '_' or '.'."),
    ),
    worded(r"Seat (?P<seat>\d+) is taken\.", _("Seat %(seat)s is taken.")),
    worded(
        r"You may hold at most (?P<seats>\d+) seat\(s\) here\.",
        _("You may hold at most %(seats)s seat(s) here."),
    ),
    worded(r"You are not seated here\.", _("You are not seated here.")),
    worded(r"There is nothing to get ready for now\.", _("There is nothing to get ready for now.")),
    worded(
        r"Your account is suspended or closed: you cannot play\.",
        _("Your account is suspended or closed: you cannot play."),
    ),
    worded(
        r"The table has changed \(version \d+\); try again\.",
        _("The table has changed since you looked; try again."),
    ),
    worded(r"Unknown action .*", _("Unknown action.")),
    # The services around it.
    worded(r"Log in to play\.", _("Log in to play.")),
    worded(
        r"The round could not be continued and was voided; every stake was refunded\.",
        _("The round could not be continued and was voided; every stake was refunded."),
    ),
    worded(
        r"Not enough chips: this needs (?P<needed>[\d,]+) and the balance is (?P<balance>[\d,]+)\.",
        _("Not enough chips: this needs %(needed)s and the balance is %(balance)s."),
    ),
    worded(r"No such table\.", _("No such table.")),
    # Opening a table (`blackjack.services.staff.open_table`).
    worded(r"Log in to open a table\.", _("Log in to open a table.")),
    worded(
        r"Your account is suspended or closed: you cannot open a table\.",
        _("Your account is suspended or closed: you cannot open a table."),
    ),
    worded(
        r"Give the table a name of 1 to 60 characters\.", _("Give the table a name of 1 to 60 characters.")
    ),
    worded(r"Bet limits are whole numbers of chips\.", _("Bet limits are whole numbers of chips.")),
    worded(
        r"Limits must satisfy (?P<low>[\d,]+) <= minimum <= maximum <= (?P<high>[\d,]+)\.",
        _("Limits must satisfy %(low)s <= minimum <= maximum <= %(high)s."),
    ),
    worded(
        r"You already have (?P<tables>\d+) open tables, the most a player may open\..*",
        _(
            "You already have %(tables)s open tables, the most a player may open. Play at one of them, or "
            "ask staff to close one."
        ),
    ),
    # The protocol's amounts (`blackjack.protocol`).
    worded(
        r"the amount must be a whole number of chips, not .*",
        _("The amount must be a whole number of chips."),
    ),
    worded(
        r"the amount must be between 1 and (?P<most>\d+) chips, not (?P<amount>-?\d+)",
        _("The amount must be between 1 and %(most)s chips, not %(amount)s."),
    ),
    # The engine's (`blackjack.engine.round`).
    worded(
        r"the bet must be between (?P<low>\d+) and (?P<high>\d+) chips",
        _("The bet must be between %(low)s and %(high)s chips."),
    ),
    worded(r"amount must be a whole number of chips", _("The amount must be a whole number of chips.")),
    worded(r"the round is over", _("The round is over.")),
    worded(r"nobody has bet", _("Nobody has bet.")),
    worded(
        r"surrender is only allowed on the first two cards of an unsplit hand",
        _("Surrender is only allowed on the first two cards of an unsplit hand."),
    ),
    worded(r"split aces take one card each", _("Split aces take one card each.")),
    worded(r"this hand cannot double", _("This hand cannot double.")),
    worded(r"this hand cannot split", _("This hand cannot split.")),
    worded(
        r"cannot (?P<decision>[a-z ]+) now: the round is (?P<phase>[a-z]+)",
        _("You cannot %(decision)s now: the round is %(phase)s."),
    ),
    worded(
        r"no (?P<decision>[a-z ]+) decision is open for seat (?P<seat>\d+)",
        _("No %(decision)s decision is open for seat %(seat)s."),
    ),
    worded(
        r"it is not the turn of seat (?P<seat>\d+), hand (?P<hand>\d+)",
        _("It is not the turn of seat %(seat)s, hand %(hand)s."),
    ),
    worded(r"seat (?P<seat>\S+) is not in this round", _("Seat %(seat)s is not in this round.")),
    worded(r"accept must be true or false", _("Answer yes or no.")),
]

#: What a refusal's code says when its message matches no pattern (say, a new wording).
BY_CODE = {
    "insufficient_chips": _("Not enough chips."),
    "not_your_turn": _("It is not your turn."),
    "illegal_action": _("That is not allowed now."),
    "seat_taken": _("That seat is taken."),
    "table_closed": _("This table is closed to new players."),
    "bad_amount": _("That amount is not allowed here."),
    "suspended": _("Your account is suspended or closed."),
    "not_authenticated": _("Log in to play."),
    "stale_version": _("The table has changed since you looked; try again."),
    "rate_limited": _("Too many messages; slow down."),
}


def translated(code: str, message: str) -> str:
    """The refusal's message in the active language (English: as the game worded it)."""
    worded_here = refusals.translated(message, PATTERNS, GROUPS)
    if worded_here is None:
        worded_here = refusals.translated(message, refusals.COMMON)
    if worded_here is not None:
        return worded_here
    english = BY_CODE.get(code)
    if english is not None and (local := gettext(english)) != english:
        return local
    return message
