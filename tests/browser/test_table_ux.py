"""What a real session at the table found (issue 25), each in Chromium against a live Daphne server: card
animations, the bet box's chips and rebets, shortcuts after the hint checkbox, limits changed by staff,
split hands on a laptop, betting on a phone, local times, the result banner, sound and the table's extras."""

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from blackjack import operations
from blackjack.engine.rules import RuleSet
from blackjack.engine.strategy import basic_strategy
from blackjack.house_edge import computed_house_edge
from blackjack.models import Seat, Table
from tests.browser.table_support import (
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

LAPTOP = {"viewport": {"width": 1366, "height": 768}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}

COUNT_DEAL_ANIMATIONS = """() => {
    window.dealAnimations = 0;
    document.addEventListener('animationstart', (event) => {
        if (event.animationName === 'deal') { window.dealAnimations += 1; }
    });
}"""


def assert_dealt(page, expected: int) -> None:
    """Exactly `expected` deal animations started on `page` since the last check. They all start in the
    frame after the update: wait for the expected number (however slow the machine), then for any extra."""
    if expected:
        page.wait_for_function("(n) => window.dealAnimations >= n", arg=expected)
    page.wait_for_timeout(250)
    started = page.evaluate("() => { const n = window.dealAnimations; window.dealAnimations = 0; return n; }")
    assert started == expected


def hard(first, second, limit=16) -> bool:
    return 1 not in (value(first), value(second)) and 12 <= value(first) + value(second) <= limit


def two_hittable_hands(order):
    """Seats 1 and 2 hold a hard 12-16 and a hit each that leaves them under 21; the dealer shows 2-9."""
    a1, b1, up, a2, b2, _hole, a_hit, b_hit = order[:8]
    return (
        hard(a1, a2)
        and hard(b1, b2)
        and 2 <= value(up) <= 9
        and value(a1) + value(a2) + value(a_hit) <= 20
        and value(b1) + value(b2) + value(b_hit) <= 20
    )


def any_deal(order):
    return True


def one_hittable_hand(order):
    first, up, second, _hole, hit = order[:5]
    return hard(first, second) and 2 <= value(up) <= 9 and value(first) + value(second) + value(hit) <= 20


def saving(page):
    """Wait for the account to store a preference the page sends (before a reload reads it back)."""
    return page.expect_response(lambda answer: answer.url.endswith("/accounts/preferences/") and answer.ok)


def play_out(page, *watchers):
    """Stand (and decline insurance) until the round is over."""
    status = page.locator("#table-status")
    while "Round over" not in status.inner_text():
        if status.get_attribute("data-phase") == "dealer":  # the server shows the dealer's turn, then the end
            expect(status).to_contain_text("Round over")
            break
        for answer in ("#insurance-no", "#even-money-no", "#early-surrender-no"):
            if page.locator(answer).count():
                act(page, page.locator(answer).click, *watchers)
                break
        else:
            expect(page.locator("#play-stand")).to_be_enabled()
            act(page, page.locator("#play-stand").click, *watchers)


# --- defect 1: only newly dealt cards animate -------------------------------------------------------------


@pytest.mark.slow
def test_only_newly_dealt_cards_animate(transactional_db, open_page):
    alice, bob = make_player("alice", "Alice"), make_player("bob", "Bob")
    table = open_live_table("Animations")
    stack_shoe(table, two_hittable_hands)
    a, b = open_page(alice), open_page(bob)
    for page in (a, b):
        page.goto(f"/tables/{table.pk}/")
        page.evaluate(COUNT_DEAL_ANIMATIONS)
    act(a, a.get_by_role("button", name="Sit in seat 1").click, b)
    act(b, b.get_by_role("button", name="Sit in seat 2").click, a)
    act(a, a.get_by_role("button", name="Bet", exact=True).click, b)
    act(b, b.get_by_role("button", name="Bet", exact=True).click, a)
    expect(a.locator("#seats .card")).to_have_count(4)
    assert_dealt(a, 6)  # the deal: two cards each and the dealer's two
    act(a, a.locator("#play-hit").click, b)
    assert_dealt(a, 1)
    act(a, a.locator("#play-stand").click, b)
    assert_dealt(a, 0)  # the turn moves: no card is dealt
    # Another player's click, with eight cards on the felt: one card slides in on this page, not eight.
    act(b, b.locator("#play-hit").click, a)
    expect(a.locator("#dealer .card, #seats .card")).to_have_count(8)
    assert_dealt(a, 1)
    assert_dealt(b, 8)  # the other page, over all those updates: each card once


# --- defect 2 and the rebet features: chips, undo, rebet, auto-rebet ---------------------------------------


@pytest.mark.slow
def test_chips_replace_the_default_then_add_and_rebets_remember_the_last_bet(transactional_db, open_page):
    carol = make_player("carol", "Carol")
    table = open_live_table("Chips")
    stack_shoe(table, any_deal)  # the same cards on every run
    page = open_page(carol)
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 3").click)
    amount = page.locator("#bet-amount")
    expect(amount).to_have_value("10")  # the minimum, at first
    page.get_by_role("button", name="Add 100").click()
    page.get_by_role("button", name="Add 100").click()
    expect(amount).to_have_value("200")  # not 210: the first chip replaced the minimum
    page.get_by_role("button", name="Add 25").click()
    page.get_by_role("button", name="Undo the last chip").click()
    expect(amount).to_have_value("200")

    # Each denomination has its own colour, and a bet on the felt has its largest chip's colour.
    colours = page.locator(".chip-button").evaluate_all(
        "(chips) => chips.map((chip) => getComputedStyle(chip).backgroundColor)"
    )
    assert len(set(colours)) == len(colours) == 4  # 5, 25, 100, 500 under a 500 maximum
    background = "(el) => getComputedStyle(el).backgroundColor"
    hundred = page.get_by_role("button", name="Add 100").evaluate(background)
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    bet = seat(page, 3).locator(".chip")
    expect(bet).to_have_text("Bet 200")
    assert bet.evaluate(background) == hundred
    play_out(page)
    act(page, page.get_by_role("button", name="Deal me in").click)

    # A new round: the box shows the last bet, and the first chip starts a new amount.
    expect(amount).to_have_value("200")
    page.get_by_role("button", name="Add 5", exact=True).click()
    expect(amount).to_have_value("5")
    page.get_by_role("button", name="Undo the last chip").click()
    expect(amount).to_have_value("200")
    page.get_by_role("button", name="Add 25").click()
    expect(amount).to_have_value("25")
    act(page, page.get_by_role("button", name="Rebet", exact=True).click)  # the last bet, not what is typed
    expect(seat(page, 3).locator(".chip")).to_have_text("Bet 200")
    play_out(page)
    act(page, page.get_by_role("button", name="Deal me in").click)
    act(page, page.get_by_role("button", name="Double and rebet").click)
    expect(seat(page, 3).locator(".chip")).to_have_text("Bet 400")
    play_out(page)

    # Auto-rebet bets the last amount by itself when the next betting window opens; the choice (and the
    # hint checkbox) survive a reload.
    with saving(page):
        page.get_by_label("Auto-rebet").check()
    with saving(page):
        page.get_by_label("Show basic-strategy hint").check()
    page.get_by_role("button", name="Deal me in").click()
    status = page.locator("#table-status")
    expect(status).to_have_attribute("data-round", "4")
    expect(status).not_to_have_attribute("data-phase", "betting")  # nobody clicked Bet
    expect(seat(page, 3).locator(".chip").first).to_have_text("Bet 400")
    page.reload()
    expect(page.get_by_label("Auto-rebet")).to_be_checked()
    expect(page.get_by_label("Show basic-strategy hint")).to_be_checked()
    expect(page.locator("#bet-amount")).to_have_value("400")


# --- defect 3: shortcuts after the hint checkbox --------------------------------------------------------


@pytest.mark.slow
def test_shortcuts_work_after_clicking_the_hint_checkbox(transactional_db, open_page):
    dora = make_player("dora", "Dora")
    table = open_live_table("Keys and hints")
    stack_shoe(table, one_hittable_hand)
    page = open_page(dora)
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    page.get_by_label("Show basic-strategy hint").click()
    expect(page.get_by_label("Show basic-strategy hint")).to_be_focused()
    act(page, lambda: page.keyboard.press("h"))
    expect(seat(page, 1).locator(".card")).to_have_count(3)
    # In a text field the letters are text.
    page.get_by_role("textbox", name="Chat message").press_sequentially("s")
    page.wait_for_timeout(300)
    expect(page.locator("#play-stand")).to_be_enabled()
    page.get_by_label("Show basic-strategy hint").focus()
    act(page, lambda: page.keyboard.press("s"))
    expect(page.locator("#table-status")).to_contain_text("Round over")


# --- defect 4: limits changed by staff reach the bet box --------------------------------------------------


@pytest.mark.slow
def test_limits_changed_by_staff_reach_the_bet_box_and_the_header(transactional_db, open_page):
    erin = make_player("erin", "Erin")
    table = open_live_table("Raised limits")
    stack_shoe(table, any_deal)  # the same cards on every run
    page = open_page(erin)
    page.goto(f"/tables/{table.pk}/")
    expect(page.locator(".table-rules")).to_contain_text("bets 10 to 500")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    expect(page.locator("#bet-amount")).to_have_attribute("max", "500")

    # Staff raise the maximum (what the admin's form does, here in the test's process). The live server runs
    # no clock, so its lease on the table is not renewed: once it lapses (at once, here) nobody owns the table
    # and the edit is written here; the server learns of it from the database when the page next acts (its
    # fenced write misses, it reloads; a stale refusal brings the fresh table).
    Table.objects.filter(pk=table.pk).update(lease_until=timezone.now())
    operations.update_table(table_id=table.pk, max_bet=900)
    page.locator("#bet-amount").fill("50")
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    if not seat(page, 1).locator(".chip").count():
        act(page, page.get_by_role("button", name="Bet", exact=True).click)
    expect(seat(page, 1).locator(".chip")).to_have_text("Bet 50")
    # The round under way keeps its limits; the next one opens with the new ones.
    play_out(page)
    act(page, page.get_by_role("button", name="Deal me in").click)
    expect(page.locator("#controls label[for=bet-amount]")).to_contain_text("10 to 900")
    expect(page.locator("#bet-amount")).to_have_attribute("max", "900")
    expect(page.locator(".table-rules")).to_contain_text("bets 10 to 900")
    page.get_by_role("button", name="Maximum bet, 900").click()
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    expect(seat(page, 1).locator(".chip")).to_have_text("Bet 900")


def assert_inside(outer, selector):
    """Every `selector` element inside `outer` lies within its left and right edges."""
    box = outer.bounding_box()
    lefts_rights = outer.locator(selector).evaluate_all(
        "(elements) => elements.map((el) => el.getBoundingClientRect()).map((b) => [b.left, b.right])"
    )
    assert lefts_rights
    assert min(left for left, _ in lefts_rights) >= box["x"] - 1
    assert max(right for _, right in lefts_rights) <= box["x"] + box["width"] + 1


# --- defect 8: split hands stay on a laptop's screen -------------------------------------------------------


def four_of_a_kind_split(order):
    """One seat splits a pair of 2s to 9s into four hands (each split hand takes its card at its turn); the
    dealer shows 2-9."""
    first, up, second, _hole, third, fourth = order[:6]
    return first[0] == second[0] == third[0] == fourth[0] and 2 <= value(first) <= 9 and 2 <= value(up) <= 9


IN_VIEW = """(selectors) => {
    const top = document.getElementById('table-status').getBoundingClientRect().bottom;
    return selectors.every((selector) => [...document.querySelectorAll(selector)].every((element) => {
        const box = element.getBoundingClientRect();
        return box.top >= top - 1 && box.bottom <= window.innerHeight + 1;
    }));
}"""


@pytest.mark.slow
def test_four_split_hands_keep_dealer_hands_and_buttons_on_a_laptop_screen(
    transactional_db, open_page, tmp_path
):
    gus = make_player("gus", "Gus")
    table = open_live_table("Split four ways")
    stack_shoe(table, four_of_a_kind_split)
    page = open_page(gus, **LAPTOP)
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 4").click)
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    # The turn brings the dealer, the hand and the buttons on the screen together (a smooth scroll).
    shown = ["#dealer .card", "#seats .seat-mine .hand", "#play-hit", "#play-stand"]
    page.wait_for_function(IN_VIEW, arg=shown)
    for hands in (2, 3, 4):
        # By keyboard: a click would let Playwright scroll the button into view its own way.
        act(page, lambda: page.keyboard.press("p"))
        expect(seat(page, 4).locator(".hand")).to_have_count(hands)
    expect(seat(page, 4).locator(".hand").first).to_have_class(re.compile("hand-turn"))
    # Split hands widen the seat instead of stacking: all four stay in view with the dealer and the buttons.
    assert page.evaluate(IN_VIEW, shown)
    # The hands sit side by side inside their seat, their cards inside the seat too.
    assert_inside(seat(page, 4), ".hand, .card")
    still(page)
    page.screenshot(path=screenshot_dir(tmp_path) / "table-split.png")
    for _ in range(4):
        act(page, page.locator("#play-stand").click)
    expect(page.locator("#table-status")).to_contain_text("Round over")
    expect(page.locator("#round-banner")).to_be_in_viewport()


# --- defect 7: the status strip, long hands, long names, the daily grant ----------------------------------


def sixteen_against_a_ten(order):
    first, up, second, hole = order[:4]
    return hard(first, second) and value(up) == 10 and value(hole) != 1


@pytest.mark.slow
def test_an_early_surrender_window_says_so(transactional_db, open_page):
    rules = RuleSet().to_dict() | {"surrender": "early"}
    table = open_live_table("Early out", preset="Early surrender 6 decks", rules=rules)
    stack_shoe(table, sixteen_against_a_ten)
    page = open_page(make_player("hal", "Hal"))
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    status = page.locator("#table-status")
    expect(status).to_contain_text("Early surrender?")
    expect(status).to_contain_text("Surrender now or play on?")
    expect(status).not_to_contain_text("insurance")
    expect(page.locator("#early-surrender-yes")).to_be_visible()


def five_small_cards(order):
    first, up, second, _hole, *hits = order[:7]
    cards = [first, second, *hits]
    return 1 not in map(value, cards) and sum(map(value, cards)) <= 20 and 2 <= value(up) <= 9


LONG_NAME = "Bartholomew Featherstonehaugh-Smythe"


@pytest.mark.slow
def test_five_cards_and_a_long_name_fit_their_seat_on_a_desktop(transactional_db, open_page):
    # Seven seats share the felt's width alike, taken or not.
    table = open_live_table("Crowded seats")
    stack_shoe(table, five_small_cards)
    page = open_page(make_player("bart", LONG_NAME), viewport={"width": 1366, "height": 900})
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    page.locator("#bet-amount").fill("10")
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    for _ in range(3):
        act(page, page.locator("#play-hit").click)
    expect(seat(page, 1).locator(".card")).to_have_count(5)
    assert_inside(seat(page, 1), ".card")
    name = seat(page, 1).locator(".seat-name")
    expect(name).to_have_text(LONG_NAME)
    assert name.evaluate("(el) => el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight")


@pytest.mark.slow
def test_the_daily_grant_button_looks_unavailable_when_it_is(transactional_db, open_page):
    page = open_page(make_player("ivy", "Ivy"))  # 10,000 chips: well above the grant's floor
    page.goto("/accounts/profile/")
    button = page.get_by_role("button", name="Claim daily grant")
    expect(button).to_be_disabled()
    assert button.evaluate("(el) => Number(getComputedStyle(el).opacity)") < 0.6
    expect(page.locator("#grant-help")).to_contain_text("Available once a day")


# --- defect 9: betting on a phone -------------------------------------------------------------------------

BET_BOX_CLEAR = """() => {
    const status = document.getElementById('table-status').getBoundingClientRect();
    const parts = ['#bet-amount', '.chip-button', '#bet-1', '[data-bet-set=undo]']
        .flatMap((selector) => [...document.querySelectorAll(selector)])
        .map((element) => element.getBoundingClientRect());
    return parts.length > 4 && parts.every((box) => box.top >= 0 && box.bottom <= window.innerHeight
        && box.right <= window.innerWidth && (box.top >= status.bottom || box.bottom <= status.top));
}"""


@pytest.mark.slow
def test_a_phone_bets_from_the_bottom_bar_wherever_the_page_is_scrolled(
    transactional_db, open_page, tmp_path
):
    table = open_live_table("Pocket bets")
    stack_shoe(table, one_hittable_hand)  # after the bet: a hand to play, no insurance
    page = open_page(make_player("jo", "Jo"), **PHONE)
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    for scroll in ("0", "document.body.scrollHeight / 2", "document.body.scrollHeight"):
        page.evaluate(f"window.scrollTo(0, {scroll})")
        page.wait_for_function(BET_BOX_CLEAR)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.evaluate("window.scrollTo(0, 0)")
    still(page)
    page.screenshot(path=screenshot_dir(tmp_path) / "table-phone-bet.png", scale="css")
    page.get_by_role("button", name="Add 25").tap()
    page.get_by_role("button", name="Add 25").tap()
    act(page, page.get_by_role("button", name="Bet", exact=True).tap)
    expect(seat(page, 1).locator(".chip")).to_have_text("Bet 50")
    # Once the bet is in, the bar carries the play decisions instead.
    expect(page.locator(".decision-bar.is-yours #play-stand")).to_be_in_viewport()
    expect(page.locator("#bet-amount")).to_be_hidden()


# --- defect 10: times in the viewer's time zone ----------------------------------------------------------


@pytest.mark.slow
def test_times_show_in_the_viewers_time_zone(transactional_db, open_page):
    table = open_live_table("Tokyo time")
    kim = make_player("kim", "Kim")
    page = open_page(kim, timezone_id="Asia/Tokyo", locale="en-GB")
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)  # a live update adds log lines
    page.get_by_role("textbox", name="Chat message").fill("konnichiwa")
    page.get_by_role("textbox", name="Chat message").press("Enter")
    expect(page.locator("#chat-log")).to_contain_text("konnichiwa")
    times = page.locator("#event-log time, #chat-log time")
    expect(times.first).to_have_attribute("data-localized", "")
    for moment, shown, title in times.evaluate_all(
        "(times) => times.map((t) => [t.getAttribute('datetime'), t.textContent, t.title])"
    ):
        at = datetime.fromisoformat(moment)
        assert shown == at.astimezone(ZoneInfo("Asia/Tokyo")).strftime("%H:%M:%S")
        assert title == at.astimezone(UTC).strftime("%H:%M:%S UTC")
    page.goto("/accounts/profile/")
    entry = page.locator("td time").first
    at = datetime.fromisoformat(entry.get_attribute("datetime"))
    expect(entry).to_contain_text(at.astimezone(ZoneInfo("Asia/Tokyo")).strftime("%H:%M"))


