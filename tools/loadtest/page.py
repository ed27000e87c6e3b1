"""The load test's two wire formats: what a bot reads from a server message and what it sends.

`JsonFormat` is the bots' own protocol (`?format=json&log=off`). `HtmlFormat` is the browser's: the socket the
table page opens (no `format`), whose every message is out-of-band fragments of `blackjack/live.jinja`, and
whose frames are the page's forms as htmx's websocket extension sends them (form values as strings and a
`HEADERS` object). A browser bot acts only on what the page shows: `read_page` turns the fragments into the
few fields of a JSON `state` that the bot's policy (`tools.loadtest.bot.next_action`) reads, taken from the
regions' data attributes, classes, badges and enabled buttons; so a bot that plays from it proves that the
page offers every decision it needs. It reads the regions a player acts on (status, seats, controls, dealer)
and stops before the event log, chat and shoe, which it never needs.
"""

import json
import re
from html import unescape
from typing import Any

import orjson

from blackjack.engine.strategy import PLAYING_ACTIONS
from cards.faces import RANK_NAMES, SUIT_NAMES
from live.regions import ID, swapped

#: A card's accessible name on the page ("Queen of hearts") back to its protocol string ("Qh").
CARDS = {
    f"{RANK_NAMES[rank]} of {SUIT_NAMES[suit]}": rank + suit for rank in RANK_NAMES for suit in SUIT_NAMES
}
#: Where the regions a bot reads end: the event log and what follows it are never needed.
READ_UNTIL = '<ol id="event-log"'
#: The answer buttons of the offers that a bot may press (their forms send no seat: they answer for every seat
#: of the player's with the offer).
OFFERS = {"insurance-no": "insurance", "even-money-no": "even_money", "early-surrender-yes": "surrender"}
#: The forms of the offers, by action (early surrender's has action "surrender", as the playing one).
OFFER_FORMS = {"insurance": "form-insurance", "even_money": "form-even-money"}
#: A start tag, or the end of an element the reader tracks (the seats' list, the dealer's section). Django
#: escapes every attribute value, so no `>` or `"` appears inside one.
TAG = re.compile(r"<(?:(/)(ol|section)|(li|div|span|button|section|ol|p)\b([^>]*))>")
ATTRIBUTE = re.compile(r'([\w-]+)(?:="([^"]*)")?')
BET_TITLE = re.compile(r"Bet ([\d,]+) chips")
SITTING_OUT = "Sitting out</span>"


class PageError(ValueError):
    """A message that is not a live-table page fragment as this reader knows it."""


def _card(attributes: dict[str, str], classes: list[str]) -> str | None:
    if "card-back" in classes:
        return None
    label = unescape(attributes.get("aria-label", ""))
    if label not in CARDS:
        raise PageError(f"a card the reader does not know: {label!r}")
    return CARDS[label]


