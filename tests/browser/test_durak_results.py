"""What the Durak table shows after a bout and after a game, in real Chromium at 390 px and 1366 px: the strip
of the last bout (its cards, who took them or "Beaten off") and the result banner's chips and rating change,
each in view without a sideways scroll; both stay as they were after the page is loaded again."""

import pytest
from playwright.sync_api import expect

from durak import actor as durak_actor
from durak import bot
from durak.models import DurakTable
from durak.table import PLAYING, Act, Expire
from tests.browser.table_support import make_player
from tests.durak.live.conftest import open_durak_table, seat_and_start

pytestmark = [pytest.mark.browser]

DEVICES = [{"width": 390, "height": 844}, {"width": 1366, "height": 800}]


def step(actor) -> None:
    """The seat to act moves: a player as their bot would, a bot at its deadline."""
    table = actor.state
    seat = table.to_act()
    user = table.seats[seat].user_id
    if user is None:
        actor.handle(Expire(table.version), now=table.deadline)
    else:
        move = bot.choose(table.game.state, seat)
        actor.handle(Act(user, {k: v for k, v in move.items() if k != "player"}))


def let_go(table) -> None:
    """No process of the tests owns the table any more: the site's server loads it as stored."""
    durak_actor.forget_actors()
    DurakTable.objects.filter(pk=table.pk).update(owner="", lease_until=None)


def in_view(page, selector: str, width: int) -> None:
    box = page.evaluate("s => document.querySelector(s).getBoundingClientRect().toJSON()", selector)
    assert box["width"] > 0
    assert box["left"] >= 0
    assert box["right"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("viewport", DEVICES, ids=["390px", "1366px"])
def test_the_last_bout_stays_on_the_table_until_the_next_one_ends(transactional_db, open_page, viewport):
    nina, oleg = make_player("nina", "Nina"), make_player("oleg", "Oleg")
    table = open_durak_table(nina, name="Strip", seats=3, turn_seconds=300)
    actor = seat_and_start(table, nina, oleg, bots=1)
    while actor.state.game.last_bout is None or actor.state.game.last_bout.took is None:
        step(actor)  # until a bout ends with a take
    bout = actor.state.game.last_bout
    taker = actor.state.game.players[bout.took]
    name = {nina.pk: "Nina", oleg.pk: "Oleg", None: f"Bot {bout.took + 1}"}[taker]
    let_go(table)
    page = open_page(nina, viewport=viewport)
    page.goto(f"/durak/{table.pk}/")
    strip = page.locator("#durak-board .durak-last-bout")
    expect(strip).to_contain_text(f"{name} took {bout.cards} card")
    cards = [card for pair in bout.pairs for card in pair if card]
    expect(strip.locator("[data-card]")).to_have_count(len(cards))
    for card in cards:
        expect(strip.locator(f'[data-card="{card}"]')).to_be_visible()
    in_view(page, "#durak-board .durak-last-bout", viewport["width"])


@pytest.mark.parametrize("viewport", DEVICES, ids=["390px", "1366px"])
def test_the_result_shows_the_chips_and_the_rating_change(transactional_db, open_page, viewport):
    nina, oleg = make_player("nina", "Nina"), make_player("oleg", "Oleg")
    table = open_durak_table(nina, name="Result", stake=30, turn_seconds=300)
    actor = seat_and_start(table, nina, oleg)
    while actor.state.status == PLAYING:
        step(actor)
    game = actor.state.game
    assert game.state.fool is not None
    let_go(table)
    for user in (nina, oleg):
        seat = game.players.index(user.pk)
        before, after = game.ratings[seat]
        page = open_page(user, viewport=viewport)
        page.goto(f"/durak/{table.pk}/")
        result = page.locator("#durak-result")
        expect(result.locator(".result-chips")).to_have_text(
            "-30 chips" if seat == game.state.fool else "+30 chips"
        )
        expect(result.locator(".result-rating")).to_have_text(
            f"{after - before:+.1f} rating, now {round(after)}"
        )
        expect(page.locator("#durak-board .durak-last-bout")).to_be_visible()  # the game's last bout
        in_view(page, "#durak-result", viewport["width"])
