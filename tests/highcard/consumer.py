"""High card's table socket, `/ws/highcard/<id>/`: the site's pipeline with high card's fields and view."""

import json

from django.template.loader import render_to_string

from live.consumer import TableConsumer, Unavailable
from tests.highcard import store
from tests.highcard.flow import view
from tests.highcard.models import HighCardTable
from tests.highcard.route import HighCardRoute

TEMPLATE = "highcard/table.html"


class HighCardConsumer(TableConsumer):
    game = store.GAME
    route = HighCardRoute
    fields = {"sit": {}, "leave": {}, "deal": {}}
    error_template = f"{TEMPLATE}#error"

    def visible(self, table_id, user, token):
        if not HighCardTable.objects.filter(pk=table_id, closed=False).exists():
            raise Unavailable

    def encode(self, shared, error=None):
        seen = view(shared, self.user.pk if self.user.is_authenticated else None)
        if self.json_format:
            return json.dumps(seen)
        return render_to_string(TEMPLATE, {"view": seen, "error": error})
