"""The live Durak table as HTML fragments for one viewer (the macros of `durak/jinja2/durak/live.jinja`,
swapped out-of-band by htmx).

A version's board (the trump, the talon, the bout's pairs, the last move) is the same for every viewer, and so
is each seat but for its "you" mark: these partials are rendered once per version, from the spectator's view
(which holds no hand), and kept with the version; each viewer renders only its own regions around them (the
status line, the hand, the controls, the error). Without this, a table of four players and a spectator
rendered the whole template five times after every action.

What is kept is one `Kept` per table, for the version asked for last (the table object the fan-out hands to
every viewer of the process: the same object for all of them), at most `KEPT_TABLES` tables, the least
recently asked for dropped first.
"""

import threading
from collections import OrderedDict
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import orjson
from django.template.defaultfilters import floatformat, truncatechars
from django.utils import translation
from markupsafe import Markup

from durak.table import Table
from durak.templatetags import durak_ui
from durak.view import table_view
from live.jinja import Fragments, environment
from live.regions import Held

LIVE_TEMPLATE = "durak/live.jinja"
#: How many tables' kept fragments this process holds (each: one version's board and seats).
KEPT_TABLES = 1024


class Kept:
    """The fragments of one version of a table that every viewer sees alike, each rendered on first use."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._view: dict[str, Any] | None = None
        self._fragments: dict[tuple, Markup] = {}

    @property
    def view(self) -> dict[str, Any]:
        """The spectator's view of the version: all the kept fragments are rendered from it."""
        if self._view is None:
            self._view = table_view(self.table, None)
        return self._view

    def _render(self, key: tuple, macro: str, **extra: Any) -> Markup:
        key = (*key, translation.get_language())  # each language's viewers get their own words
        if key not in self._fragments:
            view = self.view
            context = {"view": view, "t": view["table"], "g": view["game"], **extra}
            self._fragments[key] = FRAGMENTS.render(macro, context)
        return self._fragments[key]

    @property
    def board(self) -> Markup:
        return self._render(("board",), "board")

    def seat(self, number: int, you: bool) -> Markup:
        """Seat `number` as its own player sees it (`you`) or as everyone else does."""
        return self._render(("seat", number, you), "seat", s={**self.view["seats"][number], "you": you})


_kept: OrderedDict[int, Kept] = OrderedDict()
_lock = threading.Lock()


def kept(table: Table) -> Kept:
    """The kept fragments of this version of `table`: of this very object (one read again is another)."""
    with _lock:
        found = _kept.get(table.id)
        if found is None or found.table is not table:
            found = _kept[table.id] = Kept(table)
        _kept.move_to_end(table.id)
        while len(_kept) > KEPT_TABLES:
            _kept.popitem(last=False)
        return found


def live_html(
    table: Table, view: dict[str, Any], error: dict[str, str] | None = None, held: Held | None = None
) -> str:
    """Every region of the live table for the viewer whose view of `table` is `view` (with `error`); with
    `held`, the page of the connection the message is then sent on, only the regions it does not hold alike
    (the error's always, when there is one), which it then holds. A region keyed by its inputs (the hand, the
    controls) that the page holds from the same inputs is not even rendered again."""
    keys = region_keys(view)
    made = {}
    if held is not None:
        for name, key in keys.items():
            markup = held.markup(name, key)
            if markup is not None:
                made[name] = Markup(markup)
    message = str(FRAGMENTS.render("page", {"view": view, "error": error, "kept": kept(table), "made": made}))
    if held is None:
        return message
    return held.changed(message, always=("durak-error",) if error else (), keys=keys)


def region_keys(view: dict[str, Any]) -> dict[str, Hashable]:
    """The inputs of the viewer's hand and controls: all of each one's markup is a function of them."""
    table, game, you = view["table"], view["game"] or {}, view["you"]
    moves = [bool(game), game.get("allowed"), game.get("taking")]
    language = translation.get_language()
    return {
        "durak-hand": _json([*moves, you["seat"], game.get("hand"), game.get("trump"), language]),
        "durak-controls": _json([*moves, you, table["status"], table["free"], language]),
    }


def _json(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def region(name: str, context: dict[str, Any]) -> Markup:
    """The region (or part) `name` of the live template for `context`: `page` is every region of a `view`."""
    return FRAGMENTS.render(name, context)


def card(code: str | None) -> Markup:
    """A card's face (None: its back), the same for every viewer: made once per card and language."""
    return FRAGMENTS.once("face", code)


FRAGMENTS = Fragments(
    environment(
        Path(__file__).resolve().parent / "jinja2",
        filters={
            "floatformat": floatformat,
            "truncatechars": truncatechars,
            **{
                name: getattr(durak_ui, name)
                for name in (
                    "action_json",
                    "action_label",
                    "backs",
                    "card_moves",
                    "choices",
                    "last_move",
                    "player_name",
                    "rank_label",
                    "rating_change",
                    "seat_name",
                    "seconds_left",
                    "signed",
                )
            },
        },
        globals={"card": card},
    ),
    LIVE_TEMPLATE,
)
