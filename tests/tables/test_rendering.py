"""The live table's HTML for one viewer: the regions all viewers share are rendered once per version and are
the same as when rendered with the viewer's whole context."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.template.loader import render_to_string

from tables import rendering
from tables.rendering import LIVE_TEMPLATE, OWN_REGIONS, SHARED_REGIONS, live_html
from tables.viewmodel import viewer_view
from tests.tables.test_viewmodel import FRONT, deal_round, make_table, users  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def test_the_regions_are_those_the_template_sends():
    template = Path(settings.BASE_DIR, "templates", LIVE_TEMPLATE).read_text()
    last_line = template.strip().splitlines()[-1]
    assert set(re.findall(r"{% partial (\w+) %}", last_line)) == {*OWN_REGIONS, *SHARED_REGIONS}


def test_each_viewer_gets_every_region_as_the_whole_context_renders_it(users):  # noqa: F811
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    error = {"code": "illegal_action", "message": "Not now."}
    for user in (users[0], users[1], users[2], AnonymousUser()):
        found = viewer_view(table_id=table.pk, user=user)
        context = {"view": found.view, "user": user, "error": error}
        expected = "".join(
            render_to_string(f"{LIVE_TEMPLATE}#{region}", context)
            for region in (*OWN_REGIONS, *SHARED_REGIONS)
        )
        assert live_html(found, user=user, error=error) == expected


def test_the_shared_regions_are_rendered_once_per_version(users, monkeypatch):  # noqa: F811
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    calls = []
    render = rendering._shared_html
    monkeypatch.setattr(rendering, "_shared_html", lambda table: calls.append(1) or render(table))
    first = live_html(viewer_view(table_id=table.pk, user=users[0]), user=users[0])
    second = live_html(viewer_view(table_id=table.pk, user=users[1]), user=users[1])
    assert len(calls) == 1
    assert 'id="dealer"' in first
    assert 'id="dealer"' in second
    assert "badge-you" in first
