"""Presentation helpers for the table and lobby templates: chips, cards, totals, times and the seat arc.

Everything here formats what the view model already says; no rule of the game is decided here.
"""

import re

from django import template
from django.utils.translation import gettext, gettext_noop, ngettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from blackjack import eventlog
from blackjack.engine.rules import RuleSet
from blackjack.house_edge import computed_house_edge
from live.faces import card_face
from live.templatetags.live_ui import clock, iso, seconds_left

register = template.Library()

# One colour per chip denomination; a bet on the felt shows the colour of the largest denomination it reaches
# (so a bet of 60 is green like the 25 chip, 100 to 499 blue like the 100 chip).
CHIP_COLOURS = (
    (25_000, "gold"),
    (5_000, "black"),
    (1_000, "orange"),
    (500, "purple"),
    (100, "blue"),
    (25, "green"),
)
CHIP_DENOMINATIONS = (5, 25, 100, 500, 1_000, 5_000, 25_000)

PHASE_LABELS = {
    "waiting": _("Waiting for players"),
    "betting": _("Betting"),
    "insurance": _("Insurance?"),
    "playing": _("Playing"),
    "dealer": _("Dealer plays"),
    "settled": _("Round over"),
}

RESULT_LABELS = {
    "win": pgettext_lazy("blackjack: a hand's result badge", "Win"),
    "blackjack": _("Blackjack!"),
    "push": pgettext_lazy("blackjack: a hand's result badge", "Push"),
    "lose": pgettext_lazy("blackjack: a hand's result badge", "Lose"),
    "loss": pgettext_lazy("blackjack: a hand's result badge", "Lose"),
    "bust": pgettext_lazy("blackjack: a hand's result badge", "Bust"),
    "surrender": _("Surrendered"),
    "surrendered": _("Surrendered"),
    "charlie": _("Charlie!"),
}
# CSS tone of a result badge: good for the player, bad, or neutral.
RESULT_TONES = {
    "win": "good",
    "blackjack": "good",
    "charlie": "good",
    "push": "neutral",
    "surrender": "neutral",
    "surrendered": "neutral",
}


@register.filter
def chips_short(value) -> str:
    """A chip amount for small spaces: 950 -> "950", 1500 -> "1.5K", 15_249 -> "15.2K", 2_000_000 -> "2M".

    Rounds towards zero so a stack never looks bigger than it is.
    """
    try:
        amount = int(value)
    except (TypeError, ValueError):
        return ""
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    for size, suffix in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "K")):
        if amount >= size:
            tenths = amount * 10 // size
            whole, tenth = divmod(tenths, 10)
            return f"{sign}{whole}{suffix}" if tenth == 0 else f"{sign}{whole}.{tenth}{suffix}"
    return f"{sign}{amount}"


@register.filter
def chip_tier(value) -> str:
    """The chip colour: under 25 red (the 5 chip), from 25 green, 100 blue, 500 purple, 1,000 orange, 5,000
    black, 25,000 gold."""
    try:
        amount = int(value)
    except (TypeError, ValueError):
        return "red"
    return next((colour for floor, colour in CHIP_COLOURS if amount >= floor), "red")


@register.filter
def hand_total(hand) -> str:
    """The total as players say it: "17", "soft 17", "Blackjack" (two cards of 21, not after a split),
    "22 bust"; empty when unknown. For a player's hand and the dealer's (whose hidden card is None)."""
    total = hand.get("total") if isinstance(hand, dict) else None
    if total is None:
        return ""
    cards = hand.get("cards") or []
    if total == 21 and len(cards) == 2 and None not in cards and not hand.get("split"):
        return gettext("Blackjack")
    if total > 21:
        return gettext("%(total)s bust") % {"total": total}
    return gettext("soft %(total)s") % {"total": total} if hand.get("soft") else str(total)


@register.filter
def event_text(text: str) -> str:
    """An event of the table's log in the viewer's language (`blackjack.eventlog`)."""
    return eventlog.translated(str(text))


@register.filter
def phase_label(phase) -> str:
    label = PHASE_LABELS.get(phase)
    return str(label) if label is not None else str(phase or "").capitalize()


@register.filter
def phase_title(table) -> str:
    """The phase as the status strip names it; the insurance window against a ten offers only early
    surrender."""
    upcard = ((table.get("dealer") or {}).get("cards") or [None])[0]
    if table.get("phase") == "insurance" and upcard and not upcard.startswith("A"):
        return gettext("Early surrender?")
    return phase_label(table.get("phase"))


@register.filter
def result_label(result) -> str:
    label = RESULT_LABELS.get(result)
    return str(label) if label is not None else str(result or "").replace("_", " ").capitalize()


