"""Russian on a 390 px phone: the longer Russian words fit. At the blackjack table (betting, then a decision:
«Ещё», «Хватит», «Удвоить»), in the lobby and on the register page, no button's text overflows its button,
no bar's button breaks over two lines and the page does not scroll sideways. Screenshots go to UI_SCREENSHOTS
when set (else the test's tmp_path)."""

import pytest
from playwright.sync_api import expect

from tests.browser.table_support import (
    act,
    make_player,
    open_live_table,
    screenshot_dir,
    stack_shoe,
    still,
    value,
)
from tests.browser.test_table_ux import PHONE

pytestmark = [pytest.mark.browser]
expect.set_options(timeout=10_000)

#: Visible buttons and links styled as buttons whose text is wider than the button; the buttons of the bet
#: and decision bars broken over two lines; whether the bet box is too narrow to show an amount; whether the
#: page is wider than the screen.
OVERFLOW = """() => {
    const shown = (selector) => [...document.querySelectorAll(selector)].filter((b) => b.offsetParent);
    const amount = document.getElementById('bet-amount');
    return {
        buttons: shown('button, a.button').filter((b) => b.scrollWidth > b.clientWidth + 1)
            .map((b) => b.textContent.trim()),
        wrapped: shown('.bet-group.is-yours .button, .decision-bar.is-yours .button')
            .filter((b) => b.getBoundingClientRect().height > 52).map((b) => b.textContent.trim()),
        amount: amount !== null && amount.offsetParent !== null && amount.clientWidth < 60,
        page: document.documentElement.scrollWidth > window.innerWidth + 1,
    };
}"""


def fits(page) -> None:
    found = page.evaluate(OVERFLOW)
    assert found == {"buttons": [], "wrapped": [], "amount": False, "page": False}, found


def hard_twelve_against_a_six(order):
    first, up, second, hole = order[:4]
    return (
        value(first) + value(second) == 12
        and value(first) != value(second)
        and value(up) == 6
        and value(hole) != 1
    )


def test_the_table_and_the_register_page_in_russian_fit_a_phone(transactional_db, open_page, tmp_path):
    table = open_live_table("Стол Ольги")
    stack_shoe(table, hard_twelve_against_a_six)
    player = make_player("olga", "Ольга")
    player.language = "ru"
    player.save(update_fields=["language"])
    page = open_page(player, **PHONE)
    page.goto(f"/tables/{table.pk}/")
    expect(page.locator("#controls")).to_contain_text("Вы смотрите.")
    act(page, page.get_by_role("button", name="Сесть на место 1").click)
    expect(page.locator("#bet-1")).to_have_text("Ставка")
    still(page)
    fits(page)
    page.screenshot(path=screenshot_dir(tmp_path) / "table-phone-bet-ru.png", scale="css")
    act(page, page.locator("#bet-1").click)
    expect(page.locator("#play-hit")).to_contain_text("Ещё")
    expect(page.locator("#play-stand")).to_contain_text("Хватит")
    expect(page.locator("#play-double")).to_contain_text("Удвоить")
    expect(page.locator(".status-turn")).to_contain_text("Ваш ход")
    still(page)
    fits(page)
    page.screenshot(path=screenshot_dir(tmp_path) / "table-phone-ru.png", scale="css")

    page.goto("/")  # the lobby: the table's row with its Russian facts and buttons
    expect(page.locator("#lobby-tables")).to_contain_text("Преимущество казино")
    fits(page)
    page.screenshot(path=screenshot_dir(tmp_path) / "lobby-phone-ru.png", scale="css", full_page=True)

    visitor = open_page(locale="ru-RU", **PHONE)
    visitor.goto("/accounts/register/")
    expect(visitor.locator("h1")).to_have_text("Создайте учётную запись")
    fits(visitor)
    visitor.screenshot(path=screenshot_dir(tmp_path) / "register-phone-ru.png", scale="css", full_page=True)
