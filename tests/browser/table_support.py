"""Helpers for the table and lobby browser tests.

The live server runs in another process, so nothing can be patched into it: players are logged in through
their session cookie, tables get long decision windows (the server's clock must not time anyone out while
Chromium is busy), and a "scripted" deal is a shoe row stored before the first round opens, whose seeds were
chosen so that the shuffle the server computes from them starts with the cards a test needs.
"""

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import BrowserContext, Page, expect

from blackjack import services
from blackjack.engine.cards import CARD_VALUES
from blackjack.engine.rules import PRESETS
from blackjack.engine.shoe import cut_card_index, shuffled_shoe
from blackjack.models import RulePreset, Shoe, Table
from cards.fairness import seed_hash

PASSWORD = "Browser-blackjack-7"
LONG_WINDOW = 300
SEED_ATTEMPTS = 50_000
CLIENT_SEED = "browser-tests"


def screenshot_dir(tmp_path: Path) -> Path:
    """Where screenshots go: `UI_SCREENSHOTS` (`docs` refreshes the README's pictures), else `tmp_path`."""
    chosen = os.environ.get("UI_SCREENSHOTS")
    path = Path(chosen) if chosen else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


def make_player(username: str, display_name: str = "", avatar: str = "spade"):
    return get_user_model().objects.create_user(
        username=username, password=PASSWORD, display_name=display_name, avatar=avatar
    )


def log_in(context: BrowserContext, user, base_url: str) -> None:
    """Give the browser context the session cookie of `user` (Django's test client makes the session)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": base_url}])


def open_live_table(
    name: str = "Browser table", preset: str = "Vegas Strip", rules: dict | None = None, **fields
) -> Table:
    """A table with long decision windows; `rules` (a RuleSet dict) for a preset not among PRESETS."""
    preset_row, _ = RulePreset.objects.get_or_create(
        name=preset, defaults={"rules": rules if rules is not None else PRESETS[preset].to_dict()}
    )
    windows = dict.fromkeys(
        ("betting_seconds", "insurance_seconds", "turn_seconds", "ready_seconds"), LONG_WINDOW
    )
    return services.create_table(name=name, preset=preset_row, min_bet=10, max_bet=500, **(windows | fields))


def value(card: str) -> int:
    """Blackjack value, ace 1."""
    return CARD_VALUES[card]


def stack_shoe(table: Table, deal: Callable[[list[str]], bool]) -> list[str]:
    """Store the table's first shoe, with seeds whose shuffle satisfies `deal(order)`; return the order.

    Seeds are tried in a fixed sequence, so a test deals the same cards on every run.
    """
    rules = table.ruleset()
    for attempt in range(SEED_ATTEMPTS):
        seed = hashlib.sha256(f"ui-browser-{table.name}-{attempt}".encode()).hexdigest()
        order = shuffled_shoe(server_seed=seed, client_seed=CLIENT_SEED, decks=rules.decks)
        if deal(order):
            Shoe.objects.create(
                table=table,
                server_seed=seed,
                seed_hash=seed_hash(seed),
                client_seed=CLIENT_SEED,
                decks=rules.decks,
                cut_index=cut_card_index(rules.decks, rules.penetration),
            )
            return order
    raise AssertionError(f"no shoe in {SEED_ATTEMPTS} seeds deals what the test asked for")


def version(page: Page) -> str:
    return page.locator("#table-version").get_attribute("data-v")


def act(page: Page, do: Callable[[], None], *watchers: Page) -> str:
    """Do something that changes the table on `page`; wait until it and every watcher show the new version.

    Every action carries the version its page saw, so the next player acts on the state this one made; one
    refused as stale (the table moved on before it arrived) fails here, saying so.
    """
    before = version(page)
    do()
    status = page.locator("#table-version")
    expect(status).not_to_have_attribute("data-v", before)
    after = version(page)
    stale = page.locator("#flash .flash-stale_version")
    assert not stale.count(), f"refused at version {before}: {stale.all_inner_texts()}"
    for other in watchers:
        expect(other.locator("#table-version")).to_have_attribute("data-v", after)
    return after


def seat(page: Page, number: int):
    """The seat's `<li>` on the felt."""
    return page.locator("#seats > li").nth(number - 1)


def still(page: Page) -> None:
    """Wait until no card is sliding in or turning over and no banner popping up (for a screenshot)."""
    page.wait_for_function(
        "() => !document.getAnimations().some((a) => ['deal', 'flip', 'banner-in'].includes(a.animationName))"
    )


def snapshot(page: Page, path: Path) -> None:
    """A screenshot of the whole page taken through a viewport as tall as the page (a full-page screenshot
    would paint the sticky header in the middle)."""
    size = page.viewport_size
    height = page.evaluate("document.documentElement.scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": min(height, 4000)})
    page.screenshot(path=path)
    page.set_viewport_size(size)
