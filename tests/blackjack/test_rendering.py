"""The live table's HTML for one viewer: the regions and parts all viewers share (and each seat's variants)
are rendered once per version and are the same as when rendered with the viewer's whole context."""

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser
from django.template.loader import get_template, render_to_string
from django.utils import timezone

from blackjack import rendering, services
from blackjack.engine.strategy import basic_strategy
from blackjack.rendering import LIVE_TEMPLATE, OWN_REGIONS, SHARED_REGIONS, live_html
from blackjack.templatetags import table_ui
from blackjack.viewmodel import read_shared, view_of, viewer_view
from tests.blackjack.test_viewmodel import FRONT, deal_round, make_table, users  # noqa: F401  (fixture)
from tools.loadtest.bot import next_action

pytestmark = pytest.mark.django_db


def test_the_regions_are_those_the_template_sends():
    template = Path(get_template(LIVE_TEMPLATE).origin.name).read_text()
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
    shared = read_shared(table.pk)
    first = live_html(view_of(shared, users[0]), user=users[0])
    second = live_html(view_of(shared, users[1]), user=users[1])
    assert len(calls) == 1
    assert 'id="dealer"' in first
    assert 'id="dealer"' in second
    assert "badge-you" in first


def _uncached(found, user) -> str:
    """The viewer's regions as the table page renders them: the whole template, nothing kept."""
    context = {"view": found.view, "user": user, "error": None}
    return "".join(
        render_to_string(f"{LIVE_TEMPLATE}#{region}", context) for region in (*OWN_REGIONS, *SHARED_REGIONS)
    )


def _play(table, players, *, actions: int):
    """Two basic-strategy bots play `actions` actions at `table` through the services; yields after each."""
    rules = table.ruleset()
    strategy = basic_strategy(rules)
    for seat, user in players.items():
        version = read_shared(table.pk).version
        services.perform(
            table_id=table.pk, user=user, action={"action": "sit", "seat": seat}, expected_version=version
        )
    for _ in range(actions):
        shared = read_shared(table.pk)
        for seat, user in players.items():
            action = next_action(view_of(shared, user).view, seat, strategy, min_bet=10, stopping=False)
            if action is not None:
                services.perform(table_id=table.pk, user=user, action=action, expected_version=shared.version)
                break
        else:
            raise AssertionError(f"no bot can act at version {shared.version}")
        yield read_shared(table.pk)


def test_viewers_of_one_version_share_the_seats_markup_yet_each_gets_their_own_page(users, monkeypatch):  # noqa: F811
    """Rendered in turn from one version's shared part, every viewer (the two players, a spectator who may
    sit, an anonymous one) gets exactly what the whole template renders for them alone, over whole rounds: no
    seat variant kept for one viewer reaches another (the "You" mark, "+ Take" and "Sit" buttons)."""
    table = make_table(seats=4, seats_per_player=2)
    viewers = (users[0], users[1], users[2], AnonymousUser())
    phases = set()
    for shared in _play(table, {1: users[0], 3: users[1]}, actions=40):
        phases.add(shared.view_table["phase"])
        moment = timezone.now()
        with monkeypatch.context() as frozen:  # the countdown's seconds are rendered for each viewer, now
            frozen.setattr(timezone, "now", lambda moment=moment: moment)
            for viewer in viewers:
                found = view_of(shared, viewer)
                assert live_html(found, user=viewer) == _uncached(found, viewer)
    assert {"betting", "playing", "settled"} <= phases
    kept = {key for key in shared._kept if key[0] == "seat"}
    assert {  # each kept in the viewers' language
        ("seat", 1, True, "", "en"),
        ("seat", 1, False, "", "en"),
        ("seat", 2, False, "take", "en"),
        ("seat", 2, False, "sit", "en"),
    } <= kept


def test_each_seat_and_table_part_is_rendered_once_per_version(users, monkeypatch):  # noqa: F811
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    rendered = []
    get_template = table_ui.get_template
    monkeypatch.setattr(table_ui, "get_template", lambda name: rendered.append(name) or get_template(name))
    shared = read_shared(table.pk)
    for viewer in (users[0], users[1], users[2], AnonymousUser()):
        live_html(view_of(shared, viewer), user=viewer)
    hands = [name for name in rendered if name.endswith("#seat_hands")]
    assert len(hands) == 2  # one per seated player, for all four viewers
    for part in ("form_versions", "bet_picker"):
        assert rendered.count(f"{LIVE_TEMPLATE}#{part}") == 1
    # a seated player's seat: "mine" for its player, "not mine" for the other three viewers
    assert len([name for name in rendered if name.endswith("#seat")]) == len(
        {key for key in shared._kept if key[0] == "seat"}
    )
