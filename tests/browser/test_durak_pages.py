"""The Durak pages on a phone (390 x 844) and a laptop (1366 px) in real Chromium: the replay, the
leaderboard, the history and the rules guide fit the screen's width (no sideways scroll of the page)."""

import re

import pytest
from django.test import override_settings

from durak import actor as durak_actor
from durak.models import DurakGame
from tests.browser.table_support import make_player, screenshot_dir
from tests.durak.live.conftest import open_durak_table, play_out, record_game, seat_and_start

pytestmark = [pytest.mark.browser]

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}


def finished_game(player) -> DurakGame:
    table = open_durak_table(player, name="Phone corner", rated=False, turn_seconds=60)
    durak_actor.forget_actors()
    with override_settings(LIVE_TIMERS=False):
        play_out(seat_and_start(table, player, bots=1), {0: player})
    durak_actor.forget_actors()
    return DurakGame.objects.get(table=table)


def a_full_leaderboard(player) -> None:
    """Six players (long names among them) who met each other in rated games: all on the board."""
    others = [
        make_player(f"rival{n}", f"A rather long display name {n}" if n % 2 else f"Rival {n}")
        for n in range(5)
    ]
    table = open_durak_table(player, name="Rated six", seats=6)
    for fool in range(3):
        payouts = [0 if seat == fool else 120 for seat in range(6)]  # the fool's 100 shared by five
        record_game(table, [player, *others], fool=fool, stake=100, payouts=payouts)


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_durak_pages_fit_the_screen_without_sideways_scrolling(
    transactional_db, open_page, viewport, tmp_path
):
    vera = make_player("vera", "Vera")
    game = finished_game(vera)
    a_full_leaderboard(vera)
    page = open_page(vera, viewport=viewport)
    shots = screenshot_dir(tmp_path)
    pages = {
        "replay": f"/durak/games/{game.pk}/",
        "leaderboard": "/durak/leaderboard/",
        "history": "/durak/history/",
        "guide": "/durak/rules/",
    }
    for name, path in pages.items():
        response = page.goto(path)
        assert response is not None, path
        assert response.status == 200, path
        width = page_width(page)
        page.screenshot(path=str(shots / f"durak-{name}-{viewport['width']}.png"), full_page=True)
        assert width <= viewport["width"], f"{path} is {width} px wide at {viewport['width']} px"
    # The leaderboard lists the six players, and the replay shows cards as faces, never as codes.
    page.goto(pages["leaderboard"])
    assert page.locator("table.leaderboard tbody tr").count() == 6
    page.goto(pages["replay"])
    assert page.locator(".replay-steps .pc").count() > 0
    steps = page.locator(".replay-steps").inner_text()
    assert not re.search(r"\b[6-9TJQKA][shdc]\b", steps), "a card code in the replay"
