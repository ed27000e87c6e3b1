"""The live table as HTML fragments for one viewer (macros of `blackjack/live.jinja`), swapped out of band.

A viewer's page is a set of regions (the version's number, the status strip, each seat, the controls, the
dealer, the event log, the shoe, the header's balance, the flash message). Each region is a function of a
few inputs, its *key*: `Page` remembers the key of each region a connection's page holds, and a version's
message carries only the regions whose key changed since (the event log only its new lines), so most
viewers of an action get the version number, a seat or two and a log line, not the whole table.

A region is rendered once per version and key (kept with the version's shared view part), so the viewers
who see a region alike (every viewer for the dealer, the log and the shoe; the players not on turn for a
seat; the spectators for everything) share one rendering. The keys name every input of a region's
markup: `tests/blackjack/test_rendering.py` plays random rounds and checks that every viewer's page, put
together from these messages, is the page a full rendering gives.
"""

from collections.abc import Callable, Hashable
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
from django.utils.translation import get_language
from markupsafe import Markup

from blackjack.templatetags import table_ui
from blackjack.viewmodel import EVENTS_SHOWN, ViewerView
from live.jinja import Fragments, environment
from live.templatetags.live_ui import seconds_left

LIVE_TEMPLATE = "blackjack/live.jinja"
#: A full page's regions, in the order a message carries them.
REGIONS = (
    "table_version",
    "table_status",
    "dealer",
    "seats",
    "controls",
    "nav_balance",
    "flash",
    "event_log",
    "shoe_info",
)
#: Parts of a region sent alone when they alone changed (each has an id and the `oob` switch).
INNER = {"table_status": ("countdown", "your_chips")}
#: Where the status strip's markup, kept for the viewers who see it alike, takes each one's chips.
CHIPS_SLOT = Markup("<!-- your chips -->")
#: What the balance notice (`balance.changed`) rewrites outside these messages.
BALANCE_REGIONS = ("nav_balance", "your_chips")


class Page:
    """What one connection's page holds: each region's key as last sent, each seat's, and the newest line of
    the event log. Empty: the page holds nothing this connection sent (the next message is a full one)."""

    def __init__(self) -> None:
        self.keys: dict[str, Hashable] = {}
        self.seats: dict[int, Hashable] = {}
        self.events: list[dict[str, Any]] = []  # the log's lines, oldest first

    def copy(self) -> "Page":
        page = Page()
        page.keys, page.seats, page.events = dict(self.keys), dict(self.seats), self.events
        return page

    def forget(self, *regions: str) -> None:
        """The page's copy of `regions` changed by other means: send them again with the next message."""
        for region in regions:
            self.keys.pop(region, None)


def live_html(
    found: ViewerView, *, user, error: dict[str, str] | None = None, page: Page | None = None
) -> str:
    """The message of `found` for its viewer: every region (without `page`: a fresh page), or only those that
    differ from what `page` holds, which it then records as held. `error` goes in the flash region."""
    view, shared = found.view, found.shared
    language = get_language()
    context = {"view": view, "user": user, "error": error, "shared": shared}
    keys = _keys(shared, view, user, error)
    fresh = page is None or not page.keys
    parts: list[str] = []
    for region in REGIONS:
        if region == "seats":
            parts.append(_seats(view, context, language, page, fresh=fresh))
            continue
        if region == "event_log" and not fresh:
            parts.append(_new_events(view, context, language, page))
            continue
        key = keys[region]
        if not fresh and page.keys.get(region) == key and not (region == "flash" and error):
            for part in INNER.get(region, ()):
                if page.keys.get(part) != keys[part]:
                    parts.append(_inner(part, view, context, language, keys[part]))
            continue  # (a refusal is shown each time, even the same one again)
        if region == "table_status":
            parts.append(_status(view, context, language, key, keys["your_chips"]))
            continue
        parts.append(_kept(shared, (region, key, language), lambda r=region: _render(r, context)))
    if page is not None:
        page.keys = keys
        page.events = view["table"]["events"]
    return "".join(parts)


def _status(
    view: dict[str, Any], context: dict[str, Any], language: str, key: Hashable, balance: int | None
) -> str:
    """The status strip: rendered once per version for each variant, with a slot for the viewer's chips
    (their balance, the one thing in it all players have each their own), filled in for each viewer."""
    deadline = view["table"]["deadline"]
    kept = ("table_status", key, language, seconds_left(deadline) if deadline else None)
    html = _kept(
        context["shared"], kept, lambda: _render("table_status", {**context, "chips_slot": CHIPS_SLOT})
    )
    if balance is None:
        return html
    chips = _kept(
        context["shared"], ("your_chips", balance, language), lambda: _render("your_chips", context)
    )
    return html.replace(CHIPS_SLOT, chips, 1)


