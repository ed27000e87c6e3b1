"""The load test's browser-format bots (`tools.loadtest.page`): what they read off the page is what the JSON
state says, so they decide as the JSON bots do; what they send is what the page's forms send, and the server
takes it."""

import json
import random

import orjson
import pytest
from django.contrib.auth.models import AnonymousUser

from blackjack import services
from blackjack.engine.rules import PRESETS
from blackjack.engine.strategy import basic_strategy
from blackjack.models import Table
from blackjack.protocol import parse_message
from blackjack.rendering import Page, live_html
from blackjack.viewmodel import viewer_view
from tests.blackjack.test_viewmodel import make_table
from tools.loadtest.bot import next_action
from tools.loadtest.page import HtmlFormat, JsonFormat, PageError, read_page

pytestmark = pytest.mark.django_db
STRATEGY = basic_strategy(PRESETS["Vegas Strip"])
SEATS = {1: "alice", 2: "bob", 4: "carol"}


def decide(state, seat, *, ordered=True):
    action = next_action(state, seat, STRATEGY, min_bet=10, stopping=False, ordered=ordered)
    if action is not None:
        action.pop("seed", None)  # drawn afresh each time
    return action


def seen(state):
    """The fields of a state that the bot reads, as the page can show them."""
    table, you = state["table"], state["you"]
    return {
        "v": state["v"],
        "phase": table["phase"],
        "turn": table["turn"] and {"seat": table["turn"]["seat"], "hand": table["turn"]["hand"]},
        "dealer": table["dealer"]["cards"],
        "seats": [
            {
                "taken": seat["player"] is not None,
                "bet": seat["bet"] > 0 or any(hand.get("bet") for hand in seat["hands"]),
                "sitting_out": seat["sitting_out"],
                "ready": seat["ready"] and table["phase"] == "settled",
                "cards": [hand["cards"] for hand in seat["hands"]],
            }
            for seat in table["seats"]
        ],
        "mine": you["seats"],
        "logged_in": you["username"] is not None,
    }


def test_a_browser_bot_reads_from_the_page_what_the_json_state_says_and_decides_alike(
    django_user_model, act, seeded_shoes
):
    """Random rounds at a three-player table: at every version, for every player and a spectator, the page's
    reading equals the JSON state's, and the bot's decision for each seat is the same from either."""
    seeded_shoes(random.Random(23))
    users = {seat: django_user_model.objects.create_user(username=name) for seat, name in SEATS.items()}
    table = make_table()
    phases = set()
    # Each player's page also as a connection gets it: only the changes, put together as htmx does.
    connections = {seat: (Page(), HtmlFormat()) for seat in users}
    for _ in range(60):
        decisions = []
        for seat, user in users.items():
            found = viewer_view(table_id=table.pk, user=user)
            state = orjson.loads(found.json())
            (page,) = read_page(live_html(found, user=user))
            assert seen(page) == seen(state)
            held, wire = connections[seat]
            (kept,) = wire.decode(live_html(found, user=user, page=held))
            assert seen(kept) == seen(state)
            assert decide(page, seat) == decide(state, seat)
            assert decide(page, seat, ordered=False) == decide(state, seat, ordered=False)
            if (action := decide(state, seat)) is not None:
                decisions.append((user, action))
        watcher = viewer_view(table_id=table.pk, user=AnonymousUser())
        (page,) = read_page(live_html(watcher, user=AnonymousUser()))
        assert seen(page) == seen(orjson.loads(watcher.json()))
        phases.add(state["table"]["phase"])
        if not decisions:
            break
        user, action = decisions[0]
        name = action.pop("action")
        act(table, user, name, **action)
    assert {"betting", "playing", "settled"} <= phases


def test_a_refusal_on_the_page_is_an_error_then_the_fresh_state(django_user_model):
    user = django_user_model.objects.create_user(username="alice")
    table = make_table()
    found = viewer_view(table_id=table.pk, user=user)
    error, state = read_page(live_html(found, user=user, error={"code": "stale_version", "message": "Late."}))
    assert error == {"type": "error", "code": "stale_version"}
    assert state["v"] == found.version
    assert "sit" in state["you"]["allowed"]


def test_a_fragment_without_the_table_is_no_state():
    assert read_page('<ol id="chat-log" class="log chat-log" hx-swap-oob="true"></ol>') == []
    flash = '<div id="flash"><p class="flash-message flash-rate_limited">Slow.</p></div>'
    assert read_page(flash) == [{"type": "error", "code": "rate_limited"}]


def test_a_card_the_reader_does_not_know_is_refused():
    page = '<section id="dealer"><span class="card card-red" aria-label="Joker"></span></section>'
    with pytest.raises(PageError, match="Joker"):
        read_page(page)


@pytest.mark.parametrize(
    ("action", "frame"),
    [
        ({"action": "sit", "seat": 3, "seed": "ab12"}, {"action": "sit", "seat": "3", "seed": "ab12"}),
        ({"action": "bet", "amount": 10, "seat": 2}, {"action": "bet", "seat": "2", "amount": "10"}),
        ({"action": "hit", "seat": 2, "hand": 1}, {"action": "hit", "seat": "2", "hand": "1"}),
        ({"action": "ready"}, {"action": "ready"}),
        ({"action": "insurance", "accept": False, "seat": 2}, {"action": "insurance", "accept": "false"}),
        ({"action": "even_money", "accept": False, "seat": 2}, {"action": "even_money", "accept": "false"}),
        ({"action": "surrender", "seat": 2}, {"action": "surrender", "accept": "true"}),  # early: its form
    ],
)
def test_a_browser_bot_sends_what_the_pages_form_sends_and_the_server_parses_it(action, frame):
    sent = json.loads(HtmlFormat.encode(action, 41))
    headers = sent.pop("HEADERS")
    assert sent == {**frame, "v": "41"}  # form values are strings
    assert headers["HX-Request"] == "true"
    parsed = parse_message(json.dumps({**frame, "v": "41", "HEADERS": headers}), html=True)
    assert parsed["action"] == action["action"]
    assert parsed["v"] == 41
    assert json.loads(JsonFormat.encode(action, 41)) == {**action, "v": 41}


def test_a_browser_bot_plays_a_whole_round_through_the_pages_forms(django_user_model, seeded_shoes):
    """Every frame a browser bot sends is taken by the server as the HTML format's parser reads it."""
    seeded_shoes(random.Random(5))
    user = django_user_model.objects.create_user(username="alice")
    table = make_table()
    settled = 0
    for _ in range(60):
        found = viewer_view(table_id=table.pk, user=user)
        (page,) = read_page(live_html(found, user=user))
        action = next_action(page, 1, STRATEGY, min_bet=10, stopping=False)
        if page["table"]["phase"] == "settled":
            settled += 1
        if action is None or settled >= 2:
            break
        frame = parse_message(HtmlFormat.encode(action, page["v"]), html=True)
        version = frame.pop("v")
        services.perform(table_id=table.pk, user=user, action=frame, expected_version=version)
        assert Table.objects.get(pk=table.pk).version > version
    assert settled >= 2