class _Reader:
    """What the page shows a player, collected in one pass over the tags (see `read_page`). A regular
    expression over the tags, not an HTML parser: the load client reads every state of every bot, and the
    standard library's parser took several milliseconds a page."""

    def __init__(self, html: str) -> None:
        self.status: dict[str, str] | None = None
        self.version: int | None = None
        self.error: str | None = None
        self.logged_in = False
        self.seats: list[dict[str, Any]] = []
        self.mine: list[int] = []
        self.turn: dict[str, int] | None = None
        self.dealer: list[str | None] = []
        self.can_sit = False
        self.bet_seats: list[int] = []
        self.buttons: set[str] = set()  # ids of enabled buttons
        region = None  # "seats" or "dealer" while inside one
        seat = hand = None
        for found in TAG.finditer(html):
            closing, closed, tag, text = found.groups()
            if closing:
                if (closed, region) in (("ol", "seats"), ("section", "dealer")):
                    region = seat = hand = None
                continue
            if "id=" not in text and "class=" not in text:
                continue
            attributes = {name: value or "" for name, value in ATTRIBUTE.findall(text)}
            element_id = attributes.get("id", "")
            classes = attributes.get("class", "").split()
            if element_id == "table-status":
                self.status = {name: value for name, value in attributes.items() if name.startswith("data-")}
            elif element_id == "table-version":
                self.version = int(attributes["data-v"])
            elif element_id in ("seats", "dealer"):
                region = element_id
            elif element_id == "nav-balance":
                self.logged_in = True
            elif "flash-message" in classes:
                codes = [name.removeprefix("flash-") for name in classes if name != "flash-message"]
                self.error = codes[0] if codes else "unknown"
            if tag == "button" and element_id and "disabled" not in attributes:
                self.buttons.add(element_id)
                if element_id.startswith("sit-"):
                    self.can_sit = True
                elif element_id.startswith("bet-"):
                    self.bet_seats.append(int(attributes["value"]))
            if region == "dealer" and "card" in classes:
                self.dealer.append(_card(attributes, classes))
            elif region != "seats":
                continue
            elif tag == "li" and "data-seat" in attributes:
                number = int(attributes["data-seat"])
                seat = {
                    "seat": number,
                    "player": None if "seat-empty" in classes else "taken",
                    "bet": 0,
                    "sitting_out": False,
                    "ready": False,
                    "hands": [],
                }
                hand = None
                self.seats.append(seat)
                if "seat-mine" in classes:
                    self.mine.append(number)
                if "seat-turn" in classes:
                    self.turn = {"seat": number, "hand": 0}
            elif seat is None:
                continue
            elif tag == "div" and "hand" in classes:
                hand = {"cards": []}
                if "hand-turn" in classes and self.turn is not None and self.turn["seat"] == seat["seat"]:
                    self.turn["hand"] = len(seat["hands"])
                seat["hands"].append(hand)
            elif "card" in classes and hand is not None:
                hand["cards"].append(_card(attributes, classes))
            elif "chip" in classes and (bet := BET_TITLE.fullmatch(attributes.get("title", ""))):
                seat["bet"] += int(bet.group(1).replace(",", ""))
            elif "badge-ready" in classes:
                seat["ready"] = True
            elif "badge-away" in classes and html.startswith(SITTING_OUT, found.end()):
                seat["sitting_out"] = True


def read_page(html: str) -> list[dict[str, Any]]:
    """The messages one HTML server message amounts to for a bot: an `error` (the flash region carries a
    refusal), then a `state` shaped like the JSON protocol's, reduced to what the bot reads, if the message
    holds the table's regions. A chat line or a balance notice alone gives nothing."""
    cut = html.find(READ_UNTIL)
    return _messages(_Reader(html if cut < 0 else html[:cut]))


def _merged(readers: list["_Reader"]) -> "_Reader":
    """What the regions read one by one (each a `_Reader`) say together."""
    merged = _Reader("")
    for reader in readers:
        merged.status = reader.status or merged.status
        merged.version = reader.version if reader.version is not None else merged.version
        merged.error = reader.error or merged.error
        merged.logged_in |= reader.logged_in
        merged.seats += [dict(seat) for seat in reader.seats]
        merged.mine += reader.mine
        merged.turn = reader.turn or merged.turn
        merged.dealer += reader.dealer
        merged.can_sit |= reader.can_sit
        merged.bet_seats += reader.bet_seats
        merged.buttons |= reader.buttons
    return merged


def _messages(reader: "_Reader") -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if reader.error is not None:
        messages.append({"type": "error", "code": reader.error})
    if reader.status is None or reader.version is None:
        return messages
    status = reader.status
    phase = status.get("data-phase", "")
    allowed_by_seat: dict[str, list[str]] = {str(number): [] for number in reader.mine}
    for number in reader.bet_seats:
        allowed_by_seat.setdefault(str(number), []).append("bet")
    offers = [OFFERS[button] for button in OFFERS if button in reader.buttons]
    plays = [name for name in PLAYING_ACTIONS if f"play-{name}" in reader.buttons]
    ready = ["ready"] if "play-ready" in reader.buttons else []  # for all the player's seats at once
    for number in reader.mine:
        allowed_by_seat[str(number)] += offers + ready
        if reader.turn is not None and reader.turn["seat"] == number:
            allowed_by_seat[str(number)] += plays
    allowed = sorted({name for names in allowed_by_seat.values() for name in names})
    if reader.can_sit:
        allowed.append("sit")
    for seat in reader.seats:
        seat["in_round"] = bool(seat["hands"]) or seat["bet"] > 0
    messages.append(
        {
            "type": "state",
            "v": reader.version,
            "table": {
                "phase": phase,
                "round_id": status.get("data-round") or None,
                "seats": reader.seats,
                "turn": reader.turn if phase == "playing" else None,
                "dealer": {"cards": reader.dealer},
            },
            "you": {
                "username": "" if reader.logged_in else None,  # the page names nobody; it shows a balance
                "seats": reader.mine,
                "allowed": allowed,
                "allowed_by_seat": allowed_by_seat,
            },
        }
    )
    return messages


