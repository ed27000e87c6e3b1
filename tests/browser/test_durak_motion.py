"""The Durak table's motion and drag to play, in real Chromium at 390 px (a phone, touch) and 1366 px (a
laptop, a mouse): a lead starts an animation, and with reduced motion asked for none runs; a card dragged
onto the table is played, one dragged onto an attacking card beats it, and one dropped on nothing comes back
unplayed. The test server's clock is off: the bot does not answer, so each state stays until the test
moves."""

from dataclasses import replace

import pytest
from playwright.sync_api import expect

from durak import actor as durak_actor
from durak.engine import GameState
from durak.models import DurakGame, DurakTable
from tests.browser.table_support import make_player
from tests.browser.test_durak_hand import defending_two_attacks
from tests.durak.live.conftest import open_durak_table, seat_and_start

pytestmark = [pytest.mark.browser]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
LAPTOP = {"viewport": {"width": 1366, "height": 800}}

#: Every animation the page starts: the card it moves (if any) and its keyframes (before the page's scripts).
RECORD_ANIMATIONS = """
window.startedAnimations = [];
const animate = Element.prototype.animate;
Element.prototype.animate = function (keyframes, options) {
  window.startedAnimations.push({card: this.dataset.card || null, keyframes: JSON.stringify(keyframes)});
  return animate.call(this, keyframes, options);
};
"""


def leading(user) -> tuple[DurakTable, str]:
    """A game of `user` against a bot in which `user` leads (made so if the deal said otherwise); the table
    (no process owns it: the site's server loads it as stored) and a card of theirs to lead."""
    table = open_durak_table(user, name="Motion", turn_seconds=300)
    actor = seat_and_start(table, user, bots=1)
    me = actor.state.seat_of(user.pk).number
    durak_actor.forget_actors()
    game = DurakGame.objects.get(table=table)
    state = GameState.from_dict(game.state)
    if state.attacker != me:
        state = replace(state, attacker=me, defender=1 - me)
        DurakGame.objects.filter(pk=game.pk).update(state=state.to_dict())
    DurakTable.objects.filter(pk=table.pk).update(owner="", lease_until=None)
    return table, sorted(state.hands[me])[0]


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
@pytest.mark.parametrize("device", [PHONE, LAPTOP], ids=["390px", "1366px"])
def test_a_lead_moves_the_card_unless_reduced_motion_is_asked_for(
    transactional_db, open_page, device, motion
):
    nina = make_player("nina", "Nina")
    table, card = leading(nina)
    page = open_page(nina, reduced_motion=motion, **device)
    page.add_init_script(RECORD_ANIMATIONS + COUNT_MESSAGES)
    page.goto(f"/durak/{table.pk}/")
    page.wait_for_function("() => window.socketMessages >= 1")
    expect(page.locator("#durak-status")).to_contain_text("Your move")
    page.evaluate("window.startedAnimations = []")  # from the lead on
    page.locator(f'#durak-hand [data-card="{card}"]').click()
    expect(page.locator(f'#durak-board .durak-bout [data-card="{card}"]')).to_be_visible()
    started = page.evaluate("window.startedAnimations")
    if motion == "reduce":
        assert started == []
        assert page.evaluate("document.getAnimations().length") == 0
    else:
        # The led card flew from the hand to the table.
        assert any(a["card"] == card and "translate" in a["keyframes"] for a in started), started


#: Counts the socket's messages the page has swapped in (the first one comes right after it opens).
COUNT_MESSAGES = """
window.socketMessages = 0;
document.addEventListener('htmx:wsAfterMessage', () => { window.socketMessages += 1; });
"""


def open_table_page(open_page, user, table, **options):
    """The table's page, once its socket's first view is in (it swaps every region in again)."""
    page = open_page(user, **options)
    page.add_init_script(COUNT_MESSAGES)
    page.goto(f"/durak/{table.pk}/")
    page.wait_for_function("() => window.socketMessages >= 1")
    return page