@register.filter
def result_tone(result) -> str:
    return RESULT_TONES.get(result, "bad")


# The time helpers every game's table pages share, under this library's names too.
register.filter("card_face", card_face)
register.filter("seconds_left", seconds_left)
register.filter("clock", clock)
register.filter("iso", iso)


@register.filter
def seat_slots(table) -> list[dict]:
    """Every seat position 1..seats_total, empty ones included, each with its place on the arc.

    `arc` is the distance from the middle seat (0 in the middle), which the stylesheet turns into height.
    """
    occupied = {entry["seat"]: entry for entry in table.get("seats") or []}
    total = table.get("seats_total") or max(occupied, default=0)
    middle = (total + 1) / 2
    slots = []
    for number in range(1, total + 1):
        entry = occupied.get(number) or {"seat": number, "player": None, "hands": []}
        slots.append({**entry, "arc": int(abs(number - middle))})
    return slots


@register.filter
def seat_actions(you, seat) -> list[str]:
    """The actions the viewer may take for one of their seats (from `you.allowed_by_seat`)."""
    by_seat = (you or {}).get("allowed_by_seat") or {}
    return by_seat.get(str(seat)) or by_seat.get(seat) or []


@register.filter
def can_insure(view) -> bool:
    """Whether the viewer's balance covers insurance on every seat of theirs offered it (half of each bet;
    the insurance form answers for all of them at once)."""
    you = view.get("you") or {}
    balance = you.get("balance")
    by_seat = you.get("allowed_by_seat") or {}
    offered = {int(seat) for seat, actions in by_seat.items() if "insurance" in actions}
    cost = sum(seat["bet"] // 2 for seat in view["table"]["seats"] if seat["seat"] in offered)
    return balance is not None and cost <= balance


@register.filter
def is_mine(seat, you) -> bool:
    """Whether the viewer sits in this seat entry."""
    return bool(seat.get("player")) and seat.get("seat") in ((you or {}).get("seats") or [])


@register.filter
def sitting_out_for(seats, you) -> bool:
    """Whether one of the viewer's seats sits out (it missed a betting window: the table deals without it)."""
    return any(seat.get("sitting_out") and is_mine(seat, you) for seat in seats or [])


@register.filter
def bet_chips(limits) -> list[int]:
    """Chip buttons offered for a table: the usual denominations that fit under its maximum bet."""
    max_bet = limits.get("max_bet") or 0
    return [value for value in CHIP_DENOMINATIONS if value <= max_bet]


@register.filter
def limits_text(table) -> str:
    """ "bets 10 to 500": the table's limits as its header says them."""
    return gettext("bets %(low)s to %(high)s") % {
        "low": f"{table['min_bet']:,}",
        "high": f"{table['max_bet']:,}",
    }


@register.filter
def house_edge(rules) -> str:
    """ "0.31%": the house edge of basic strategy under `rules` (a rules dict), computed by the engine."""
    return f"{computed_house_edge(rules):.2f}%"


@register.filter
def rules_summary(rules) -> str:
    """ "6 decks · S17 · DAS · LS · 3:2" for a rules dict."""
    return RuleSet.from_dict(rules).summary()


#: The worded parts of a rules summary (`RuleSet.summary`: the engine's English), each as a pattern and the
#: English of its translation; the codes (S17, DAS, 3:2) read the same in every language.
_SUMMARY_WORDS = (
    (re.compile(r"(\d+) decks?"), None),
    (re.compile(r"no hole card \(OBO\)"), gettext_noop("no hole card (OBO)")),
    (re.compile(r"no hole card"), gettext_noop("no hole card")),
    (re.compile(r"no split"), gettext_noop("no split")),
    (re.compile(r"split to (\d+)"), gettext_noop("split to %(number)s")),
    (re.compile(r"(\d+)-card charlie"), gettext_noop("%(number)s-card charlie")),
    (re.compile(r"suited 6-7-8 (\S+)"), gettext_noop("suited 6-7-8 %(number)s")),
)


@register.filter
def summary_words(summary: str) -> str:
    """A rules summary ("6 decks · S17 · DAS · 3:2") with its words in the active language."""

    def part(text: str) -> str:
        for pattern, english in _SUMMARY_WORDS:
            match = pattern.fullmatch(text)
            if match is None:
                continue
            number = match.group(1) if pattern.groups else ""
            if english is None:
                return ngettext("%(number)s deck", "%(number)s decks", int(number)) % {"number": number}
            return gettext(english) % {"number": number} if number else gettext(english)
        return text

    return " · ".join(part(text) for text in str(summary or "").split(" · "))


_CARD_NAMES = {"A": "A", "T": "10"}


@register.filter
def chart_sections(chart) -> list[tuple[str, list[tuple[str, list[str]]], str]]:
    """A strategy chart (`Strategy.chart()`) as (title, [(row name, moves by upcard)], row heading) tables."""

    def rows(section, name):
        return [(name(key), [moves[up] for up in chart["upcards"]]) for key, moves in chart[section].items()]

    def pair(card):
        return f"{_CARD_NAMES.get(card, card)},{_CARD_NAMES.get(card, card)}"

    return [
        (gettext("Hard totals"), rows("hard", str), gettext("Total")),
        (
            gettext("Soft totals (with an ace counted as 11)"),
            rows("soft", lambda total: f"A,{int(total) - 11}"),
            gettext("Hand"),
        ),
        (gettext("Pairs"), rows("pairs", pair), gettext("Pair")),
    ]


OUTCOME_LABELS = {
    "good": _("You win"),
    "bad": _("You lose"),
    "neutral": pgettext_lazy("blackjack: a hand's result badge", "Push"),
}


@register.filter
def round_outcome(view) -> dict | None:
    """The viewer's result of a settled round over all their seats and hands, insurance included:
    `net` chips, a `tone` (good, bad, neutral) and a `label` ("Blackjack!", "You win", "You lose",
    "Surrendered", "Push"); None when the viewer had no hand in it."""
    you = view.get("you") or {}
    mine = [entry for entry in view["table"].get("seats") or [] if is_mine(entry, you)]
    hands = [hand for entry in mine for hand in entry.get("hands") or [] if hand.get("payout") is not None]
    if not hands:
        return None
    net = sum(net_result(hand) for hand in hands) + sum(insurance_net(entry) for entry in mine)
    tone = "good" if net > 0 else "bad" if net < 0 else "neutral"
    results = {hand.get("result") for hand in hands}
    if net > 0 and "blackjack" in results:
        label = str(RESULT_LABELS["blackjack"])
    elif net < 0 and results <= {"surrender", "surrendered"}:
        label = str(RESULT_LABELS["surrendered"])
    else:
        label = str(OUTCOME_LABELS[tone])
    return {"net": net, "tone": tone, "label": label}


@register.filter
def turn_seat(table) -> dict | None:
    """The seat entry whose turn it is, or None."""
    turn = table.get("turn")
    if not turn:
        return None
    return next((entry for entry in table.get("seats") or [] if entry.get("seat") == turn.get("seat")), None)


@register.filter
def any_of(allowed, names: str) -> bool:
    """Whether any of the space-separated action `names` is in `allowed`."""
    return any(name in (allowed or ()) for name in names.split())


@register.filter
def net_result(hand) -> int:
    """Chips won (positive) or lost (negative) on a settled hand: its payout minus its bet."""
    if hand.get("payout") is None:
        return 0
    return hand["payout"] - (hand.get("bet") or 0)


@register.filter
def insurance_net(seat) -> int:
    """What a settled seat's insurance won (2:1 on a dealer blackjack) or lost."""
    return (seat.get("insurance_payout") or 0) - (seat.get("insurance") or 0)


@register.filter
def signed_chips(value) -> str:
    """ "+150" / "-1,250" for a result, exact (a result is what a player checks their chips against), with a
    typographic minus sign (U+2212) that reads well at a glance."""
    amount = int(value)
    text = f"{abs(amount):,}"
    return f"+{text}" if amount > 0 else f"\u2212{text}" if amount < 0 else "0"


@register.filter
def deck_cards(decks) -> int:
    return int(decks) * 52


#: The stable forms of the table page that send over the websocket (each gets its `v` from #table-version).
WS_FORMS = (
    "form-sit",
    "form-bet",
    "form-play",
    "form-insurance",
    "form-even-money",
    "form-early-surrender",
    "form-leave",
)
#: Playing buttons: protocol action, keyboard shortcut, label (in Russian the words of the table: «Ещё»).
PLAY_BUTTONS = (
    ("hit", "h", pgettext_lazy("blackjack: the button", "Hit")),
    ("stand", "s", pgettext_lazy("blackjack: the button", "Stand")),
    ("double", "d", pgettext_lazy("blackjack: the button", "Double")),
    ("split", "p", pgettext_lazy("blackjack: the button", "Split")),
    ("surrender", "r", pgettext_lazy("blackjack: the button", "Surrender")),
)
_BUTTON_LABELS = {action: label for action, _key, label in PLAY_BUTTONS}


@register.filter
def decision_label(action) -> str:
    """A playing decision (the hint's) as its button says it: "stand" -> "Stand"."""
    label = _BUTTON_LABELS.get(action)
    return str(label) if label is not None else str(action or "").capitalize()
