"""The lobby, table, open-table, sit and private-link pages, rendered from the real view model."""

import re

import pytest
from django.urls import reverse

from blackjack.engine.strategy import basic_strategy
from blackjack.models import Seat, Table
from blackjack.templatetags.table_ui import WS_FORMS
from live.consumer import CHAT_FORMS
from tests.blackjack.test_templates import by_id, parse

pytestmark = pytest.mark.django_db


def seat_user(table, number):
    return Seat.objects.get(table=table, number=number).user


def test_lobby_lists_public_open_tables_with_sit_and_watch(client, alice, make_table):
    public = make_table(name="Main <table>")
    make_table(name="Hidden one", is_private=True)
    make_table(name="Shut", is_open=False)
    client.force_login(alice)
    response = client.get(reverse("lobby"))
    assert response.status_code == 200
    html = response.content.decode()
    root = parse(html)
    rows = by_id(root, "lobby-tables").find_all("li", class_="lobby-table")
    assert [row.attrs["data-table"] for row in rows] == [str(public.pk)]
    text = rows[0].text_content()
    assert "Main <table>" in text
    assert "0 of 7" in text
    assert "10\u2013500" in text
    assert "6 decks" in text
    sit = rows[0].find_all("button", form="lobby-sit")[0]
    assert sit.attrs["formaction"] == reverse("sit", args=[public.pk])
    assert by_id(root, "lobby-sit").find_all("input", name="csrfmiddlewaretoken")
    assert rows[0].find_all("a", href=reverse("table", args=[public.pk]))
    assert 'ws-connect="/ws/lobby/"' in html


def test_lobby_for_a_visitor_has_watch_but_no_sit(client, make_table):
    make_table()
    rows = by_id(parse(client.get(reverse("lobby")).content.decode()), "lobby-tables")
    assert rows.find_all("button") == []
    assert [link.text_content() for link in rows.find_all("a", class_="button")] == ["Watch"]


