"""The staff admin in real Chromium: staff change a table's limits in the admin and a player's lobby shows
them live, without reloading; screenshots of the admin pages this project changed."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from accounts.models import LedgerEntry
from blackjack.models import RulePreset, Table
from tests.browser.table_support import (
    PASSWORD,
    log_in,
    make_player,
    open_live_table,
    screenshot_dir,
    snapshot,
)

pytestmark = [pytest.mark.browser]
expect.set_options(timeout=10_000)


@pytest.fixture
def open_page(browser, live_site):
    contexts = []

    def open_as(user):
        context = browser.new_context(base_url=live_site, viewport={"width": 1280, "height": 900})
        contexts.append(context)
        log_in(context, user, live_site)
        return context.new_page()

    yield open_as
    for context in contexts:
        for page in context.pages:
            page.close()
        context.close()


@pytest.mark.slow
def test_staff_change_limits_and_the_lobby_shows_them_live(transactional_db, open_page, tmp_path):
    staff = get_user_model().objects.create_user(
        "pitboss", password=PASSWORD, is_staff=True, is_superuser=True
    )
    main = open_live_table("Main floor")
    open_live_table("Euro corner", preset="European")
    RulePreset.objects.filter(name="European").update(
        house_edge=0.61, house_edge_stderr=0.21, house_edge_rounds=300_000
    )
    shots = screenshot_dir(tmp_path)

    lobby = open_page(make_player("kim", "Kim"))
    lobby.goto("/")
    row = lobby.locator(f'#lobby-tables li[data-table="{main.pk}"]')
    expect(row).to_contain_text("10\u2013500")
    lobby.evaluate("window.__notReloaded = true")

    admin = open_page(staff)
    admin.goto(f"/admin/tables/table/{main.pk}/change/")
    admin.get_by_label("Min bet").fill("25")
    admin.get_by_label("Max bet").fill("2500")
    admin.get_by_role("button", name="Save", exact=True).click()
    expect(admin.locator(".messagelist")).to_contain_text("changed successfully")

    expect(row).to_contain_text("25\u20132,500")
    assert lobby.evaluate("window.__notReloaded") is True  # updated over the websocket, not reloaded
    assert (Table.objects.get(pk=main.pk).min_bet, Table.objects.get(pk=main.pk).max_bet) == (25, 2_500)

    # A limit above the site-wide cap is refused on the form, and the lobby keeps the saved limits.
    admin.goto(f"/admin/tables/table/{main.pk}/change/")
    admin.get_by_label("Max bet").fill("5000000")
    admin.get_by_role("button", name="Save", exact=True).click()
    expect(admin.locator(".errorlist")).to_contain_text("site-wide cap")
    snapshot(admin, shots / "admin-table-error.png")
    expect(row).to_contain_text("25\u20132,500")

    admin.goto("/admin/tables/table/")
    expect(admin.locator("#result_list")).to_contain_text("0 of 7")
    snapshot(admin, shots / "admin-tables.png")
    admin.goto("/admin/tables/rulepreset/")
    expect(admin.locator("#result_list")).to_contain_text("+0.61% ± 0.21% (300,000 rounds)")
    snapshot(admin, shots / "admin-presets.png")

    # A refused rule combination shows the engine's message on the preset form.
    admin.goto("/admin/tables/rulepreset/add/")
    admin.get_by_label("Name").fill("Broken")
    admin.get_by_label("Dealer peek").uncheck()
    admin.get_by_label("Surrender").select_option("early")
    admin.get_by_role("button", name="Save", exact=True).click()
    expect(admin.locator(".errorlist")).to_contain_text("early surrender is offered before the dealer's peek")
    snapshot(admin, shots / "admin-preset-error.png")
    assert not RulePreset.objects.filter(name="Broken").exists()

    kim = get_user_model().objects.get(username="kim")
    admin.goto("/admin/accounts/user/")
    admin.locator(f'input[name="_selected_action"][value="{kim.pk}"]').check()
    admin.locator('select[name="action"]').select_option("adjust_balance")
    admin.get_by_role("button", name="Run").click()
    expect(admin.get_by_label("Amount")).to_be_visible()
    snapshot(admin, shots / "admin-adjust.png")
    admin.get_by_label("Amount").fill("500")
    admin.get_by_label("Reason").fill("Welcome back")
    admin.get_by_role("button", name="Apply to 1 user").click()
    expect(admin.locator(".messagelist")).to_contain_text(
        "Kim: +500 chips (Welcome back)"
    )  # admin messages are capfirst
    entry = LedgerEntry.objects.get(kind="adjustment", wallet__user=kim)
    assert (entry.amount, entry.created_by) == (500, staff)
