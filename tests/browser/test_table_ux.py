"""What a real session at the table found (issue 25), each in Chromium against a live Daphne server: card
animations, the bet box's chips and rebets, shortcuts after the hint checkbox, limits changed by staff,
split hands on a laptop, betting on a phone, local times, the result banner, sound and the table's extras."""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.browser.table_support import (
    PASSWORD,
    act,
    make_player,
    open_live_table,
    screenshot_dir,
    seat,
    stack_shoe,
    value,
)

pytestmark = [pytest.mark.browser]
expect.set_options(timeout=10_000)

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


def dealt(page) -> int:
    """Deal animations started on `page` since the last call (after the frame that starts them)."""
    page.wait_for_timeout(150)
    return page.evaluate("() => { const n = window.dealAnimations; window.dealAnimations = 0; return n; }")


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


def one_hittable_hand(order):
    first, up, second, _hole, hit = order[:5]
    return hard(first, second) and 2 <= value(up) <= 9 and value(first) + value(second) + value(hit) <= 20


def play_out(page, *watchers):
    """Stand (and decline insurance) until the round is over."""
    status = page.locator("#table-status")
    while "Round over" not in status.inner_text():
        for answer in ("#insurance-no", "#even-money-no", "#early-surrender-no"):
            if page.locator(answer).count():
                act(page, page.locator(answer).click, *watchers)
                break
        else:
            expect(page.locator("#play-stand")).to_be_enabled()
            act(page, page.locator("#play-stand").click, *watchers)


# --- defect 1: only newly dealt cards animate -------------------------------------------------------------


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
    assert dealt(a) == 6  # the deal: two cards each and the dealer's two
    act(a, a.locator("#play-hit").click, b)
    assert dealt(a) == 1
    act(a, a.locator("#play-stand").click, b)
    assert dealt(a) == 0  # the turn moves: no card is dealt
    # Another player's click, with eight cards on the felt: one card slides in on this page, not eight.
    act(b, b.locator("#play-hit").click, a)
    expect(a.locator("#dealer .card, #seats .card")).to_have_count(8)
    assert dealt(a) == 1
    assert dealt(b) == 8  # the other page, over all those updates: each card once


# --- defect 2 and the rebet features: chips, undo, rebet, auto-rebet ---------------------------------------


def test_chips_replace_the_default_then_add_and_rebets_remember_the_last_bet(transactional_db, open_page):
    carol = make_player("carol", "Carol")
    table = open_live_table("Chips")
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
    page.get_by_label("Auto-rebet").check()
    page.get_by_label("Show basic-strategy hint").check()
    page.get_by_role("button", name="Deal me in").click()
    expect(page.locator("#table-status")).not_to_contain_text("Place your bet")
    expect(seat(page, 3).locator(".chip").first).to_have_text("Bet 400")
    page.reload()
    expect(page.get_by_label("Auto-rebet")).to_be_checked()
    expect(page.get_by_label("Show basic-strategy hint")).to_be_checked()
    expect(page.locator("#bet-amount")).to_have_value("400")


# --- defect 3: shortcuts after the hint checkbox --------------------------------------------------------


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


def test_limits_changed_by_staff_reach_the_bet_box_and_the_header(transactional_db, open_page):
    staff = get_user_model().objects.create_user("boss", password=PASSWORD, is_staff=True, is_superuser=True)
    erin = make_player("erin", "Erin")
    table = open_live_table("Raised limits")
    page = open_page(erin)
    page.goto(f"/tables/{table.pk}/")
    expect(page.locator(".table-rules")).to_contain_text("bets 10 to 500")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    expect(page.locator("#bet-amount")).to_have_attribute("max", "500")

    admin = open_page(staff)
    admin.goto(f"/admin/tables/table/{table.pk}/change/")
    admin.get_by_label("Max bet").fill("900")
    admin.get_by_role("button", name="Save", exact=True).click()
    expect(admin.locator(".messagelist")).to_contain_text("changed successfully")

    # The round under way keeps its limits; the next one opens with the new ones.
    page.locator("#bet-amount").fill("50")
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
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
    page.wait_for_function(IN_VIEW, arg=shown, timeout=3_000)
    for hands in (2, 3, 4):
        # By keyboard: a click would let Playwright scroll the button into view its own way.
        act(page, lambda: page.keyboard.press("p"))
        expect(seat(page, 4).locator(".hand")).to_have_count(hands)
    expect(seat(page, 4).locator(".hand").first).to_have_class(re.compile("hand-turn"))
    # Split hands widen the seat instead of stacking: all four stay in view with the dealer and the buttons.
    assert page.evaluate(IN_VIEW, shown)
    # The hands sit side by side inside their seat, their cards inside the seat too.
    assert_inside(seat(page, 4), ".hand, .card")
    page.screenshot(path=screenshot_dir(tmp_path) / "table-split.png")
    for _ in range(4):
        act(page, page.locator("#play-stand").click)
    expect(page.locator("#table-status")).to_contain_text("Round over")
    expect(page.locator("#round-banner")).to_be_in_viewport()
