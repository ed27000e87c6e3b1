"""The live table in real Chromium against a real Daphne server: players in separate browser contexts, a
spectator, keyboard play, many rounds in a row, a phone screen and a dropped connection."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from blackjack import services
from blackjack.models import Seat, Table
from live import clock, fanout
from tests.browser.table_support import (
    LONG_WINDOW,
    act,
    make_player,
    open_live_table,
    screenshot_dir,
    seat,
    stack_shoe,
    still,
    value,
    version,
)

pytestmark = [pytest.mark.browser]
expect.set_options(timeout=20_000)  # a slow-suite neighbour may hold both cores


def split_and_double(order):
    """Seat 1 holds a pair (2s to 9s), seat 2 a hard 9 to 11, the dealer a 2 to 9 up (no insurance)."""
    first, second, up, first_2, second_2 = order[:5]
    return (
        first[0] == first_2[0]
        and 2 <= value(first) <= 9
        and value(second) != 1
        and value(second_2) != 1
        and 9 <= value(second) + value(second_2) <= 11
        and 2 <= value(up) <= 9
    )


@pytest.mark.slow
def test_two_players_and_a_spectator_play_a_round(transactional_db, open_page, tmp_path):
    alice, bob = make_player("alice", "Alice", "crown"), make_player("bob", "Bob", "moon")
    table = open_live_table("Split and double")
    order = stack_shoe(table, split_and_double)
    a, b, watcher = open_page(alice, viewport={"width": 1366, "height": 900}), open_page(bob), open_page()
    everyone = (a, b, watcher)
    for page in everyone:
        page.goto(f"/tables/{table.pk}/")
        expect(page.locator("#table-version")).to_have_attribute("data-v", str(table.version))
    expect(watcher.locator("#controls")).to_contain_text("Log in")
    expect(watcher.get_by_role("button", name="Sit in seat 1")).to_have_count(0)

    act(a, a.get_by_role("button", name="Sit in seat 1").click, b, watcher)
    act(b, b.get_by_role("button", name="Sit in seat 2").click, a, watcher)
    expect(seat(watcher, 1)).to_contain_text("Alice")
    expect(seat(watcher, 2)).to_contain_text("Bob")
    expect(a.locator("#table-status")).to_contain_text("Place your bet")
    # Each browser drew its player's own seed and sent it with the sit (the fairness of the next shoes).
    seeds = [page.locator("#sit-seed").input_value() for page in (a, b)]
    assert all(re.fullmatch("[0-9a-f]{32}", seed) for seed in seeds)
    assert seeds[0] != seeds[1]
    assert [Seat.objects.get(table=table, number=n).client_seed for n in (1, 2)] == seeds

    a.locator("#bet-amount").fill("100")
    act(a, a.get_by_role("button", name="Bet", exact=True).click, b, watcher)
    expect(seat(b, 1).locator(".chip")).to_have_text("Bet 100")
    b.get_by_role("button", name="Clear the bet").click()
    b.get_by_role("button", name="Add 25", exact=True).click()
    b.get_by_role("button", name="Add 25", exact=True).click()
    expect(b.locator("#bet-amount")).to_have_value("50")
    act(b, b.get_by_role("button", name="Bet", exact=True).click, a, watcher)

    # The deal: the same cards on every screen, the hole card face down, Alice to act.
    for page in everyone:
        expect(page.locator("#dealer .card-back")).to_have_count(1)
        expect(seat(page, 1).get_by_role("img", name=re.compile(" of "))).to_have_count(2)
    expect(a.locator("#table-status")).to_contain_text("Your turn")
    expect(seat(a, 1)).to_have_class(re.compile("seat-turn"))
    expect(b.locator("#table-status")).to_contain_text("Waiting for Alice")
    expect(b.locator("#play-hit")).to_be_disabled()
    expect(a.locator("#play-split")).to_be_enabled()
    a.get_by_label("Show basic-strategy hint").check()
    expect(a.locator(".hint")).to_be_visible()
    b.get_by_role("button", name="Good luck").click()  # a quick reaction, shown at Bob's seat for a moment
    expect(seat(a, 2).locator(".emote-bubble")).to_have_text("Good luck")
    still(a)
    a.screenshot(path=screenshot_dir(tmp_path) / "table.png")

    act(a, a.locator("#play-split").click, b, watcher)
    expect(seat(watcher, 1).locator(".hand")).to_have_count(2)
    expect(seat(a, 1).locator(".hand").first).to_have_class(re.compile("hand-turn"))
    act(a, lambda: a.keyboard.press("s"), b, watcher)
    expect(seat(a, 1).locator(".hand").nth(1)).to_have_class(re.compile("hand-turn"))
    act(a, a.locator("#play-stand").click, b, watcher)

    expect(b.locator("#table-status")).to_contain_text("Your turn")
    act(b, b.locator("#play-double").click, a, watcher)

    # Settlement: every screen shows the dealer's cards and three results (two split hands and the double).
    for page in everyone:
        expect(page.locator("#table-status")).to_contain_text("Round over")
        expect(page.locator("#dealer .card-back")).to_have_count(0)
        expect(page.locator("#seats .result")).to_have_count(3)
    assert seat(watcher, 2).locator(".chip").inner_text().endswith("100"), "the doubled bet"
    assert b.get_by_role("img", name=_card_name(order[1])).count() >= 1
    alice.wallet.refresh_from_db()
    expect(a.locator("#nav-balance")).to_have_text(f"{alice.wallet.balance:,}")
    expect(a.get_by_role("button", name="Deal me in")).to_be_enabled()
    expect(a.locator("#round-banner")).to_be_visible()
    still(a)
    a.screenshot(path=screenshot_dir(tmp_path) / "table-settled.png")
    expect(watcher.locator("#event-log")).to_contain_text("split")


def _card_name(card):
    ranks = {"A": "Ace", "T": "Ten", "J": "Jack", "Q": "Queen", "K": "King"}
    numbers = dict(
        zip("23456789", ("Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"), strict=True)
    )
    suits = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}
    return f"{(ranks | numbers)[card[0]]} of {suits[card[1]]}"


def hard_twelve_to_sixteen(order):
    """One seat with a hard 12-16 (no ace) against a 2-9 up: a hand that can hit without deciding itself."""
    first, up, second = order[:3]
    return (
        1 not in (value(first), value(second))
        and 12 <= value(first) + value(second) <= 16
        and 2 <= value(up) <= 9
    )


@pytest.mark.slow
def test_keyboard_alone(transactional_db, open_page):
    dave = make_player("dave", "Dave")
    table = open_live_table("Keys only")
    stack_shoe(table, hard_twelve_to_sixteen)
    page = open_page(dave)
    page.goto(f"/tables/{table.pk}/")

    focused = _tab_to(page, "#sit-1")
    assert focused == "Sit in seat 1"
    act(page, lambda: page.keyboard.press("Enter"))
    expect(seat(page, 1)).to_contain_text("Dave")

    _tab_to(page, "#bet-amount")
    page.keyboard.press("Control+A")
    page.keyboard.type("40")
    act(page, lambda: page.keyboard.press("Enter"))
    expect(page.locator("#table-status")).to_contain_text("Your turn")
    expect(seat(page, 1).locator(".chip")).to_have_text("Bet 40")

    # The countdown ticks in the browser between server messages.
    seconds = page.locator(".countdown-seconds")
    before = int(seconds.inner_text())
    page.wait_for_timeout(1_300)
    assert int(seconds.inner_text()) < before

    act(page, lambda: page.keyboard.press("h"))
    expect(page.locator("#event-log")).to_contain_text("hits")
    cards = seat(page, 1).get_by_role("img", name=re.compile(" of "))
    expect(cards).to_have_count(3)
    if "Round over" not in page.locator("#table-status").inner_text():
        act(page, lambda: page.keyboard.press("s"))
    expect(page.locator("#table-status")).to_contain_text("Round over")

    # Shortcuts stay quiet while typing in the chat box: the letters go into the message.
    page.get_by_role("textbox", name="Chat message").fill("")
    page.get_by_role("textbox", name="Chat message").press_sequentially("hsdpr")
    page.keyboard.press("Enter")
    expect(page.locator("#chat-log")).to_contain_text("hsdpr")
    expect(page.get_by_role("textbox", name="Chat message")).to_have_value("")


def _tab_to(page, selector, limit=80):
    """Press Tab until `selector` has the focus; return its aria-label."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    raise AssertionError(f"Tab never reached {selector}")


