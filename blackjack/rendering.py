"""The live table as HTML fragments for one viewer (`tables/partials/live.html`, swapped out-of-band by htmx).

The regions every viewer sees alike (the dealer, the event log, the shoe) are rendered once per table
version and language and kept with the version's shared view (`blackjack.viewmodel`). Of the viewer's own
regions (status, seats, controls, balance, the flash message), the seats are markup the viewers share too,
but for the viewer's "you" marks and sit buttons: each seat is rendered once per version (and language) for
each such variant and kept (`table_ui.seat_markup`, which finds the version in the context as `shared`), so
each viewer renders only the small rest. A browser table of five players would otherwise render the whole
template for every one of them after every action.
"""

from typing import Any

from django.template.loader import render_to_string
from django.utils.translation import get_language

from blackjack.viewmodel import ViewerView

LIVE_TEMPLATE = "blackjack/partials/live.html"
SHARED_REGIONS = ("dealer", "event_log", "shoe_info")
OWN_REGIONS = ("table_status", "seats", "controls", "nav_balance", "flash")


def live_html(found: ViewerView, *, user, error: dict[str, str] | None = None) -> str:
    """Every region of the live table for the viewer of `found` (with `error` in the flash region)."""
    context = {"view": found.view, "user": user, "error": error, "shared": found.shared}
    own = "".join(render_to_string(f"{LIVE_TEMPLATE}#{region}", context) for region in OWN_REGIONS)
    return own + found.shared.keep(("live_html", get_language()), lambda: _shared_html(found.view["table"]))


def _shared_html(table: dict[str, Any]) -> str:
    context = {"view": {"table": table}}
    return "".join(render_to_string(f"{LIVE_TEMPLATE}#{region}", context) for region in SHARED_REGIONS)
