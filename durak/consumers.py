"""The Durak table's socket, `/ws/durak/<id>/`: JSON (`?format=json`, for bots and tools) or HTML fragments
(the page's regions, swapped by htmx by id).

The site's consumer pipeline (`live.consumer.TableConsumer`: connect, rate limits, frame limits, the worker,
the owner's route, presence, chat and reactions, one refusal message, a clean close whatever happens) with
Durak's hooks: its protocol's fields (`durak.protocol`), its way to a table's owner (`durak.remote`), and each
viewer's own view of a version (`durak.view.table_view`: a player never receives another's hand or the
talon's order), as JSON or the regions of `durak/live.jinja` (`durak.rendering`: what all viewers
see alike rendered once a version).
"""

import json

from durak import protocol, refusals, services
from durak.models import GAME
from durak.remote import DurakRoute
from durak.rendering import live_html, region
from durak.table import Table
from durak.view import table_view
from live.consumer import TableConsumer, Unavailable
from live.regions import Held


class DurakConsumer(TableConsumer):
    game = GAME
    route = DurakRoute
    fields = protocol.FIELDS

    def error_html(self, error: dict[str, str]) -> str:
        return str(region("error_line", {"error": error}))

    def visible(self, table_id: int, user, token: str | None) -> None:
        if services.visible_table(table_id, user=user, token=token) is None:
            raise Unavailable

    def setup(self, options: dict[str, str]) -> None:
        self.held = Held()  # the browser page's regions as this connection last sent them (HTML)

    def encode(self, shared: Table, error: dict[str, str] | None = None) -> str:
        """The viewer's view of `shared`: JSON, or the regions of the page that differ from what it holds
        (the error's always, when there is one)."""
        view = table_view(shared, self.user.pk if self.user.is_authenticated else None)
        if self.json_format:
            return json.dumps(view)
        return live_html(shared, view, error, self.held)

    def refusal_text(self, code: str, message: str) -> str:
        return refusals.translated(code, message)

    def marked_gone(self, shared: Table) -> bool:
        mine = shared.seat_of(self.user.pk)
        return mine is not None and mine.gone is not None and not mine.away