@pytest.mark.slow
def test_many_rounds_in_a_row_keep_every_control_sending(transactional_db, open_page):
    erin = make_player("erin", "Erin")
    table = open_live_table("Marathon", preset="Single deck 6:5")
    page = open_page(erin)
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 4").click)
    page.locator("#bet-amount").fill("20")

    # An action sent with an old version is refused with a message and the fresh state; the next one works.
    # In one call (a locator's `evaluate_all` finds and changes the inputs in two round trips, and a live
    # update swapped in between would leave the fresh inputs untouched).
    page.evaluate("() => document.querySelectorAll('input[name=v]').forEach((input) => (input.value = '0'))")
    page.get_by_role("button", name="Bet", exact=True).click()
    expect(page.locator("#flash")).to_contain_text("changed")
    expect(page.locator('input[name="v"][form="form-bet"]')).to_have_value(version(page))
    expect(seat(page, 4).locator(".chip")).to_have_count(0)
    rounds = 5
    for number in range(1, rounds + 1):
        status = page.locator("#table-status")
        expect(status).to_contain_text(f"round {number}")
        expect(status).to_contain_text("Place your bet")
        act(page, page.get_by_role("button", name="Bet", exact=True).click)
        expect(page.locator("#flash")).to_be_empty()
        # The amount typed once survives every live update (hx-preserve) and is bet again.
        expect(seat(page, 4).locator(".chip").first).to_have_text("Bet 20")
        while "Round over" not in status.inner_text():
            if status.get_attribute("data-phase") == "dealer":  # the dealer's turn is shown: nothing to do
                expect(status).to_contain_text("Round over")
            elif page.locator("#insurance-no").count():
                act(page, page.locator("#insurance-no").click)
            elif page.locator("#even-money-no").count():
                act(page, page.locator("#even-money-no").click)
            else:
                expect(page.locator("#play-stand")).to_be_enabled()
                act(page, page.locator("#play-stand").click)
        expect(page.locator("#seats .result")).not_to_have_count(0)
        act(page, page.get_by_role("button", name="Deal me in").click)
    expect(page.locator("#table-status")).to_contain_text(f"round {rounds + 1}")
    assert int(version(page)) == Table.objects.get(pk=table.pk).version


