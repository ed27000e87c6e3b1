"""What a Durak table has from the platform, in real Chromium (issue 31): chat and quick reactions between
two players (one on a 390 px phone), a private table reached only through its invitation link, and staff
closing the table from the admin and opening it again while a player watches it."""

import pytest
from playwright.sync_api import expect

from durak.models import DurakTable
from tests.browser.table_support import make_player
from tests.durak.live.conftest import open_durak_table

pytestmark = [pytest.mark.browser]


def test_players_chat_and_react_at_a_durak_table(transactional_db, open_page):
    nina, omar = make_player("nina", "Nina"), make_player("omar", "Omar")
    table = open_durak_table(nina, name="Chatty", seats=3)
    desk = open_page(nina, viewport={"width": 1100, "height": 900})
    phone = open_page(omar, viewport={"width": 390, "height": 844})
    for page in (desk, phone):
        page.goto(f"/durak/{table.pk}/")
        expect(page.locator("#durak-status")).to_have_attribute("data-v", "0")
    desk.locator("#chat-text").fill("Удачи, good luck")
    desk.locator("#form-chat").get_by_role("button", name="Send").click()
    expect(phone.locator("#chat-log")).to_contain_text("Nina Удачи, good luck")
    phone.locator("#emote-gg").click()
    expect(desk.locator("#emote-log .emote-line").first).to_contain_text("Omar GG")


def test_a_private_table_opens_only_through_its_invitation_link(transactional_db, open_page):
    nina, omar = make_player("nina", "Nina"), make_player("omar", "Omar")
    table = open_durak_table(nina, name="Just us", private=True)
    host = open_page(nina)
    host.goto(f"/durak/{table.pk}/")
    invite = host.locator("#invite-url").inner_text()
    assert invite.endswith(f"/durak/join/{table.private_token}/")
    guest = open_page(omar, viewport={"width": 390, "height": 844})
    response = guest.goto(f"/durak/{table.pk}/")
    assert response.status == 404  # not by its number
    guest.goto("/")
    expect(guest.locator(f'#durak-tables [data-durak-table="{table.pk}"]')).to_have_count(0)  # not listed
    guest.goto(invite)
    expect(guest.locator("#durak-status")).to_have_attribute("data-v", "0")
    guest.locator("#durak-controls").get_by_role("button", name="Sit down").click()
    expect(host.locator("#durak-seats")).to_contain_text("Omar")


def test_staff_close_and_reopen_a_durak_table_from_the_admin_and_its_players_see_it(
    transactional_db, open_page
):
    nina = make_player("nina", "Nina")
    staff = make_player("boss", "Boss")
    type(staff).objects.filter(pk=staff.pk).update(is_staff=True, is_superuser=True)
    table = open_durak_table(nina, name="Closing time")
    player = open_page(nina)
    player.goto(f"/durak/{table.pk}/")
    player.locator("#durak-controls").get_by_role("button", name="Sit down").click()
    expect(player.locator("#durak-status")).to_have_attribute("data-v", "1")
    admin = open_page(staff)
    admin.goto("/admin/durak/duraktable/")
    admin.locator(f'input[name="_selected_action"][value="{table.pk}"]').check()
    admin.locator('select[name="action"]').select_option("close_tables")
    admin.get_by_role("button", name="Run").click()
    expect(admin.locator(".messagelist")).to_be_visible()
    expect(player.locator("#durak-controls")).to_contain_text("This table is closed")
    assert DurakTable.objects.get(pk=table.pk).status == "closed"
    # Staff open it again: the page shows the waiting room, and she may sit down again.
    admin.goto("/admin/durak/duraktable/")
    admin.locator(f'input[name="_selected_action"][value="{table.pk}"]').check()
    admin.locator('select[name="action"]').select_option("reopen_tables")
    admin.get_by_role("button", name="Run").click()
    expect(player.locator("#durak-status")).to_have_attribute("data-status", "waiting")
    expect(player.locator("#durak-controls").get_by_role("button", name="Sit down")).to_be_visible()