def box_of(page, selector: str) -> dict:
    """The box of the element `selector` finds, read in one go in the page."""
    return page.evaluate("s => document.querySelector(s).getBoundingClientRect().toJSON()", selector)


def middle(page, selector: str) -> dict:
    box = box_of(page, selector)
    return {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}


def drag(page, source: str, target: dict, *, touch: bool) -> None:
    """Drag the card of the hand `source` (a selector; held by its left edge, the part of a fanned card always
    in view) to the point `target` ({x, y}) with a finger or a mouse."""
    box = box_of(page, source)
    start = {"x": box["x"] + 8, "y": box["y"] + box["height"] / 2}
    steps = [
        {
            "x": start["x"] + (target["x"] - start["x"]) * step / 8,
            "y": start["y"] + (target["y"] - start["y"]) * step / 8,
        }
        for step in range(1, 9)
    ]
    if touch:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [start]})
        for point in steps:
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        cdp.detach()
    else:
        page.mouse.move(start["x"], start["y"])
        page.mouse.down()
        for point in steps:
            page.mouse.move(point["x"], point["y"])
        page.mouse.up()


@pytest.mark.parametrize("device", [PHONE, LAPTOP], ids=["390px", "1366px"])
def test_a_card_dragged_onto_the_table_is_led_and_one_dropped_on_nothing_comes_back(
    transactional_db, open_page, device
):
    nina = make_player("nina", "Nina")
    table, card = leading(nina)
    page = open_table_page(open_page, nina, table, **device)
    status = page.locator("#durak-status")
    expect(status).to_contain_text("Your move")
    version = int(status.get_attribute("data-v"))
    touch = "has_touch" in device
    hand_card = f'#durak-hand button:has([data-card="{card}"])'
    # Dropped on the page's header: nothing is sent, the card is back in the hand as it was.
    drag(page, hand_card, middle(page, ".table-header h1"), touch=touch)
    expect(page.locator(hand_card)).not_to_have_class("is-dragging")
    assert page.locator(hand_card).evaluate("button => button.style.transform") == ""
    page.wait_for_function("() => document.getAnimations().length === 0")  # it slid back
    # Dropped on the table: the lead, as its tap sends it (had the first drop sent anything, this one's
    # version would be stale and refused).
    drag(page, hand_card, middle(page, "#durak-board .durak-bout"), touch=touch)
    expect(page.locator(f'#durak-board .durak-bout [data-card="{card}"]')).to_be_visible()
    expect(status).to_have_attribute("data-v", str(version + 1))
    expect(page.locator(f'#durak-hand [data-card="{card}"]')).to_have_count(0)
    expect(page.locator("#durak-board .durak-last")).to_contain_text("Nina plays")
    expect(page.locator("#durak-error")).to_have_text("")


@pytest.mark.parametrize("device", [PHONE, LAPTOP], ids=["390px", "1366px"])
def test_a_card_dragged_onto_an_attacking_card_beats_that_card(transactional_db, open_page, device):
    """The card beats either attack (a tap would ask which): the drop says which one."""
    nina = make_player("nina", "Nina")
    table, card = defending_two_attacks(nina)
    page = open_table_page(open_page, nina, table, **device)
    expect(page.locator("#durak-status")).to_contain_text("Your move")
    attacks = page.locator("#durak-board .durak-bout .durak-pair .card")
    expect(attacks).to_have_count(2)
    second = "#durak-board .durak-bout .durak-pair:nth-child(2) .card"
    target = page.locator(second).get_attribute("data-card")
    drag(page, f'#durak-hand [data-choose="{card}"]', middle(page, second), touch="has_touch" in device)
    pair = page.locator("#durak-board .durak-bout .durak-pair", has=page.locator(f'[data-card="{target}"]'))
    expect(pair.locator(f'[data-card="{card}"]')).to_be_visible()  # on the card it was dropped on
    expect(page.locator("#durak-board .durak-last")).to_contain_text("Nina beats")
