"""A finished Durak game's replay page in real Chromium: the verify panel recomputes the deck from the
revealed seeds with SubtleCrypto (the blackjack shoe's code, on the 36-card deck) and catches a tampered
card."""

import pytest
from django.test import override_settings
from playwright.sync_api import expect

from durak import actor as durak_actor
from durak.engine import shuffled_deck
from durak.models import DurakGame
from tests.browser.table_support import make_player
from tests.durak.live.conftest import open_durak_table, play_out, seat_and_start

pytestmark = [pytest.mark.browser]


def finished_game(player) -> DurakGame:
    table = open_durak_table(player, name="Verify corner", rated=False, turn_seconds=60)
    durak_actor.forget_actors()
    with override_settings(LIVE_TIMERS=False):
        play_out(seat_and_start(table, player, bots=1), {0: player})
    durak_actor.forget_actors()
    return DurakGame.objects.get(table=table)


def test_the_browser_verifies_a_durak_deck_and_catches_a_tampered_card(transactional_db, open_page):
    vera = make_player("vera", "Vera")
    game = finished_game(vera)
    assert game.finished
    page = open_page(vera)
    page.goto(f"/durak/games/{game.pk}/")
    panel = page.locator("#verify-panel")
    deck = shuffled_deck(server_seed=game.server_seed, client_seed=game.client_seed, nonce=game.nonce)
    expect(panel).to_have_attribute("data-dealt", " ".join(deck))
    result = page.locator("#verify-result")
    page.click("#verify-button")
    expect(result).to_have_attribute("data-verdict", "pass", timeout=15_000)
    expect(result).to_contain_text("The server seed's SHA-256 is the published hash.")
    expect(result).to_contain_text("All 36 cards of the game are the shoe's cards, in order")

    page.evaluate(
        """() => {
          const panel = document.getElementById("verify-panel");
          const cards = panel.dataset.dealt.split(" ");
          [cards[4], cards[5]] = [cards[5], cards[4]];
          panel.dataset.dealt = cards.join(" ");
        }"""
    )
    page.click("#verify-button")
    expect(result).to_have_attribute("data-verdict", "fail", timeout=15_000)
    expect(result).to_contain_text("Card 5 of the game is")
    page.close()