def test_table_page_includes_the_live_partials_and_stable_forms(client, alice, table, act):
    act(table, alice, "sit", seat=3)
    client.force_login(alice)
    response = client.get(reverse("table", args=[table.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    root = parse(html)
    for region in (
        "table-status",
        "dealer",
        "seats",
        "controls",
        "event-log",
        "chat-log",
        "shoe-info",
        "flash",
    ):
        assert by_id(root, region).attrs["hx-swap-oob"] in ("true", "innerHTML")
    assert by_id(root, "nav-balance").attrs.get("hx-swap-oob") is None, "the header's own balance element"
    for form_id in (*WS_FORMS, *CHAT_FORMS):
        form = by_id(root, form_id)
        assert form.tag == "form"
        assert "ws-send" in form.attrs
    # Everything that names a form names one of the stable forms, and no sending form is inside a live region.
    assert {node.attrs["form"] for node in root.all() if "form" in node.attrs} <= {*WS_FORMS, *CHAT_FORMS}
    for region in ("table-status", "dealer", "seats", "controls", "event-log", "chat-log", "shoe-info"):
        assert by_id(root, region).find_all("form") == []
    assert by_id(root, "table-version").attrs["data-v"] == str(Table.objects.get(pk=table.pk).version)
    assert f'ws-connect="/ws/tables/{table.pk}/"' in html
    assert re.search(r'<script src="/static/js/table.js" nonce="[^"]+"', html)
    assert "Alice" in by_id(root, "seats").text_content()


def test_table_page_for_a_spectator(client, table):
    root = parse(client.get(reverse("table", args=[table.pk])).content.decode())
    assert "Log in" in by_id(root, "controls").text_content()
    assert [node.attrs.get("id") for node in root.all() if node.attrs.get("id") == "form-chat"] == []


def test_unknown_table_is_404(client):
    assert client.get(reverse("table", args=[999])).status_code == 404


def test_private_table_needs_its_link(client, alice, bob, make_table):
    private = make_table(name="Ours", is_private=True, created_by=alice)
    client.force_login(bob)
    assert client.get(reverse("table", args=[private.pk])).status_code == 404
    response = client.get(reverse("join_private", args=[private.private_token]))
    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[private.pk])
    page = client.get(reverse("table", args=[private.pk])).content.decode()
    assert f'ws-connect="/ws/tables/{private.pk}/?token={private.private_token}"' in page
    assert client.get(reverse("join_private", args=["not-a-token"])).status_code == 404


def test_creator_sees_the_invitation_link(client, alice, make_table):
    private = make_table(name="Ours", is_private=True, created_by=alice)
    client.force_login(alice)
    page = client.get(reverse("table", args=[private.pk])).content.decode()
    assert reverse("join_private", args=[private.private_token]) in page


def test_sit_from_the_lobby_takes_the_first_free_seat(client, alice, bob, table, act):
    act(table, bob, "sit", seat=1)
    client.force_login(alice)
    response = client.post(reverse("sit", args=[table.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[table.pk])
    assert seat_user(table, 2) == alice
    client.post(reverse("sit", args=[table.pk]))
    assert Seat.objects.filter(table=table, user=alice).count() == 1, "a seated player stays in one seat"


def test_sit_needs_post_and_a_login(client, alice, table):
    assert client.get(reverse("sit", args=[table.pk])).status_code == 405
    response = client.post(reverse("sit", args=[table.pk]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert not Seat.objects.filter(table=table, user__isnull=False).exists()


def test_sit_at_a_full_table_says_so(client, make_user, make_table, act):
    small = make_table(seats=1, seats_per_player=1)
    act(small, make_user("first"), "sit", seat=1)
    late = make_user("late")
    client.force_login(late)
    response = client.post(reverse("sit", args=[small.pk]), follow=True)
    assert "no seat for you" in response.content.decode()
    assert not Seat.objects.filter(table=small, user=late).exists()


def test_open_table_creates_it_and_shows_it(client, alice, make_table):
    preset = make_table().preset
    client.force_login(alice)
    form = client.get(reverse("open_table")).content.decode()
    assert "Vegas Strip — 6 decks" in form
    response = client.post(
        reverse("open_table"),
        {"name": "Friday night", "preset": preset.pk, "min_bet": 25, "max_bet": 1000, "private": "on"},
    )
    created = Table.objects.get(name="Friday night")
    assert response["Location"] == reverse("table", args=[created.pk])
    assert (created.min_bet, created.max_bet, created.is_private, created.created_by) == (
        25,
        1000,
        True,
        alice,
    )


def test_open_table_refuses_bad_limits(client, alice, make_table):
    preset = make_table().preset
    client.force_login(alice)
    response = client.post(
        reverse("open_table"), {"name": "Upside down", "preset": preset.pk, "min_bet": 100, "max_bet": 10}
    )
    assert response.status_code == 200
    assert "at least the minimum" in response.content.decode()
    response = client.post(
        reverse("open_table"), {"name": "Too rich", "preset": preset.pk, "min_bet": 10, "max_bet": 10**9}
    )
    assert response.status_code == 200
    assert not Table.objects.filter(name__in=["Upside down", "Too rich"]).exists()


def test_open_table_needs_a_login(client):
    response = client.get(reverse("open_table"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("page", ["lobby", "table"])
def test_the_rule_codes_are_explained_on_the_lobby_and_the_table_page(client, table, page):
    url = reverse("lobby") if page == "lobby" else reverse("table", args=[table.pk])
    text = " ".join(client.get(url).content.decode().split())
    assert "What the rule codes mean" in text
    for code, meaning in [
        ("S17 / H17", "The dealer stands on / hits a soft 17."),
        ("LS / ES", "Late surrender (after the dealer checks for blackjack)"),
        ("DAS", "Doubling after a split is allowed."),
    ]:
        assert f"<dt>{code}</dt><dd>{meaning}" in text


@pytest.mark.parametrize("preset", ["Vegas Strip", "Downtown", "European", "Single deck 6:5"])
def test_the_house_edge_of_every_table_is_computed_and_shown(client, make_table, preset):
    table = make_table(preset)
    edge = basic_strategy(table.ruleset()).house_edge()
    shown = f"{edge:.2f}%"
    lobby = parse(client.get(reverse("lobby")).content.decode())
    row = [
        node
        for node in lobby.find_all("li", class_="lobby-table")
        if node.attrs["data-table"] == str(table.pk)
    ]
    assert shown in row[0].find_all(class_="house-edge")[0].text_content()
    page = parse(client.get(reverse("table", args=[table.pk])).content.decode())
    assert f"house edge {shown}" in page.find_all(class_="house-edge")[0].text_content()


def test_the_strategy_chart_is_the_engines_for_the_tables_own_rules(client, make_table):
    table = make_table("Downtown")  # an H17 game
    chart = basic_strategy(table.ruleset()).chart()
    response = client.get(reverse("strategy_chart", args=[table.pk]))
    assert response.status_code == 200
    root = parse(response.content.decode())
    tables = root.find_all("table")
    assert [t.attrs["aria-label"] for t in tables] == [
        "Hard totals",
        "Soft totals (with an ace counted as 11)",
        "Pairs",
    ]
    for rendered, section in zip(tables, ("hard", "soft", "pairs"), strict=True):
        rows = [
            [cell.text for cell in row.find_all("td")] for row in rendered.find_all("tbody")[0].find_all("tr")
        ]
        assert rows == [[moves[up] for up in chart["upcards"]] for moves in chart[section].values()]
    # Another table's rules give another chart, and its page serves that one.
    vegas = make_table("Vegas Strip", name="S17 table")
    other = parse(client.get(reverse("strategy_chart", args=[vegas.pk])).content.decode())
    assert basic_strategy(vegas.ruleset()).chart() != chart
    assert [td.text for td in other.find_all("td")] != [td.text for td in root.find_all("td")]


def test_a_private_tables_chart_needs_its_link(client, bob, alice, make_table):
    private = make_table(name="Ours", is_private=True, created_by=alice)
    client.force_login(bob)
    assert client.get(reverse("strategy_chart", args=[private.pk])).status_code == 404


def test_how_to_play_is_linked_from_the_nav_and_explains_rules_flow_codes_and_fairness(client):
    lobby = parse(client.get(reverse("lobby")).content.decode())
    links = [a.attrs["href"] for a in lobby.find_all("nav")[0].find_all("a")]
    assert reverse("how_to_play") in links
    text = " ".join(client.get(reverse("how_to_play")).content.decode().split())
    for heading in ("The aim", "A round, step by step", "What the rule codes mean", "Provably fair"):
        assert heading in text
    assert "<dt>DAS</dt><dd>Doubling after a split is allowed.</dd>" in text
    assert "house edge" in text


def test_the_private_invite_link_has_a_copy_button(client, alice, make_table):
    private = make_table(name="Ours", is_private=True, created_by=alice)
    client.force_login(alice)
    page = parse(client.get(reverse("table", args=[private.pk])).content.decode())
    assert page.find_all("button", data_copy="invite-url")
    assert reverse("join_private", args=[private.private_token]) in by_id(page, "invite-url").text


def test_log_and_chat_times_carry_their_moment_for_the_browser_to_localize(client, alice, table, act):
    act(table, alice, "sit", seat=1)
    page = parse(client.get(reverse("table", args=[table.pk])).content.decode())
    times = by_id(page, "event-log").find_all("time")
    assert times
    assert all(t.attrs["data-local"] == "time" and t.attrs["datetime"].endswith("+00:00") for t in times)
