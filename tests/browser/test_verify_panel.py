"""The round page in real Chromium: the verify panel recomputes a retired shoe with SubtleCrypto (127.0.0.1
is a secure context) and accepts the real cards, refuses a tampered one; the replay steps back and forth."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from blackjack import services
from blackjack.engine.rules import PRESETS
from blackjack.engine.shoe import dealing_order, shuffled_shoe
from blackjack.models import RulePreset, Table
from live import clock

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def settled_round_on_a_retired_shoe():
    rules = PRESETS["Vegas Strip"].to_dict() | {"penetration": 0}  # a fresh shoe, retired after the round
    preset = RulePreset.objects.create(name="Fresh shoe", rules=rules)
    table = services.create_table(name="Verify table", preset=preset, min_bet=10, max_bet=500)
    player = get_user_model().objects.create_user(username="verifier", password="Verify-blackjack-9")
    for name, args in (("sit", {"seat": 1}), ("bet", {"amount": 20})):
        version = Table.objects.get(pk=table.pk).version
        services.perform(
            table_id=table.pk, user=player, action={"action": name, **args}, expected_version=version
        )
    for step in range(1, 20):  # the clock plays the rest: insurance declined, hands standing
        current = Table.objects.select_related("current_round__shoe").get(pk=table.pk).current_round
        if current.settled_at is not None:
            return current
        clock.sweep(now=timezone.now() + timedelta(hours=step))
    raise AssertionError("the round did not settle")


def test_the_browser_verifies_a_retired_shoe_and_catches_a_tampered_card(page, live_site):
    rnd = settled_round_on_a_retired_shoe()
    assert rnd.shoe.retired_at is not None
    page.goto(f"/rounds/{rnd.pk}/")
    result = page.locator("#verify-result")
    page.click("#verify-button")
    expect(result).to_have_attribute("data-verdict", "pass", timeout=15_000)
    expect(result).to_contain_text("The server seed's SHA-256 is the published hash.")
    expect(result).to_contain_text("cards of the round are the shoe's cards, in order")

    # Change the third card the page says was dealt: the same check must now fail on that card.
    page.evaluate(
        """() => {
          const panel = document.getElementById("verify-panel");
          const cards = panel.dataset.dealt.split(" ");
          cards[2] = cards[2] === "As" ? "Kd" : "As";
          panel.dataset.dealt = cards.join(" ");
        }"""
    )
    page.click("#verify-button")
    expect(result).to_have_attribute("data-verdict", "fail", timeout=15_000)
    expect(result).to_contain_text("Card 3 of the round is")


def test_the_replay_steps_forward_and_back(page, live_site):
    rnd = settled_round_on_a_retired_shoe()
    page.goto(f"/rounds/{rnd.pk}/")
    position = page.locator(".replay-position")
    total = page.locator(".replay-step").count()
    assert total >= 3  # bets open, the bet, the deal (a blackjack can end the round there)
    expect(position).to_have_text(f"Step 1 of {total}")
    expect(page.locator(".replay-step").nth(0)).to_be_visible()
    expect(page.locator(".replay-step").nth(1)).to_be_hidden()
    page.click('[data-replay="next"]')
    page.click('[data-replay="next"]')
    expect(position).to_have_text(f"Step 3 of {total}")
    expect(page.locator(".replay-step").nth(2)).to_be_visible()
    page.click('[data-replay="prev"]')
    expect(position).to_have_text(f"Step 2 of {total}")
    page.click('[data-replay="last"]')
    expect(position).to_have_text(f"Step {total} of {total}")
    expect(page.locator('[data-replay="next"]')).to_be_disabled()


def test_the_fairness_page_checks_seeds_typed_in(page, live_site):
    rnd = settled_round_on_a_retired_shoe()
    shoe = rnd.shoe
    order = shuffled_shoe(server_seed=shoe.server_seed, client_seed=shoe.client_seed, decks=shoe.decks)
    page.goto("/fairness/")
    page.fill("#vf-server-seed", shoe.server_seed)
    page.fill("#vf-client-seed", shoe.client_seed)
    page.fill("#vf-decks", str(shoe.decks))
    page.fill("#vf-start", "10")
    page.fill("#vf-hash", shoe.seed_hash)
    page.fill("#vf-dealt", " ".join(order[10:15]))
    page.click("#verify-form button[type=submit]")
    result = page.locator("#verify-result")
    expect(result).to_have_attribute("data-verdict", "pass", timeout=15_000)
    page.fill("#vf-hash", "0" * 64)
    page.click("#verify-form button[type=submit]")
    expect(result).to_have_attribute("data-verdict", "fail", timeout=15_000)
    expect(result).to_contain_text("not the published hash")


def test_the_fairness_page_follows_a_round_that_ran_out_into_the_reshuffled_discards(page, live_site):
    seed = "ab" * 32
    order = shuffled_shoe(server_seed=seed, client_seed="players", decks=1)
    # A round from card 45 that took ten cards: the shoe's last seven, then three of its reshuffled discards.
    dealt = list(dealing_order(order, 45, server_seed=seed, client_seed="players")[45:55])
    page.goto("/fairness/")
    page.fill("#vf-server-seed", seed)
    page.fill("#vf-client-seed", "players")
    page.fill("#vf-decks", "1")
    page.fill("#vf-start", "45")
    page.fill("#vf-dealt", " ".join(dealt))
    page.click("#verify-form button[type=submit]")
    result = page.locator("#verify-result")
    expect(result).to_have_attribute("data-verdict", "pass", timeout=15_000)
    expect(result).to_contain_text("the shoe ran out: its discards were reshuffled")
    # The tenth card taken from anywhere but the browser's own reshuffle fails.
    wrong = next(card for card in order if card != dealt[9])
    page.fill("#vf-dealt", " ".join([*dealt[:9], wrong]))
    page.click("#verify-form button[type=submit]")
    expect(result).to_have_attribute("data-verdict", "fail", timeout=15_000)
    expect(result).to_contain_text("Card 10 of the round is")