class JsonFormat:
    """The JSON protocol, lean (no log or chat lists in a state)."""

    name = "json"
    query = "format=json&log=off"

    @staticmethod
    def decode(text: str) -> list[dict[str, Any]]:
        return [orjson.loads(text)]

    @staticmethod
    def encode(action: dict[str, Any], version: int) -> str:
        return json.dumps({**action, "v": version})


#: Any tag: (closing slash, name, self-closing slash).
ANY_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)[^>]*?(/?)>")
VOID = frozenset({"input", "img", "br", "hr", "meta", "link", "source", "wbr"})
OOB = re.compile(r'\bhx-swap-oob="([^"]*)"')
#: The page's regions in the order the table page shows them (what `read_page` reads comes first).
PAGE_ORDER = (
    "table-version",
    "table-status",
    "dealer",
    "seats",
    "controls",
    "nav-balance",
    "flash",
    "event-log",
)
#: The start of a seat in the seats' list.
SEAT = '<li id="seat-'
#: The regions a bot reads.
READ_REGIONS = ("table-version", "table-status", "dealer", "seats", "controls", "nav-balance")
#: A message that changes any of these shows the bot a new state.
TABLE_REGIONS = frozenset({"table-version", "table-status", "dealer", "seats", "controls"})


def elements(html: str) -> list[str]:
    """The top-level elements of a fragment, each as its markup (text between them dropped)."""
    found, depth, start = [], 0, None
    for tag in ANY_TAG.finditer(html):
        closing, name, self_closing = tag.groups()
        if closing:
            depth -= 1
            if depth == 0:
                found.append(html[start : tag.end()])
        elif name.lower() not in VOID and not self_closing:
            if depth == 0:
                start = tag.start()
            depth += 1
        elif depth == 0:
            found.append(tag.group(0))
    return found


class Page:
    """A live-table page as the browser holds it, put together from the server's messages as htmx swaps
    them out of band: an element replaces the one with its id (a region, or one inside a region: a seat, the
    countdown), new lines of the log go at its top (its `data-keep` newest kept)."""

    def __init__(self) -> None:
        self.regions: dict[str, str] = {}  # but the log's
        self.log_tag = ""  # the log's start tag
        self.log: list[str] = []  # its lines, newest first

    def apply(self, message: str) -> set[str]:
        """Swap the message's elements in; the ids of the regions it changed."""
        touched = set()
        for element in swapped(message):
            oob = OOB.search(element)
            swap = oob.group(1) if oob else "true"
            if swap == "afterbegin:#event-log":
                keep = re.search(r'data-keep="(\d+)"', self.log_tag)
                self.log = [*_inner(element), *self.log][: int(keep.group(1)) if keep else None]
                touched.add("event-log")
                continue
            element_id = ID.search(element).group(1)
            if element_id == "event-log":
                self.log_tag, self.log = element[: element.index(">") + 1], _inner(element)
                touched.add(element_id)
                continue
            holder = next(
                (
                    key
                    for key, html in self.regions.items()
                    if key != element_id and f' id="{element_id}"' in html
                ),
                None,
            )
            if holder is None:
                self.regions[element_id] = element
                touched.add(element_id)
            else:  # as the region's own markup has it: without the attribute that brought it
                if oob:
                    element = element[: oob.start()].rstrip() + element[oob.end() :]
                self.regions[holder] = _replaced(self.regions[holder], element_id, element)
                touched.add(holder)
        return touched

    def region(self, element_id: str) -> str:
        if element_id == "event-log":
            return self.log_tag + "".join(self.log) + "</ol>" if self.log_tag else ""
        return self.regions.get(element_id, "")

    def html(self) -> str:
        """The page's regions, those `read_page` reads first."""
        rest = sorted(set(self.regions) - set(PAGE_ORDER) - {"event-log"})
        return "".join(self.region(element_id) for element_id in (*PAGE_ORDER, *rest))