@pytest.mark.slow
def test_phone_screen_has_no_sideways_scroll_and_big_buttons(transactional_db, open_page, tmp_path):
    frank, gina = make_player("frank", "Frank"), make_player("gina", "Gina Longname-Example", "star")
    table = open_live_table("Pocket table")
    stack_shoe(table, split_and_double)
    phone = {
        "viewport": {"width": 390, "height": 844},
        "device_scale_factor": 2,
        "is_mobile": True,
        "has_touch": True,
    }
    page, other = open_page(frank, **phone), open_page(gina)
    page.goto(f"/tables/{table.pk}/")
    other.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click, other)
    act(other, other.get_by_role("button", name="Sit in seat 2").click, page)
    act(page, page.get_by_role("button", name="Bet", exact=True).click, other)
    act(other, other.get_by_role("button", name="Bet", exact=True).click, page)
    expect(page.locator("#table-status")).to_contain_text("Your turn")

    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    small = page.evaluate(
        """() => [...document.querySelectorAll('main button, main .button')]
            .filter((el) => el.offsetParent !== null)
            .map((el) => [el.id || el.textContent.trim(), el.getBoundingClientRect().height])
            .filter(([, height]) => height < 44)"""
    )
    assert small == []
    # The dealer's cards, the player's hand and the play buttons fit on one screen: the buttons in a bar at
    # the bottom, the hand scrolled into view under the status bar if it was not.
    expect(page.locator(".decision-bar.is-yours #play-hit")).to_be_in_viewport()
    page.wait_for_function(
        """() => {
            const status = document.getElementById('table-status').getBoundingClientRect();
            const bar = document.querySelector('.decision-bar.is-yours').getBoundingClientRect();
            const shown = ['#seats .seat-mine .hand-turn', '#dealer .card']
                .map((selector) => document.querySelector(selector).getBoundingClientRect());
            return bar.bottom <= window.innerHeight
                && shown.every((box) => box.top >= status.bottom && box.bottom <= bar.top);
        }"""
    )
    still(page)
    page.screenshot(path=screenshot_dir(tmp_path) / "table-phone.png", scale="css")

    # A refusal shows on the screen wherever the page is scrolled, and goes away on a tap.
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    page.evaluate("() => document.querySelectorAll('input[name=v]').forEach((input) => (input.value = '0'))")
    page.locator("#play-stand").click()
    expect(page.locator("#flash")).to_contain_text("The table has changed")
    expect(page.locator("#flash .flash-message")).to_be_in_viewport()
    page.locator("#flash .flash-message").tap()
    expect(page.locator("#flash")).to_be_empty()