@pytest.mark.slow
def test_the_history_list_shows_times_in_the_viewers_time_zone(transactional_db, open_page):
    table = open_live_table("Tokyo history")
    stack_shoe(table, one_hittable_hand)
    ren = make_player("ren", "Ren")
    page = open_page(ren, timezone_id="Asia/Tokyo", locale="en-GB")
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    act(page, page.locator("#play-stand").click)
    expect(page.locator("#table-status")).to_contain_text("Round over")
    rows = page.locator(".history-table tbody tr")
    for _ in range(20):  # the history is recorded after the settlement commits, maybe a moment after
        page.goto("/history/")
        if rows.count():
            break
        page.wait_for_timeout(250)
    day, clock = rows.first.locator("time").all()
    at = datetime.fromisoformat(clock.get_attribute("datetime")).astimezone(ZoneInfo("Asia/Tokyo"))
    expect(clock).to_have_text(at.strftime("%H:%M"))
    expect(day).to_have_text(f"{at.day} {at.strftime('%b %Y')}")
    assert clock.get_attribute("title").endswith("UTC")


# --- features: the result banner, sound and vibration, the strategy chart, the house edge, the invite ------


@pytest.mark.slow
def test_the_result_banner_shows_the_rounds_net_for_the_viewer(transactional_db, open_page):
    lea = make_player("lea", "Lea")
    table = open_live_table("Banner")
    stack_shoe(table, one_hittable_hand)
    page, watcher = open_page(lea), open_page()
    page.goto(f"/tables/{table.pk}/")
    watcher.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click, watcher)
    page.locator("#bet-amount").fill("40")
    act(page, page.get_by_role("button", name="Bet", exact=True).click, watcher)
    expect(page.locator("#round-banner")).to_have_count(0)
    act(page, page.locator("#play-stand").click, watcher)
    expect(page.locator("#table-status")).to_contain_text("Round over")
    lea.wallet.refresh_from_db()
    net = lea.wallet.balance - 10_000
    banner = page.locator("#round-banner")
    expect(banner).to_be_visible()
    label = {1: "You win", -1: "You lose", 0: "Push"}[(net > 0) - (net < 0)]
    sign = "+" if net > 0 else "\u2212" if net < 0 else ""
    expect(banner).to_have_text(f"{label} {sign}{abs(net)}")
    expect(watcher.locator("#round-banner")).to_have_count(0)  # a spectator has no result
    act(page, page.get_by_role("button", name="Deal me in").click, watcher)
    expect(page.locator("#round-banner")).to_have_count(0)


