"""The live table's HTML for one viewer: a fresh page gets every region as the whole template renders it;
after that each message carries only what changed, and the page put together from those messages is the
page a full rendering gives, for every viewer over whole rounds (dealer frames, a viewer who misses
versions, the balance notice, refusals). What all viewers see alike is rendered once per version."""

import random
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from blackjack import rendering, services
from blackjack.engine.strategy import basic_strategy
from blackjack.rendering import BALANCE_REGIONS, LIVE_TEMPLATE, REGIONS, Page, live_html, region
from blackjack.viewmodel import frame_at, read_shared, view_of, viewer_view
from tests.blackjack.test_viewmodel import FRONT, deal_round, make_table, users  # noqa: F401  (fixture)
from tools.loadtest import page as browser
from tools.loadtest.bot import next_action

pytestmark = pytest.mark.django_db


def test_the_regions_are_those_the_template_sends():
    template = (Path(rendering.__file__).parent / "jinja2" / LIVE_TEMPLATE).read_text()
    whole = template[template.index("{% macro page(") :].splitlines()[1]
    assert re.findall(r"{{ (\w+)\(", whole) == list(REGIONS)


def _whole(found, user, error=None) -> str:
    """The viewer's regions as the table page renders them: the whole template, nothing kept."""
    context = {"view": found.view, "user": user, "error": error}
    return "".join(str(region(name, context)) for name in REGIONS)


def test_a_fresh_page_gets_every_region_as_the_whole_context_renders_it(users):  # noqa: F811
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    error = {"code": "illegal_action", "message": "Not now."}
    for user in (users[0], users[1], users[2], AnonymousUser()):
        found = viewer_view(table_id=table.pk, user=user)
        assert live_html(found, user=user, error=error) == _whole(found, user, error)
        assert live_html(found, user=user, error=error, page=Page()) == _whole(found, user, error)


def _play(table, players, *, actions: int, seed: int = 7):
    """Basic-strategy bots play `actions` actions at `table` through the services, in a random order among
    those who may act; yields the shared part after each."""
    rng = random.Random(seed)
    strategy = basic_strategy(table.ruleset())
    for seat, user in players.items():
        version = read_shared(table.pk).version
        services.perform(
            table_id=table.pk, user=user, action={"action": "sit", "seat": seat}, expected_version=version
        )
    for _ in range(actions):
        shared = read_shared(table.pk)
        order = list(players.items())
        rng.shuffle(order)
        for seat, user in order:
            action = next_action(view_of(shared, user).view, seat, strategy, min_bet=10, stopping=False)
            if action is not None:
                services.perform(table_id=table.pk, user=user, action=action, expected_version=shared.version)
                break
        else:
            raise AssertionError(f"no bot can act at version {shared.version}")
        yield read_shared(table.pk)


def _log_lines(region: str) -> list[str]:
    return browser.elements(region[region.index(">") + 1 : region.rindex("<")]) if region else []


def _assert_same_page(built: browser.Page, whole: browser.Page) -> None:
    """Every region alike; the log's lines those of the whole page, newest first, perhaps with older ones
    after them that a dealer frame's log leaves out (its settlement's lines come later)."""
    for element_id in {*whole.regions, *built.regions} - {"event-log"}:
        assert built.region(element_id) == whole.region(element_id), element_id
    log, expected_log = built.region("event-log"), whole.region("event-log")
    assert log[: log.index(">")] == expected_log[: expected_log.index(">")]
    lines, expected = _log_lines(log), _log_lines(expected_log)
    assert lines[: len(expected)] == expected
    assert len(lines) <= 30


def test_a_page_put_together_from_the_changes_is_the_page_a_full_rendering_gives(users, monkeypatch):  # noqa: F811
    """Four viewers (the two players, a spectator who may sit, an anonymous one) follow 120 actions of a
    table, with its dealer frames; one of them misses two versions in three. Each keeps a page from the
    messages it is sent; after each message, it is the page a full rendering of that moment gives."""
    table = make_table(seats=4, seats_per_player=2)
    viewers = (users[0], users[1], users[2], AnonymousUser())
    pages = {index: (Page(), browser.Page()) for index in range(len(viewers))}
    skipping = 2  # this viewer is shown one version in three
    rng = random.Random(3)
    phases = set()
    for number, shared in enumerate(_play(table, {1: users[0], 3: users[1]}, actions=120)):
        moment = timezone.now()
        frames = [frame_at(shared, moment)]
        if shared.reveal is not None:  # the dealer's first card, then the settled round
            settled_at = shared.reveal[0]
            frames = [frame_at(shared, settled_at + timedelta(seconds=s)) for s in (0, 3600)]
        with monkeypatch.context() as frozen:  # the countdown's seconds are rendered for each viewer, now
            frozen.setattr(timezone, "now", lambda moment=moment: moment)
            for frame in frames:
                phases.add(frame.shared.view_table["phase"])
                for index, viewer in enumerate(viewers):
                    if index == skipping and number % 3:
                        continue
                    page, built = pages[index]
                    error = None
                    if rng.random() < 0.1:
                        error = {"code": "stale_version", "message": "Someone acted first."}
                    if rng.random() < 0.1 and viewer.is_authenticated:
                        page.forget(*BALANCE_REGIONS)  # a balance notice went out between two versions
                    found = view_of(frame.shared, viewer)
                    message = live_html(found, user=viewer, error=error, page=page)
                    built.apply(message)
                    whole = browser.Page()
                    whole.apply(_whole(found, viewer, error))
                    _assert_same_page(built, whole)
    assert {"betting", "playing", "dealer", "settled"} <= phases


