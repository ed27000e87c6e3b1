"""The header's balance follows chips that move outside a table (issue 25, defect 6), in Chromium against a
live Daphne server: a daily grant claimed in one tab shows at once, without a reload, in the player's other
tabs (the table page's header and "Your chips", the lobby's header); another player's page does not change."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from accounts import services as accounts_services
from tests.browser.table_support import make_player, open_live_table

pytestmark = [pytest.mark.browser]
expect.set_options(timeout=10_000)


def live(page, path: str) -> None:
    """Open `path` and wait for its websocket's first frame: by then the socket is in its user's group."""
    frames = []
    page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: frames.append(frame)))
    page.goto(path)
    for _ in range(200):
        if frames:
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"no websocket frame on {path} within 10 s")


@pytest.mark.slow
def test_a_grant_in_another_tab_updates_the_header_without_reload(transactional_db, open_page):
    staff = make_player("pitboss")
    staff.is_staff = True
    staff.save(update_fields=["is_staff"])
    kim, lee = make_player("kim", "Kim"), make_player("lee", "Lee")
    # Off this thread, whose event loop (Playwright's) the adjustment's notice cannot be sent from.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(
            accounts_services.adjust, user=kim, amount=-9_600, staff=staff, reason="below the grant's floor"
        ).result()
    table = open_live_table("Grant table")

    at_table = open_page(kim)
    live(at_table, f"/tables/{table.pk}/")
    expect(at_table.locator("#nav-balance")).to_have_text("400")
    expect(at_table.locator("#your-chips")).to_have_text("400")
    lobby = at_table.context.new_page()
    live(lobby, "/")
    expect(lobby.locator("#nav-balance")).to_have_text("400")
    watcher = open_page(lee)
    live(watcher, f"/tables/{table.pk}/")
    expect(watcher.locator("#nav-balance")).to_have_text("10,000")

    profile = at_table.context.new_page()
    profile.goto("/accounts/profile/")
    profile.locator("#claim-grant").click()
    expect(profile.locator("#profile-balance")).to_have_text("1,000")

    expect(at_table.locator("#nav-balance")).to_have_text("1,000")
    expect(at_table.locator("#nav-balance")).to_have_attribute("data-balance", "1000")
    expect(at_table.locator("#your-chips")).to_have_text("1,000")
    expect(lobby.locator("#nav-balance")).to_have_text("1,000")
    expect(watcher.locator("#nav-balance")).to_have_text("10,000")
