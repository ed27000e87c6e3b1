"""The player's acting hand stays in view on their turn, above a phone's fixed decision bar: a player in seat
5 of a 390 px phone saw the hint say "Double" with their cards under the bar, the turn having moved to their
next hand (a split hand's turn is a turn of its own). A 1366 px desktop is unchanged."""

import pytest
from playwright.sync_api import expect

from tests.browser.table_support import (
    act,
    make_player,
    open_live_table,
    screenshot_dir,
    seat,
    stack_shoe,
    still,
    value,
)
from tests.browser.test_table_ux import LAPTOP, PHONE

pytestmark = [pytest.mark.browser]
expect.set_options(timeout=10_000)

#: The acting hand's cards are each within the screen, below the sticky status strip and above the decision
#: bar where a phone fixes it at the bottom.
CARDS_IN_VIEW = """() => {
    const cards = [...document.querySelectorAll('#seats .seat-mine .hand-turn .card')];
    const status = document.getElementById('table-status').getBoundingClientRect();
    const bar = document.querySelector('.decision-bar.is-yours');
    const bottom = bar && getComputedStyle(bar).position === 'fixed' ? bar.getBoundingClientRect().top
        : window.innerHeight;
    return cards.length >= 2 && cards.every((card) => {
        const box = card.getBoundingClientRect();
        return box.top >= status.bottom - 1 && box.bottom <= bottom + 1 && box.left >= 0
            && box.right <= window.innerWidth;
    });
}"""

#: The page has stopped scrolling (the same place at two polls in a row).
SCROLL_ENDED = """() => {
    const same = window.lastScrollY === window.scrollY;
    window.lastScrollY = window.scrollY;
    return same;
}"""

WHERE = """() => ({
    cards: [...document.querySelectorAll('#seats .seat-mine .hand-turn .card')]
        .map((card) => [card.getBoundingClientRect().top, card.getBoundingClientRect().bottom]),
    bar: document.querySelector('.decision-bar').getBoundingClientRect().top,
    scrolled: window.scrollY,
})"""


def split_eights_then_elevens(order):
    """Seat 5 alone: two eights against a 3-6 (split), each split hand's next card a three: 11, "Double"."""
    eight, up, other_eight, hole, first_draw, _, second_draw = order[:7]
    return (
        value(eight) == value(other_eight) == 8
        and 3 <= value(up) <= 6
        and value(hole) != 1
        and value(first_draw) == value(second_draw) == 3
    )


def in_view(page) -> None:
    try:
        page.wait_for_function(CARDS_IN_VIEW, timeout=3_000)
    except Exception:
        raise AssertionError(f"the acting hand is not in view: {page.evaluate(WHERE)}") from None


@pytest.mark.slow
@pytest.mark.parametrize(
    "screen",
    [
        pytest.param(PHONE | {"reduced_motion": "reduce"}, id="phone"),
        pytest.param(PHONE, id="phone-motion"),
        pytest.param(LAPTOP, id="desktop"),
    ],
)
def test_each_turn_of_seat_5_brings_its_hand_into_view(
    transactional_db, open_page, tmp_path, request, screen
):
    table = open_live_table("Seat five")
    stack_shoe(table, split_eights_then_elevens)
    page = open_page(make_player("eve", "Eve"), **screen)
    page.goto(f"/tables/{table.pk}/")
    page.check("#hint-toggle")
    act(page, page.get_by_role("button", name="Sit in seat 5").click)
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    expect(page.locator(".hint")).to_contain_text("Split")
    in_view(page)

    act(page, page.locator("#play-split").click)
    expect(page.locator(".hint")).to_contain_text("Double")
    in_view(page)
    # She looks up at the dealer, then doubles: the turn moves to her second hand, in the same seat.
    page.evaluate("window.scrollTo(0, 0)")
    act(page, page.locator("#play-double").click)
    expect(seat(page, 5).locator(".hand").nth(1)).to_have_class("hand hand-turn")
    expect(page.locator(".hint")).to_contain_text("Double")
    in_view(page)
    still(page)
    page.wait_for_function(SCROLL_ENDED, polling=100)
    name = request.node.callspec.id
    page.screenshot(path=screenshot_dir(tmp_path) / f"table-turn-seat-5-{name}.png", scale="css")
    bar = page.locator(".decision-bar")
    if name == "desktop":  # the bar stays under the felt, in the page
        assert bar.evaluate("(e) => getComputedStyle(e).position") == "static"
    else:  # the page can scroll its end above the bar
        padding = page.evaluate("parseFloat(getComputedStyle(document.querySelector('main')).paddingBottom)")
        assert padding >= bar.bounding_box()["height"]