def test_a_hit_sends_the_other_players_only_what_it_changed(users, scripted_shoe):  # noqa: F811
    """Seat 1 hits its 5 and has 9: each other player is sent the new version's number, seat 1, the new
    countdown and the log's new line, a fraction of the page; nothing of the dealer, the shoe or their
    controls, which did not change for them."""
    table = make_table()
    # Dealt one card a seat, the dealer's upcard, a second card a seat, the hole card; then seat 1's hit.
    scripted_shoe(table, ["2c", "9h", "Th", "6s", "3c", "7c", "8d", "Ts", "4d"])
    players = {1: users[0], 2: users[1], 3: users[2]}
    for shared in _play(table, players, actions=10):
        if shared.view_table["phase"] == "playing":
            break
    turn = shared.view_table["turn"]
    assert turn == {"seat": 1, "hand": 0}
    others = {seat: Page() for seat in players if seat != turn["seat"]}
    first = {
        seat: live_html(view_of(shared, players[seat]), user=players[seat], page=page)
        for seat, page in others.items()
    }
    action = {"action": "hit", **turn}
    services.perform(
        table_id=table.pk, user=players[turn["seat"]], action=action, expected_version=shared.version
    )
    shared = read_shared(table.pk)
    assert shared.view_table["turn"] == turn
    for seat, page in others.items():
        message = live_html(view_of(shared, players[seat]), user=players[seat], page=page)
        sent = [browser.ID.search(element) for element in browser.elements(message)]
        assert [found.group(1) for found in sent if found] == [
            "table-version",
            "countdown",
            f"seat-{turn['seat']}",
            "event-lines",
            "shoe-info",  # a card fewer in the shoe
        ]
        assert 'hx-swap-oob="afterbegin:#event-log"' in message
        assert len(message) < len(first[seat]) / 3


def test_a_refusal_is_shown_each_time_and_cleared_by_the_next_message(users):  # noqa: F811
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    found = viewer_view(table_id=table.pk, user=users[0])
    page = Page()
    live_html(found, user=users[0], page=page)
    error = {"code": "illegal_action", "message": "Not now."}
    for _ in range(2):
        assert "flash-illegal_action" in live_html(found, user=users[0], error=error, page=page)
    cleared = live_html(found, user=users[0], page=page)
    assert cleared.strip().startswith('<div id="flash"')
    assert "flash-message" not in cleared
    assert live_html(found, user=users[0], page=page) == ""  # nothing new: nothing sent


def test_viewers_of_one_version_share_its_renderings(users, monkeypatch):  # noqa: F811
    """Rendered in turn from one version's shared part, every viewer gets exactly what the whole template
    renders for them alone, while the seats' variants, the table-only parts and the regions every viewer
    sees alike are rendered once for all of them."""
    table = make_table(seats=4, seats_per_player=2)
    deal_round(table, {1: users[0], 3: users[1]}, FRONT)
    rendering._bet_picker.cache_clear()
    rendered = []
    macro = rendering.FRAGMENTS.macro
    monkeypatch.setattr(rendering.FRAGMENTS, "macro", lambda name: rendered.append(name) or macro(name))
    shared = read_shared(table.pk)
    viewers = (users[0], users[1], users[2], AnonymousUser(), AnonymousUser())
    messages = [live_html(view_of(shared, viewer), user=viewer, page=Page()) for viewer in viewers]
    assert rendered.count("seat_hands") == 2  # one per seated player, for every viewer
    assert rendered.count("bet_picker") == 1  # a function of the limits alone
    for name in ("dealer", "event_log", "shoe_info", "table_version"):
        assert rendered.count(name) == 1
    # the two anonymous viewers share everything: one rendering each of their status and controls
    assert rendered.count("controls") == 4
    kept = {key for key in shared._kept if key[0] == "seat"}
    assert {  # each kept in the viewers' language
        ("seat", 1, True, "", "en"),
        ("seat", 1, False, "", "en"),
        ("seat", 2, False, "take", "en"),
        ("seat", 2, False, "sit", "en"),
    } <= kept
    for viewer, message in zip(viewers, messages, strict=True):
        assert message == _whole(view_of(shared, viewer), viewer)