# --- the dealer's turn: the hole card, then each draw at a readable pace, then the result -----------------

RECORD_FRAMES = """() => {
    // Every state the page is shown, as (phase, face-up dealer cards, banner shown, results shown, when):
    // noted after each change of the page, in the same task as the change (not by polling, which a busy
    // machine could delay into the next frame).
    window.frames = [];
    let last = '';
    const look = () => {
        const status = document.getElementById('table-status');
        const frame = [
            status.dataset.phase,
            document.querySelectorAll('#dealer .card:not(.card-back)').length,
            Boolean(document.getElementById('round-banner')),
            document.querySelectorAll('#seats .result').length,
        ];
        const key = JSON.stringify(frame);
        if (key !== last) { last = key; window.frames.push([...frame, performance.now()]); }
    };
    look();
    window.animated = {};  // animations started, by name: a card dealt, a card turned over
    document.addEventListener('animationstart', (event) => {
        window.animated[event.animationName] = (window.animated[event.animationName] || 0) + 1;
    });
    window.frameRecorder = new MutationObserver(look);
    window.frameRecorder.observe(document.body, { subtree: true, childList: true, attributes: true });
}"""


def dealer_draws_twice(order):
    """Seats 1 and 2 stand on a hard 12-20; the dealer (2-9 up, no ace) is under 17 after a first draw."""
    a1, b1, up, a2, b2, hole, first_draw = order[:7]
    return (
        hard(a1, a2, 20)
        and hard(b1, b2, 20)
        and 2 <= value(up) <= 9
        and 1 not in (value(hole), value(first_draw))
        and value(up) + value(hole) + value(first_draw) < 17
    )


