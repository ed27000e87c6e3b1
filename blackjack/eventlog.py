"""The table's event log in the viewer's language. The flow words its events in English (`blackjack.flow`,
pure: no Django) and they are stored so; the page translates each line when it shows it, by pattern
(`live.refusals.worded`): the line matched whole, its names, cards and numbers kept. A line no pattern
matches (a staff notice, say) is shown as it was written."""

from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_noop as _

from blackjack.history.tags import hand_word
from live import refusals
from live.refusals import worded

WHO = r"(?P<who>.+?)"
SEAT = r"\(seat (?P<seat>\d+)\)"
#: The words an event may carry inside it, each translated by its own table.
RANKS = {
    "aces": _("aces"), "twos": _("twos"), "threes": _("threes"), "fours": _("fours"), "fives": _("fives"),
    "sixes": _("sixes"), "sevens": _("sevens"), "eights": _("eights"), "nines": _("nines"), "tens": _("tens"),
    "jacks": _("jacks"), "queens": _("queens"), "kings": _("kings"),
}  # fmt: skip

PATTERNS = [
    worded(
        r"The table is closing: this is its last round\.", _("The table is closing: this is its last round.")
    ),
    worded(r"The table is open\.", _("The table is open.")),
    worded(
        r"The table's settings changed; they apply from the next round\.",
        _("The table's settings changed; they apply from the next round."),
    ),
    worded(
        rf"{WHO} bets (?P<amount>[\d,]+) on seat (?P<seat>\d+)\.",
        _("%(who)s bets %(amount)s on seat %(seat)s."),
    ),
    worded(rf"{WHO} takes insurance {SEAT}\.", _("%(who)s takes insurance (seat %(seat)s).")),
    worded(rf"{WHO} declines insurance {SEAT}\.", _("%(who)s declines insurance (seat %(seat)s).")),
    worded(rf"{WHO} takes even money {SEAT}\.", _("%(who)s takes even money (seat %(seat)s).")),
    worded(rf"{WHO} declines even money {SEAT}\.", _("%(who)s declines even money (seat %(seat)s).")),
    worded(rf"{WHO} takes early surrender {SEAT}\.", _("%(who)s takes early surrender (seat %(seat)s).")),
    worded(
        rf"{WHO} declines early surrender {SEAT}\.", _("%(who)s declines early surrender (seat %(seat)s).")
    ),
    worded(
        rf"{WHO} hits:(?P<cards>[ 2-9TJQKAshdc]*), (?P<total>\d+) - bust {SEAT}\.",
        _("%(who)s hits:%(cards)s, %(total)s - bust (seat %(seat)s)."),
    ),
    worded(
        rf"{WHO} hits:(?P<cards>[ 2-9TJQKAshdc]*), (?P<total>\d+) {SEAT}\.",
        _("%(who)s hits:%(cards)s, %(total)s (seat %(seat)s)."),
    ),
    worded(
        rf"{WHO} doubles on (?P<before>\d+):(?P<cards>[ 2-9TJQKAshdc]*), (?P<total>\d+) - bust {SEAT}\.",
        _("%(who)s doubles on %(before)s:%(cards)s, %(total)s - bust (seat %(seat)s)."),
    ),
    worded(
        rf"{WHO} doubles on (?P<before>\d+):(?P<cards>[ 2-9TJQKAshdc]*), (?P<total>\d+) {SEAT}\.",
        _("%(who)s doubles on %(before)s:%(cards)s, %(total)s (seat %(seat)s)."),
    ),
    worded(
        rf"{WHO} splits a pair of (?P<rank>[a-z]+) {SEAT}\.",
        _("%(who)s splits a pair of %(rank)s (seat %(seat)s)."),
    ),
    worded(rf"{WHO} splits two tens {SEAT}\.", _("%(who)s splits two tens (seat %(seat)s).")),
    worded(rf"{WHO} splits {SEAT}\.", _("%(who)s splits (seat %(seat)s).")),
    worded(rf"{WHO} surrenders {SEAT}\.", _("%(who)s surrenders (seat %(seat)s).")),
    worded(
        rf"{WHO} stands on (?P<total>\d+) - bust {SEAT}\.",
        _("%(who)s stands on %(total)s - bust (seat %(seat)s)."),
    ),
    worded(rf"{WHO} stands on (?P<total>\d+) {SEAT}\.", _("%(who)s stands on %(total)s (seat %(seat)s).")),
    worded(r"Betting time is over\.", _("Betting time is over.")),
    worded(
        r"Insurance time is over: open offers are declined\.",
        _("Insurance time is over: open offers are declined."),
    ),
    worded(
        rf"{WHO} ran out of time and stands {SEAT}\.",
        _("%(who)s ran out of time and stands (seat %(seat)s)."),
    ),
    worded(
        r"Round (?P<round>\d+): place your bets \((?P<low>\d+)-(?P<high>\d+)\)\.",
        _("Round %(round)s: place your bets (%(low)s-%(high)s)."),
    ),
    worded(
        r"New shoe of (?P<decks>\d+ decks?); seed hash (?P<hash>[0-9a-f]+)\.\.\., "
        r"client seed (?P<client>\S+)\.\.\. from (?P<seeds>\d+ player seeds?)\.",
        _("New shoe of %(decks)s; seed hash %(hash)s..., client seed %(client)s... from %(seeds)s."),
    ),
    worded(
        r"Shoe retired; its server seed is now revealed \((?P<seed>[0-9a-f]+)\.\.\.\)\.",
        _("Shoe retired; its server seed is now revealed (%(seed)s...)."),
    ),
    worded(
        r"Dealer shows a ten: early surrender is offered\.",
        _("Dealer shows a ten: early surrender is offered."),
    ),
    worded(
        r"Dealer shows an ace: insurance, even money and early surrender are offered\.",
        _("Dealer shows an ace: insurance, even money and early surrender are offered."),
    ),
    worded(
        r"Dealer shows an ace: insurance and even money are offered\.",
        _("Dealer shows an ace: insurance and even money are offered."),
    ),
    worded(rf"{WHO} sits out this round {SEAT}\.", _("%(who)s sits out this round (seat %(seat)s).")),
    worded(r"Round (?P<round>\d+): no bets\.", _("Round %(round)s: no bets.")),
    worded(r"Cards are dealt\. Dealer shows (?P<rank>\w+)\.", _("Cards are dealt. Dealer shows %(rank)s.")),
    worded(rf"{WHO} has blackjack {SEAT}\.", _("%(who)s has blackjack (seat %(seat)s).")),
    worded(r"Dealer busts with (?P<total>\d+)\.", _("Dealer busts with %(total)s.")),
    worded(r"Dealer has blackjack\.", _("Dealer has blackjack.")),
    worded(r"Dealer has (?P<total>\d+)\.", _("Dealer has %(total)s.")),
    worded(
        rf"{WHO} wins (?P<net>[\d,]+) \((?P<results>[^()]*), seat (?P<seat>\d+)\)\.",
        _("%(who)s wins %(net)s (%(results)s, seat %(seat)s)."),
    ),
    worded(
        rf"{WHO} loses (?P<net>[\d,]+) \((?P<results>[^()]*), seat (?P<seat>\d+)\)\.",
        _("%(who)s loses %(net)s (%(results)s, seat %(seat)s)."),
    ),
    worded(
        rf"{WHO} breaks even \((?P<results>[^()]*), seat (?P<seat>\d+)\)\.",
        _("%(who)s breaks even (%(results)s, seat %(seat)s)."),
    ),
    worded(
        r"Round (?P<round>\d+) was voided; every stake was refunded\.",
        _("Round %(round)s was voided; every stake was refunded."),
    ),
    worded(rf"{WHO} sits down at seat (?P<seat>\d+)\.", _("%(who)s sits down at seat %(seat)s.")),
    worded(
        rf"{WHO} will leave seat (?P<seat>\d+) after this round\.",
        _("%(who)s will leave seat %(seat)s after this round."),
    ),
    worded(rf"{WHO} stands on leaving {SEAT}\.", _("%(who)s stands on leaving (seat %(seat)s).")),
    worded(rf"{WHO} is ready\.", _("%(who)s is ready.")),
    worded(rf"{WHO} leaves seat (?P<seat>\d+)\.", _("%(who)s leaves seat %(seat)s.")),
    worded(
        rf"{WHO} missed (?P<rounds>\d+) rounds and leaves seat (?P<seat>\d+)\.",
        _("%(who)s missed %(rounds)s rounds and leaves seat %(seat)s."),
    ),
    worded(
        rf"{WHO} lost the connection and left seat (?P<seat>\d+)\.",
        _("%(who)s lost the connection and left seat %(seat)s."),
    ),
]


def results_text(results: str) -> str:
    """The results inside a settlement line ("win, insurance pays 150") in the active language."""
    words = []
    for part in results.split(", "):
        if part.startswith("insurance pays "):
            words.append(
                gettext("insurance pays %(chips)s") % {"chips": part.removeprefix("insurance pays ")}
            )
        elif part == "insurance lost":
            words.append(gettext("insurance lost"))
        else:
            words.append(hand_word(part))
    return ", ".join(words)


def decks_text(decks: str) -> str:
    """ "6 decks" in the active language."""
    number = int(decks.split()[0])
    return ngettext("%(number)s deck", "%(number)s decks", number) % {"number": number}


def seeds_text(seeds: str) -> str:
    """ "3 player seeds" in the active language."""
    number = int(seeds.split()[0])
    return ngettext("%(number)s player seed", "%(number)s player seeds", number) % {"number": number}


GROUPS = {"rank": RANKS, "results": results_text, "decks": decks_text, "seeds": seeds_text}


def translated(text: str) -> str:
    """An event line in the active language (as written when no pattern matches, or in English)."""
    line = refusals.translated(text, PATTERNS, GROUPS)
    return text if line is None else line