@pytest.mark.slow
def test_reconnect_restores_the_exact_table(transactional_db, open_page):
    hana, ivan = make_player("hana", "Hana"), make_player("ivan", "Ivan")
    table = open_live_table("Flaky wifi")
    page = open_page(hana)
    sockets = []

    def relay(route):
        route.connect_to_server()
        sockets.append(route)

    page.route_web_socket(re.compile(r"/ws/tables/\d+/"), relay)
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    expect(page.locator("#connection")).to_be_hidden()

    # Ivan sits down while this page's connection is about to drop; no broadcast of it reaches the server (the
    # change is made in the test process), so only the full view sent on reconnecting can show it.
    version_before = Table.objects.get(pk=table.pk).version
    services.perform(
        table_id=table.pk,
        user=ivan,
        action={"action": "sit", "seat": 3, "v": version_before},
        expected_version=version_before,
    )
    page.evaluate("htmx.config.wsReconnectDelay = () => 1500")
    sockets[-1].close(code=1011, reason="test drops the connection")
    expect(page.locator("#connection")).to_be_visible()
    expect(page.locator("#connection")).to_have_text("Reconnecting…")
    expect(page.locator("#connection")).to_be_hidden()
    assert len(sockets) == 2
    expect(seat(page, 3)).to_contain_text("Ivan")
    expect(page.locator("#table-version")).to_have_attribute(
        "data-v", str(Table.objects.get(pk=table.pk).version)
    )

    # The controls still send on the new connection.
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    expect(seat(page, 1).locator(".chip")).to_have_text("Bet 10")

    # A clean close (code 1000: a server restart, a proxy timeout) is not retried by htmx; table.js does it.
    sockets[-1].close(code=1000, reason="going away cleanly")
    for _ in range(100):
        if len(sockets) == 3:
            break
        page.wait_for_timeout(100)
    assert len(sockets) == 3, "table.js reconnects after a clean close"
    expect(page.locator("#connection")).to_be_hidden()
    page.get_by_role("textbox", name="Chat message").fill("back again")
    page.get_by_role("textbox", name="Chat message").press("Enter")
    expect(page.locator("#chat-log")).to_contain_text("back again")


def version_of(table) -> int:
    return Table.objects.values_list("version", flat=True).get(pk=table.pk)


@pytest.mark.slow
def test_a_player_stood_up_for_missed_rounds_is_told_why(transactional_db, open_page):
    kim, lee = make_player("kim", "Kim"), make_player("lee", "Lee")
    table = open_live_table("Idle table")
    page, other = open_page(kim), open_page(lee)
    page.goto(f"/tables/{table.pk}/")
    other.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 2").click, other)
    # Kim lets three betting windows pass (the clock's work, done here: the live server runs none in tests).
    # Without a clock the server's lease on the table is not renewed either: here it is handed back, so the
    # sweep takes the table as one nobody owned (a lapsed owner's would count as dead: its players would be
    # marked gone, their sockets' word being lost with it); the server's actor is fenced on its next command
    # and loads it again.
    Table.objects.filter(pk=table.pk).update(owner="", lease_until=None)
    later = timezone.now()
    for _ in range(3):
        later += timedelta(seconds=LONG_WINDOW + 1)
        assert clock.sweep(now=later) == 1
    assert not Seat.objects.filter(table=table, user=kim).exists()
    notice = page.locator("#seat-notice")
    if fanout.single_process():
        # The clock's changes, made in this test process, did not reach the live server's process (with Redis
        # they do, and the page shows them at once). The next change the server announces brings the page up
        # to date, and the notice says why. (Lee's first try is refused: her page, like Kim's, missed the
        # clock's changes; the refusal brings hers up to date.)
        expect(notice).to_be_hidden()
        other.get_by_role("button", name="Sit in seat 4").click()
        expect(other.locator("#table-version")).to_have_attribute("data-v", str(version_of(table)))
    act(other, other.get_by_role("button", name="Sit in seat 4").click, page)
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("You no longer hold seat 2. Kim missed 3 rounds and leaves seat 2.")
    page.locator("#seat-notice-ok").click()
    expect(notice).to_be_hidden()

    # Leaving on purpose is no news.
    act(other, other.get_by_role("button", name="Leave seat").click, page)
    expect(other.locator("#seat-notice")).to_be_hidden()
