import re

import pytest

pytestmark = [pytest.mark.browser]
SCREENSHOT = "/tmp/blackjack-profile-after-register.png"
PHONE_SCREENSHOT = "/tmp/blackjack-profile-after-register-phone.png"


def test_new_player_registers_and_sees_starting_chips(transactional_db, page):
    page.goto("/accounts/register/")
    page.get_by_label("Username").fill("chromium_player")
    page.get_by_label("Email").fill("chromium@example.com")
    page.locator("#id_password1").fill("Soft-seventeen-81")
    page.locator("#id_password2").fill("Soft-seventeen-81")
    page.get_by_role("button", name="Sign up").click()

    page.wait_for_url(re.compile(r"/accounts/profile/$"))
    assert page.locator("h1").inner_text() == "chromium_player"
    assert page.locator("#profile-balance").inner_text() == "10,000"
    assert page.locator("#nav-balance").inner_text() == "10,000"
    assert page.get_by_role("button", name="Log out").is_visible()
    assert page.get_by_role("cell", name="+10,000").is_visible()
    page.screenshot(path=SCREENSHOT, full_page=True)

    # The same page on a phone: nothing wider than the screen.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=PHONE_SCREENSHOT, full_page=True)

    # Pick an avatar and a display name, as a player would.
    page.get_by_label("Display name").fill("Lucky Lou")
    page.locator("label.avatar-option", has_text="Crown").click()
    page.get_by_role("button", name="Save profile").click()
    page.wait_for_url(re.compile(r"/accounts/profile/$"))
    assert page.locator("h1").inner_text() == "Lucky Lou"
    assert page.locator("img.avatar-large").get_attribute("src").endswith("/avatars/crown.svg")