@pytest.mark.slow
def test_the_dealer_turns_the_hole_card_then_draws_one_by_one_then_the_banner(transactional_db, open_page):
    ada, ben = make_player("ada", "Ada"), make_player("ben", "Ben")
    table = open_live_table("Dealer's turn")
    stack_shoe(table, dealer_draws_twice)
    a, b = open_page(ada), open_page(ben)
    for page in (a, b):
        page.goto(f"/tables/{table.pk}/")
    act(a, a.get_by_role("button", name="Sit in seat 1").click, b)
    act(b, b.get_by_role("button", name="Sit in seat 2").click, a)
    act(a, a.get_by_role("button", name="Bet", exact=True).click, b)
    act(b, b.get_by_role("button", name="Bet", exact=True).click, a)
    act(a, a.locator("#play-stand").click, b)
    expect(a.locator("#dealer .card-back")).to_have_count(1)
    a.evaluate(RECORD_FRAMES)
    act(b, b.locator("#play-stand").click, a)
    expect(a.locator("#round-banner")).to_be_visible()
    expect(a.locator("#seats .result").first).to_be_visible()
    frames = a.evaluate("() => { window.frameRecorder.disconnect(); return window.frames; }")
    cards = a.locator("#dealer .card").count()
    assert cards >= 4, "the hole card and at least two draws"
    # The server's frames, in order: the up card alone, then the hole card turned, each draw (the `dealer`
    # phase: no banner, no results), then the settled round with its results and the banner.
    shown = [frame[:4] for frame in frames]
    dealer = [["dealer", face_up, False, 0] for face_up in range(2, cards + 1)]
    assert shown[:-1] == [["playing", 1, False, 0], *dealer], shown
    assert shown[-1][:3] == ["settled", cards, True]
    assert shown[-1][3] > 0  # the hands' results
    # The server's pace (0.75 s a card), not all at once: frame n of the dealer's turn is due n * 750 ms after
    # the settling click, and the recording started before that click, so none may be shown sooner after the
    # recording's start (a busy machine only delays frames, so this bound holds however loaded it is).
    start = frames[0][4]
    early = [(n, round(at - start)) for n, (*_, at) in enumerate(frames[1:]) if at < start + 750 * n - 50]
    assert not early, early
    # Only the newly shown card animates in each frame: the hole card turns over, each draw is dealt, once.
    animated = a.evaluate("() => window.animated")
    assert (animated.get("flip"), animated.get("deal")) == (1, cards - 2), animated

    # A later update of the settled round (Ben is ready) shows everything at once: no replay.
    a.evaluate(COUNT_DEAL_ANIMATIONS)
    act(b, b.get_by_role("button", name="Deal me in").click, a)
    expect(seat(a, 2).locator(".badge-ready")).to_be_visible()
    assert a.locator("#round-banner").is_visible()
    a.wait_for_timeout(250)
    assert a.evaluate("() => window.dealAnimations") == 0


