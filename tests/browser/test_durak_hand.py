"""The Durak hand in real Chromium on a 390 px phone and a 1366 px laptop: a big hand is a fan whose every
card is its own target (a tap on a card's visible part is that card, never its neighbour: issue 33 found a tap
on J♦ playing A♥), no row overlaps another, and the page does not scroll sideways. A card with two moves shows
its moves when tapped."""

import itertools
import re
from dataclasses import replace

import pytest
from playwright.sync_api import expect

from durak import actor as durak_actor
from durak.engine import GameState
from durak.models import DurakGame, DurakTable
from tests.browser.table_support import make_player
from tests.durak.live.conftest import open_durak_table, seat_and_start

pytestmark = [pytest.mark.browser]


def dealt_a_big_hand(user, cards: int) -> DurakTable:
    """A game of `user` against a bot, `user` holding `cards` cards (drawn from the talon), as stored; no
    process owns the table, so the site's server loads it as it is."""
    table = open_durak_table(user, name="Big hand", turn_seconds=300)
    actor = seat_and_start(table, user, bots=1)
    seat = actor.state.seat_of(user.pk).number
    durak_actor.forget_actors()
    game = DurakGame.objects.get(table=table)
    state = GameState.from_dict(game.state)
    extra = cards - len(state.hands[seat])
    hands = tuple(hand + state.talon[:extra] if n == seat else hand for n, hand in enumerate(state.hands))
    state = replace(state, hands=hands, talon=state.talon[extra:])
    DurakGame.objects.filter(pk=game.pk).update(state=state.to_dict())
    DurakTable.objects.filter(pk=table.pk).update(owner="", lease_until=None)
    return table


HIT_TEST = """() => Array.from(document.querySelectorAll('#durak-hand .card-button')).map(button => {
  const box = button.getBoundingClientRect(), card = button.querySelector('.card').getBoundingClientRect();
  const hit = document.elementFromPoint(box.left + 6, box.top + box.height / 2);
  return {left: box.left, top: box.top, bottom: box.bottom, height: box.height, cardHeight: card.height,
          own: hit !== null && hit.closest('.card-button') === button};
})"""


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 1366, "height": 800}])
@pytest.mark.parametrize("cards", [8, 14])
def test_every_card_of_a_big_hand_is_its_own_target(transactional_db, open_page, viewport, cards):
    nina = make_player("nina", "Nina")
    table = dealt_a_big_hand(nina, cards)
    page = open_page(nina, viewport=viewport)
    page.goto(f"/durak/{table.pk}/")
    expect(page.locator("#durak-hand .card")).to_have_count(cards)
    buttons = page.evaluate(HIT_TEST)
    assert len(buttons) == cards
    for button in buttons:
        assert button["own"], button  # a tap at the card's left edge is this card
        assert button["height"] >= button["cardHeight"] - 1  # the target is the whole card, not a strip
    rows: dict[int, list[dict]] = {}
    for button in buttons:
        rows.setdefault(round(button["top"]), []).append(button)
    tops = sorted(rows)
    for upper, lower in itertools.pairwise(tops):
        assert max(b["bottom"] for b in rows[upper]) <= min(b["top"] for b in rows[lower])  # rows apart
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


def defending_two_attacks(user) -> tuple[DurakTable, str]:
    """A game in which the bot attacked `user` with two cards of a plain suit that one card of theirs beats
    both of (two moves for that card); returns the table and that card."""
    table = open_durak_table(user, name="Two moves", turn_seconds=300)
    actor = seat_and_start(table, user, bots=1)
    me = actor.state.seat_of(user.pk).number
    durak_actor.forget_actors()
    game = DurakGame.objects.get(table=table)
    state = GameState.from_dict(game.state)
    suit = next(s for s in "shdc" if s != state.trump_suit)
    attacks, mine = (f"7{suit}", f"8{suit}"), f"9{suit}"
    cards = [c for c in (*state.talon[:-1], *state.hands[0], *state.hands[1]) if c not in (*attacks, mine)]
    hands = [(), ()]
    hands[me] = (mine, *cards[:5])
    hands[1 - me] = tuple(cards[5:11])
    talon = (*cards[11:], state.talon[-1])
    state = replace(
        state,
        hands=tuple(hands),
        talon=talon,
        table=tuple((card, None) for card in attacks),
        attacker=1 - me,
        defender=me,
        done=(),
    )
    DurakGame.objects.filter(pk=game.pk).update(state=state.to_dict())
    DurakTable.objects.filter(pk=table.pk).update(owner="", lease_until=None)
    return table, mine


def test_a_card_with_two_moves_shows_its_moves_when_tapped(transactional_db, open_page):
    nina = make_player("nina", "Nina")
    table, card = defending_two_attacks(nina)
    page = open_page(nina, viewport={"width": 390, "height": 844})
    page.goto(f"/durak/{table.pk}/")
    status = page.locator("#durak-status")
    expect(status).to_contain_text("Your move")
    expect(page).to_have_title(re.compile("^\u25cf Your move \u2013 "))  # the tab says whose turn it is
    moves = page.locator(f'#durak-controls [data-card="{card}"]')
    expect(moves).to_have_count(2)  # beat one attack or the other
    page.locator(f'#durak-hand [data-choose="{card}"]').click()
    expect(moves.first).to_be_focused()
    expect(page.locator("#durak-controls [data-card]:visible")).to_have_count(2)  # its moves only
    expect(page.locator("#durak-controls [data-action=take]")).to_be_visible()
    before = status.get_attribute("data-v")
    moves.first.click()
    expect(status).not_to_have_attribute("data-v", before)
    expect(page.locator("#durak-board .durak-last")).to_contain_text("Nina beats")


def test_a_russian_player_s_turn_and_cards_are_told_in_russian(transactional_db, open_page):
    """The tab's title takes the status's own words, and a screen reader reads the cards' Russian names."""
    olga = make_player("olga", "Ольга")
    olga.language = "ru"
    olga.save(update_fields=["language"])
    table, _ = defending_two_attacks(olga)
    page = open_page(olga, viewport={"width": 390, "height": 844})
    page.goto(f"/durak/{table.pk}/")
    expect(page.locator("#durak-status")).to_contain_text("Ваш ход")
    expect(page).to_have_title(re.compile("^\u25cf Ваш ход \u2013 "))
    names = page.locator("#durak-hand [role=img]").evaluate_all("cards => cards.map(c => c.ariaLabel)")
    assert names
    assert all(re.fullmatch(r"\w+ (пик|червей|бубен|треф)", name) for name in names), names