def _inner(part: str, view: dict[str, Any], context: dict[str, Any], language: str, key: Hashable) -> str:
    """A part of a region alone (`INNER`), to be swapped in by its id."""
    kept: tuple = (part, key, language)
    if part == "countdown" and view["table"]["deadline"]:
        kept += (seconds_left(view["table"]["deadline"]),)
    return _kept(context["shared"], kept, lambda: _render(part, {**context, "oob": True}))


def region(name: str, context: dict[str, Any]) -> Markup:
    """The region (or part) `name` of the live template for `context` (`view`, `user`, `error`, `shared`,
    `oob`): what the table page puts in its layout, and each message's parts."""
    return FRAGMENTS.render(name, context)


def _render(name: str, context: dict[str, Any]) -> str:
    return str(region(name, context))


def _kept(shared, key: Hashable, render: Callable[[], str]) -> str:
    return shared.keep(key, render)


def _json(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _table_keys(table: dict[str, Any]) -> dict[str, Any]:
    """The inputs of the regions that come from the table alone: the same for every viewer of a version."""
    return {
        "turn": table_ui.turn_seat(table),
        "limits": (table["id"], table["min_bet"], table["max_bet"]),
        "phase_title": table_ui.phase_title(table),
        "dealer": _json(table["dealer"]),
        "shoe_info": _json([table["shoe"], table["next_shoe_hash"]]),
        "slots": [(slot, _json(slot)) for slot in table_ui.seat_slots(table)],
    }


def _keys(shared, view: dict[str, Any], user, error: dict[str, str] | None) -> dict[str, Hashable]:
    """Every input of each region but the seats and the log (whose parts are keyed one by one)."""
    table, you = view["table"], view["you"]
    common = shared.keep(("region_keys",), lambda: _table_keys(table))
    turn = common["turn"]
    mine = tuple(you["seats"])
    limits = common["limits"]
    outcome = table_ui.round_outcome(view) if table["phase"] == "settled" else None
    return {
        "table_version": view["v"],
        "table_status": _json(
            [
                limits,
                table["phase"],
                common["phase_title"],
                table["round_number"],
                None if turn is None else [turn["seat"], turn.get("display_name"), turn["seat"] in mine],
                you["allowed"],
                [seat["seat"] for seat in table["seats"] if seat.get("sitting_out") and seat["seat"] in mine],
                you["balance"] is not None,
                outcome,
            ]
        ),
        "countdown": (table["deadline"], table["deadline_seconds"]),
        "your_chips": you["balance"],
        "dealer": common["dealer"],
        "controls": _json(
            [
                limits,
                user.is_authenticated,
                table["phase"],
                table["turn"] if table["turn"] and table["turn"]["seat"] in mine else None,
                table["rules"].get("dealer_peek"),
                table["rules"].get("original_bets_only"),
                mine,
                you["allowed"],
                you["allowed_by_seat"],
                you["can_sit"],
                you["hint"],
                table_ui.can_insure(view) if "insurance" in you["allowed"] else None,
            ]
        ),
        "event_log": None,  # keyed by its newest line (`Page.newest_event`)
        "shoe_info": common["shoe_info"],
        "nav_balance": you["balance"],
        "flash": None if error is None else (error["code"], error["message"]),
    }


def _seats(
    view: dict[str, Any], context: dict[str, Any], language: str, page: Page | None, *, fresh: bool
) -> str:
    """The seats: the whole list for a fresh page, else each seat whose markup the page does not hold (a
    seat's markup is a function of its entry, the phase, and whether the viewer sits there or may sit)."""
    table, you = view["table"], view["you"]
    slots = context["shared"].keep(("region_keys",), lambda: _table_keys(table))["slots"]
    settled = table["phase"] == "settled"  # the one fact of the table's a seat shows (ready, insurance paid)
    keys = {
        slot["seat"]: (
            key,
            settled and bool(slot["player"]),
            table_ui.is_mine(slot, you),
            _sit_offer(you, slot),
            language,
        )
        for slot, key in slots
    }
    held = page.seats if page is not None else {}
    if fresh or held.keys() != keys.keys():
        html = _render("seats", context)
        if page is not None:
            page.seats = keys
        return html
    parts = []
    for slot, _ in slots:
        number = slot["seat"]
        if held[number] != keys[number]:
            markup = str(seat_markup(context["shared"], slot, you, table)).lstrip()
            parts.append(markup.replace("<li ", '<li hx-swap-oob="true" ', 1))
    page.seats = keys
    return "".join(parts)


def _new_events(view: dict[str, Any], context: dict[str, Any], language: str, page: Page) -> str:
    """The event log's lines the page lacks, added at its top (the page keeps the `EVENTS_SHOWN` newest);
    the whole log unless the version's log is the page's followed by new lines (a dealer frame's log leaves
    out its settlement's lines, which come later between others; a log may move on by more lines than it
    shows)."""
    events, held = view["table"]["events"], page.events
    if events == held:
        return ""
    at = _follows(events, held)
    if at is None:
        return _kept(context["shared"], ("event_log", None, language), lambda: _render("event_log", context))
    added = {"view": {"table": {"events": events[at:]}}}
    return _kept(context["shared"], ("event_lines", at, language), lambda: _render("event_lines", added))


def _follows(events: list[dict[str, Any]], held: list[dict[str, Any]]) -> int | None:
    """Where the new lines of `events` begin if it is the end of `held` followed by them, else None."""
    if not held:
        return None
    newest = held[-1]
    for at in range(len(events) - 1, -1, -1):
        if events[at] == newest:
            shown = at + 1
            return shown if shown <= len(held) and events[:shown] == held[len(held) - shown :] else None
    return None


def seat_markup(shared, seat: dict, you: dict | None, table: dict) -> Markup:
    """One seat of the `seats` region as the viewer `you` sees it.

    The markup depends on the version's table and on two facts about the viewer alone: whether they sit
    there (`mine`) and, for an empty seat, what it offers them (`sit`). With the version's shared view part
    (`shared`), each variant is rendered once per version and kept with it (a seated player's hands once per
    seat, for both variants), so a table's viewers share their seats' markup instead of rendering it each.
    The macros are given nothing else of the viewer's, so no variant can carry another viewer's controls."""
    mine = table_ui.is_mine(seat, you)
    sit = _sit_offer(you, seat)

    def kept(key: tuple, render: Callable[[], Markup]) -> Markup:  # per language: viewers may differ in it
        return render() if shared is None else shared.keep((*key, get_language()), render)

    def render() -> Markup:
        hands = Markup("")
        if seat.get("player"):
            hands = kept(
                ("seat_hands", seat["seat"]), lambda: Markup(FRAGMENTS.macro("seat_hands")(seat, table))
            )
        return Markup(FRAGMENTS.macro("seat")(seat, mine, sit, table, hands))

    return kept(("seat", seat["seat"], mine, sit), render)


def card(code: str | None) -> Markup:
    """A card's face (None: its back), the same for every viewer: made once per card and language."""
    return FRAGMENTS.once("face", code)


def bet_picker(table: dict) -> Markup:
    """The bet box's picker: a function of the table's limits (and the language) alone."""
    return _bet_picker(table["min_bet"], table["max_bet"], get_language())


@lru_cache(maxsize=256)
def _bet_picker(min_bet: int, max_bet: int, language: str) -> Markup:
    return Markup(FRAGMENTS.macro("bet_picker")({"min_bet": min_bet, "max_bet": max_bet}))


def _sit_offer(you: dict | None, seat: dict) -> str:
    """What `seat` offers the viewer: if empty, "take" (another seat beside theirs) or "sit"; else nothing."""
    you = you or {}
    if seat.get("player") or not you.get("can_sit"):
        return ""
    return "take" if you.get("seats") else "sit"


FRAGMENTS = Fragments(
    environment(
        Path(__file__).resolve().parent / "jinja2",
        filters={
            name: getattr(table_ui, name)
            for name in (
                "any_of",
                "bet_chips",
                "can_insure",
                "chip_tier",
                "chips_short",
                "decision_label",
                "deck_cards",
                "event_text",
                "hand_total",
                "insurance_net",
                "is_mine",
                "limits_text",
                "net_result",
                "phase_title",
                "result_label",
                "result_tone",
                "round_outcome",
                "seat_actions",
                "seat_slots",
                "signed_chips",
                "sitting_out_for",
                "turn_seat",
            )
        },
        globals={
            "card": card,
            "seat_markup": seat_markup,
            "bet_picker_of": bet_picker,
            "ws_forms": table_ui.WS_FORMS,
            "play_buttons": table_ui.PLAY_BUTTONS,
            "events_shown": EVENTS_SHOWN,
        },
    ),
    LIVE_TEMPLATE,
)