def _inner(html: str) -> list[str]:
    """The elements inside an element."""
    return elements(html[html.index(">") + 1 : html.rindex("<")])


def _replaced(html: str, element_id: str, element: str) -> str:
    """`html` with its element of id `element_id` replaced by `element`."""
    at = html.index(f' id="{element_id}"')
    start = html.rindex("<", 0, at)
    return html[:start] + element + html[_end_of(html, start) :]


def _end_of(html: str, start: int) -> int:
    """Where the element that starts at `start` ends (reading its tags only as far as its end)."""
    depth = 0
    for tag in ANY_TAG.finditer(html, start):
        closing, name, self_closing = tag.groups()
        if closing:
            depth -= 1
        elif name.lower() not in VOID and not self_closing:
            depth += 1
        if depth == 0:
            return tag.end()
    raise PageError(f"an element without its end at {start}")


class HtmlFormat:
    """The browser's format: the page's fragments in, its forms' values out, as htmx's websocket extension
    sends a form (every value a string, the clicked button's name and value, a `HEADERS` object). One per
    connection: each message changes only some regions of the page it keeps (`Page`)."""

    name = "html"
    query = ""

    def __init__(self) -> None:
        self.page = Page()
        self.read: dict[str, tuple[str, _Reader]] = {}  # each region read as it was last
        self.seats: dict[str, _Reader] = {}  # each seat's markup as read last

    def decode(self, text: str) -> list[dict[str, Any]]:
        """The error the message carries, then the state the page now shows if the message changed the table
        (any region but the balance notice's, the chat and reactions). The regions that did not change are
        not read again, nor the seats that did not."""
        touched = self.page.apply(text)
        messages = read_page(self.page.region("flash")) if "flash" in touched else []
        if touched & TABLE_REGIONS:
            readers = []
            for element_id in READ_REGIONS:
                if element_id == "seats":
                    readers += self._seats(self.page.region(element_id))
                    continue
                html = self.page.region(element_id)
                held = self.read.get(element_id)
                if held is None or held[0] is not html:
                    held = self.read[element_id] = (html, _Reader(html))
                readers.append(held[1])
            messages += [message for message in _messages(_merged(readers)) if message["type"] == "state"]
        return messages

    def _seats(self, html: str) -> list[_Reader]:
        """The seats' list read seat by seat (each `<li id="seat-N">` up to the next), each seat read again
        only when its markup changed."""
        readers, seats = [], {}
        start = html.find(SEAT)
        while start >= 0:
            end = html.find(SEAT, start + 1)
            seat = html[start : end if end >= 0 else html.rindex("</ol>")]
            reader = self.seats.get(seat) or _Reader(f'<ol id="seats">{seat}</ol>')
            readers.append(reader)
            seats[seat] = reader
            start = end
        self.seats = seats
        return readers

    @staticmethod
    def encode(action: dict[str, Any], version: int) -> str:
        name = action["action"]
        values = {"action": name, "v": str(version)}
        if name in ("sit", "bet"):  # the seat's own button: name "seat"
            form, button, trigger = f"form-{name}", "seat", f"{name}-{action['seat']}"
            values["seat"] = str(action["seat"])
            if name == "sit":
                values["seed"] = action["seed"]  # the page's script fills the form's hidden seed
            else:
                values["amount"] = str(action["amount"])  # the bet box, at the table's minimum
        elif name in OFFER_FORMS or (name == "surrender" and "hand" not in action):
            form = OFFER_FORMS.get(name, "form-early-surrender")
            accept = action.get("accept", True)
            button, trigger = "accept", form.removeprefix("form-") + ("-yes" if accept else "-no")
            values["accept"] = "true" if accept else "false"
        else:  # the play buttons, ready and leave: name "action"; the turn's seat and hand when it is ours
            form, button, trigger = "form-play", "action", f"play-{name}"
            if "hand" in action:
                values["seat"], values["hand"] = str(action["seat"]), str(action["hand"])
        headers = {
            "HX-Request": "true",
            "HX-Trigger": trigger,
            "HX-Trigger-Name": button,
            "HX-Target": form,
        }
        return json.dumps({**values, "HEADERS": headers})
