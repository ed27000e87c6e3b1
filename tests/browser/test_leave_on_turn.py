"""Leaving on your own turn in real Chromium: the page asks first; "no" sends nothing, "yes" stands the hand
at once and the seat is freed when the round is over."""

import pytest
from playwright.sync_api import expect

from blackjack.models import Seat, TableEvent
from tests.browser.table_support import act, log_in, make_player, open_live_table, seat, stack_shoe, value

pytestmark = [pytest.mark.browser]
expect.set_options(timeout=10_000)


def hard_hand_against_a_low_card(order):
    """Seat 1 holds two cards without an ace (no blackjack); the dealer shows a 2 to 9 (no insurance, no
    peek)."""
    first, up, second = order[:3]
    return value(first) != 1 and value(second) != 1 and 2 <= value(up) <= 9


@pytest.mark.slow
def test_leaving_on_your_own_turn_asks_then_stands_the_hand(transactional_db, page, live_site):
    kim = make_player("kim", "Kim")
    table = open_live_table("Leave on turn")
    stack_shoe(table, hard_hand_against_a_low_card)
    log_in(page.context, kim, live_site)
    page.goto(f"/tables/{table.pk}/")
    act(page, page.get_by_role("button", name="Sit in seat 1").click)
    page.locator("#bet-amount").fill("100")
    act(page, page.get_by_role("button", name="Bet", exact=True).click)
    expect(page.locator("#table-status")).to_contain_text("Your turn")
    leave = page.get_by_role("button", name="Leave seat")
    asked = []

    def answer(accept):
        def handle(dialog):
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()

        return handle

    # "No": nothing is sent. The chat message sent after it on the same socket arrives, so a leave sent
    # before it would have been applied by then.
    page.once("dialog", answer(False))
    leave.click()
    page.get_by_role("textbox", name="Chat message").fill("still here")
    page.get_by_role("textbox", name="Chat message").press("Enter")
    expect(page.locator("#chat-log")).to_contain_text("still here")
    assert asked == ["Leave now? Your hand stands."]
    assert not Seat.objects.get(table=table, number=1).leaving_after_round
    expect(page.locator("#table-status")).to_contain_text("Your turn")

    # "Yes": the hand stands at once, the dealer plays, and the seat is free.
    page.once("dialog", answer(True))
    act(page, leave.click)
    assert asked == ["Leave now? Your hand stands."] * 2
    expect(seat(page, 1)).not_to_contain_text("Kim")
    assert TableEvent.objects.filter(table=table, text="Kim stands on leaving (seat 1).").exists()
    assert not Seat.objects.filter(table=table, user=kim).exists()