@pytest.mark.slow
def test_long_names_end_in_an_ellipsis_on_a_phone_without_breaking_the_seats(transactional_db, open_page):
    long_name = "Maximiliana Wolkenstein-Rodenegg"
    wolf, ann = make_player("wolf", long_name), make_player("ann", "Ann")
    table = open_live_table("Long names")
    stack_shoe(table, two_hittable_hands)  # no ace up: the turn goes to seat 1 at once
    page, other = open_page(wolf, **PHONE), open_page(ann, **PHONE)
    page.goto(f"/tables/{table.pk}/")
    other.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click, other)
    act(other, other.get_by_role("button", name="Sit in seat 2").click, page)
    name = seat(page, 1).locator(".seat-name")
    expect(name).to_have_text(long_name)  # the whole name is there (and in the seat's label) ...
    assert name.evaluate("(e) => getComputedStyle(e).textOverflow") == "ellipsis"
    assert name.evaluate("(e) => e.scrollWidth > e.clientWidth"), "... and cut with an ellipsis"
    first, second = (seat(page, n).bounding_box() for n in (1, 2))
    assert abs(first["width"] - second["width"]) < 2, "the long name does not widen its seat"
    assert abs(first["y"] - second["y"]) < 2, "the two seats stay side by side"
    assert first["x"] + first["width"] <= second["x"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # Waiting for the long name's turn, the other phone's sticky status strip keeps the name to one line.
    act(page, page.get_by_role("button", name="Bet", exact=True).click, other)
    act(other, other.get_by_role("button", name="Bet", exact=True).click, page)
    waiting = other.locator(".status-turn")
    expect(waiting).to_contain_text("Waiting for")
    shown = waiting.locator(".status-name")
    expect(shown).to_have_attribute("title", long_name)
    assert shown.evaluate("(e) => e.scrollWidth > e.clientWidth"), "the name ends in an ellipsis"
    line = waiting.evaluate("(e) => parseFloat(getComputedStyle(e).lineHeight)")
    assert waiting.bounding_box()["height"] < 1.5 * line, "one line"


# --- quick emotes, taking another seat and leaving one of several ------------------------------------------


STILL_SHOWN_IF_DUE = """() => {
    const line = document.querySelector('#emote-log li');
    const bubble = document.querySelector('#seats [data-seat="1"] .emote-bubble');
    return Date.now() >= Number(line.dataset.until) || (bubble !== null && bubble.textContent === 'GG');
}"""


@pytest.mark.slow
def test_an_emote_shows_at_the_senders_seat_for_everyone_and_in_the_log(transactional_db, open_page):
    ida, jon = make_player("ida", "Ida"), make_player("jon", "Jon")
    table = open_live_table("Emotes")
    a, b, watcher = open_page(ida), open_page(jon), open_page()
    for page in (a, b, watcher):
        page.goto(f"/tables/{table.pk}/")
    act(a, a.get_by_role("button", name="Sit in seat 1").click, b, watcher)
    expect(watcher.locator(".emote-button")).to_have_count(0)  # spectators only watch
    before = version(a)
    a.get_by_role("button", name="GG").click()
    for page in (a, b, watcher):
        expect(seat(page, 1).locator(".emote-bubble")).to_have_text("GG")
        expect(page.locator("#emote-log li").first).to_contain_text("Ida")
        expect(page.locator("#emote-log li").first).to_contain_text("GG")
    assert version(a) == before  # ephemeral: the table's version did not move
    # An update replaces the seats: the bubble stays for its few seconds (drawn again on the new seats, if
    # the update came within them: the machine may be slow), then goes; the log keeps the line.
    act(b, b.get_by_role("button", name="Sit in seat 2").click, a, watcher)
    assert watcher.evaluate(STILL_SHOWN_IF_DUE)
    expect(seat(watcher, 1).locator(".emote-bubble")).to_have_count(0, timeout=8000)
    expect(watcher.locator("#emote-log li")).to_have_count(1)


def test_take_another_seat_then_leave_one_of_them(transactional_db, open_page):
    kim = make_player("kim", "Kim")
    table = open_live_table("Two seats")
    page = open_page(kim)
    page.goto(f"/tables/{table.pk}/")
    expect(page.get_by_role("button", name=re.compile("^Sit in seat"))).to_have_count(7)
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    # Holding a seat, the open ones offer to take another one, not to "Sit".
    expect(page.get_by_role("button", name=re.compile("^Sit in seat"))).to_have_count(0)
    expect(page.get_by_role("button", name="Take seat 3 as well")).to_have_text("+ Take")
    expect(page.locator(".take-note")).to_be_visible()
    act(page, page.get_by_role("button", name="Take seat 3 as well").click)
    expect(seat(page, 3)).to_have_class(re.compile("seat-mine"))
    # At the table's limit of seats (2) no seat is offered any more.
    expect(page.locator(".take-seat")).to_have_count(0)
    expect(page.get_by_role("button", name="Leave all seats")).to_be_enabled()
    act(page, page.get_by_role("button", name="Leave seat 1").click)
    expect(seat(page, 1)).not_to_have_class(re.compile("seat-mine"))
    expect(seat(page, 3)).to_have_class(re.compile("seat-mine"))
    expect(page.locator("#seat-notice")).to_be_hidden()  # the player left it: no "you no longer hold" notice
    expect(page.get_by_role("button", name="Leave seat", exact=True)).to_be_enabled()
    expect(page.locator(".leave-seat")).to_have_count(0)
    assert list(Seat.objects.filter(table=table, user=kim).values_list("number", flat=True)) == [3]


@pytest.mark.slow
def test_preferences_follow_the_player_to_another_browser(transactional_db, open_page):
    liv = make_player("liv", "Liv")
    table = open_live_table("Preferences")
    first = open_page(liv)
    first.goto(f"/tables/{table.pk}/")
    with saving(first):
        first.get_by_label("Show basic-strategy hint").check()
    with saving(first):
        first.get_by_label("Auto-rebet").check()
    with saving(first):
        first.locator("#sound-toggle").click()
    second = open_page(liv)  # another browser: nothing of the first one's storage
    second.goto(f"/tables/{table.pk}/")
    expect(second.get_by_label("Show basic-strategy hint")).to_be_checked()
    expect(second.get_by_label("Auto-rebet")).to_be_checked()
    expect(second.locator("#sound-toggle")).to_have_attribute("aria-pressed", "true")
    with saving(second):
        second.get_by_label("Auto-rebet").uncheck()
    first.reload()
    expect(first.get_by_label("Auto-rebet")).not_to_be_checked()
    expect(first.get_by_label("Show basic-strategy hint")).to_be_checked()


RECORD_SOUND_AND_VIBRATION = """
    window.oscillators = 0;
    window.vibrations = [];
    const create = AudioContext.prototype.createOscillator;
    AudioContext.prototype.createOscillator = function () {
        window.oscillators += 1;
        return create.call(this);
    };
    const vibrate = (pattern) => { window.vibrations.push(pattern); return true; };
    Object.defineProperty(navigator, 'vibrate', { value: vibrate });
"""


@pytest.mark.slow
def test_sound_is_off_until_turned_on_and_the_choice_is_remembered(transactional_db, open_page):
    max_ = make_player("max", "Max")
    table = open_live_table("Sounds")
    stack_shoe(table, one_hittable_hand)
    page = open_page(max_)
    page.add_init_script(RECORD_SOUND_AND_VIBRATION)
    page.goto(f"/tables/{table.pk}/")
    toggle = page.locator("#sound-toggle")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    act(page, page.get_by_role("button", name="Bet", exact=True).click)  # the deal and the turn: silent
    expect(page.locator("#play-hit")).to_be_enabled()
    page.wait_for_function("window.vibrations.length > 0")  # the turn vibrates (sound on or off)
    assert page.evaluate("window.vibrations") == [150]
    assert page.evaluate("window.oscillators") == 0
    with saving(page):
        toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(toggle).to_have_text("Sound on")
    act(page, page.locator("#play-hit").click)  # a card: a tick
    page.wait_for_function("window.oscillators >= 1")
    act(page, page.locator("#play-stand").click)  # the result: a chord, unless a push
    page.reload()
    expect(page.locator("#sound-toggle")).to_have_attribute("aria-pressed", "true")
    with saving(page):
        page.locator("#sound-toggle").click()
    page.reload()
    expect(page.locator("#sound-toggle")).to_have_text("Sound off")


@pytest.mark.slow
def test_the_strategy_chart_opens_at_the_table_for_its_rules(transactional_db, open_page, tmp_path):
    table = open_live_table("Downtown chart", preset="Downtown")
    chart = basic_strategy(table.ruleset()).chart()
    page = open_page(make_player("ned", "Ned"), viewport={"width": 1366, "height": 900})
    page.goto(f"/tables/{table.pk}/")
    expect(page.locator(".table-rules")).to_contain_text(
        f"house edge {computed_house_edge(table.ruleset().to_dict()):.2f}%"
    )
    page.get_by_role("button", name="Strategy chart").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    hard_table = dialog.get_by_role("table", name="Hard totals")
    expect(hard_table.locator("tbody tr")).to_have_count(len(chart["hard"]))
    sixteen = hard_table.locator("tbody tr").nth(list(chart["hard"]).index("16")).locator("td")
    expect(sixteen).to_have_text([chart["hard"]["16"][up] for up in chart["upcards"]])
    still(page)
    page.screenshot(path=screenshot_dir(tmp_path) / "table-strategy.png")
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()


def test_the_lobby_shows_every_tables_house_edge(transactional_db, open_page):
    tables = [open_live_table(name, preset=name) for name in ("Vegas Strip", "European", "Single deck 6:5")]
    page = open_page()
    page.goto("/")
    for table in tables:
        row = page.locator(f'#lobby-tables li[data-table="{table.pk}"]')
        expect(row.locator(".house-edge")).to_have_text(
            f"{computed_house_edge(table.ruleset().to_dict()):.2f}%"
        )


def test_a_private_tables_invite_link_is_copied_with_one_click(transactional_db, open_page, live_site):
    owner = make_player("olga", "Olga")
    table = open_live_table("Friends only", is_private=True, created_by=owner)
    page = open_page(owner, permissions=["clipboard-read", "clipboard-write"])
    page.goto(f"/tables/{table.pk}/")
    page.get_by_role("button", name="Copy the invite link").click()
    expect(page.get_by_role("button", name="Copy the invite link")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{live_site}/tables/join/{table.private_token}/"
