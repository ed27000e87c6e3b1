"""What the table shows after a bout and after a game: the strip of the last bout (its cards as they lay face
up, and who took them or "Beaten off"), the same after a reload from the database; and the result banner's
chips and rating change for the viewer, from what the game's settlement stored (none for an unrated game)."""

import re

import pytest

from durak import actor as durak_actor
from durak import bot
from durak.models import DurakRating
from durak.rendering import live_html
from durak.table import PLAYING, Act, Expire
from durak.view import table_view
from tests.durak.live.conftest import seat_and_start

pytestmark = pytest.mark.django_db


def step(actor, humans: dict[int, int]) -> tuple:
    """The seat to act moves (a player as their bot would, a bot at its deadline); the table before and
    after."""
    before = actor.state
    seat = before.to_act()
    if before.seats[seat].user_id in humans.values():
        move = bot.choose(before.game.state, seat)
        actor.handle(Act(before.seats[seat].user_id, {k: v for k, v in move.items() if k != "player"}))
    else:
        actor.handle(Expire(before.version), now=before.deadline)
    return before, actor.state


class Element:
    """An element of rendered HTML found by its class or id (no element of its tag nested in it): its text."""

    def __init__(self, inner: str) -> None:
        self.inner = inner
        self.text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", inner)).strip()

    def select_one(self, marker: str):
        return find(self.inner, marker)


def find(html: str, marker: str) -> Element | None:
    """The first element whose class list holds `marker` (".name") or whose id is `marker` ("#name")."""
    name = re.escape(marker[1:])
    attribute = rf'id="{name}"' if marker[0] == "#" else rf'class="(?:[^"]* )?{name}(?: [^"]*)?"'
    found = re.search(rf"<(\w+)[^>]*{attribute}[^>]*>(.*?)</\1>", html, re.S)
    return Element(found.group(2)) if found else None


def strip(html: str) -> Element | None:
    board = find(html, "#durak-board")
    return board.select_one(".durak-last-bout") if board else None


def test_the_last_bout_is_what_lay_on_the_table_and_survives_a_reload(open_durak, alice, bob):
    """Over a whole game of two players and a bot: whenever a bout closes, the strip holds exactly the cards
    that went to the discard pile (beaten off) or into the defender's hand (taken), every one of which a
    spectator saw face up; it stays until the next bout closes; a fresh read gives the same."""
    table = open_durak(seats=3)
    actor = seat_and_start(table, alice, bob, bots=1)
    humans = {0: alice.pk, 1: bob.pk}
    seen: set[str] = set()  # every card a spectator has seen face up on the table
    closed = {"beaten off": 0, "taken": 0}
    while actor.state.status == PLAYING:
        before, after = step(actor, humans)
        old, new = before.game.state, after.game.state
        view = table_view(after, None)
        seen |= {card for pair in view["game"]["table"] for card in pair if card}
        shown = view["game"]["last_bout"]
        if new.bout == old.bout:
            assert after.game.last_bout == before.game.last_bout  # it stays until the next bout closes
            continue
        cards = sorted(card for pair in shown["pairs"] for card in pair if card)
        seen |= set(cards)  # the last card may close the bout in the move that lays it
        assert shown["cards"] == len(cards)
        if shown["took"] is None:
            closed["beaten off"] += 1
            assert sorted(set(new.discard) - set(old.discard)) == cards
            assert "Beaten off" in strip(live_html(after, view)).text
        else:
            closed["taken"] += 1
            assert shown["took"] == old.defender
            assert set(cards) <= set(new.hands[old.defender]) - set(old.hands[old.defender])
            name = view["game"]["names"][old.defender]
            words = f"{name} took {len(cards)} card{'s' if len(cards) > 1 else ''}"
            assert words in strip(live_html(after, view)).text
        assert set(cards) <= seen
        assert durak_actor.load(table.pk).game.last_bout == after.game.last_bout  # a reload shows the same
    assert closed["beaten off"], closed  # not vacuous: both kinds of close were seen
    assert closed["taken"], closed


def test_a_new_game_shows_no_last_bout(open_durak, alice):
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    assert table_view(actor.state, alice.pk)["game"]["last_bout"] is None
    assert strip(live_html(actor.state, table_view(actor.state, alice.pk))) is None


def play_to_the_end(actor, humans: dict[int, int]) -> None:
    while actor.state.status == PLAYING:
        step(actor, humans)


def banner(table, user_id):
    return find(live_html(table, table_view(table, user_id)), "#durak-result")


def test_the_result_shows_each_players_chips_and_rating_change(open_durak, alice, bob):
    table = open_durak(stake=40)
    actor = seat_and_start(table, alice, bob)
    play_to_the_end(actor, {0: alice.pk, 1: bob.pk})
    game = actor.state.game
    assert game.state.fool is not None  # this deal has a fool (seeded)
    for user in (alice, bob):
        seat = game.players.index(user.pk)
        rating = DurakRating.objects.get(user=user, variant="podkidnoy").rating
        view = table_view(actor.state, user.pk)
        assert view["game"]["rating_you"]["after"] == rating
        before = view["game"]["rating_you"]["before"]
        shown = banner(actor.state, user.pk)
        change = f"{rating - before:+.1f}"
        assert f"{change} rating, now {round(rating)}" in shown.select_one(".result-rating").text
        net = "+40" if seat != game.state.fool else "-40"
        assert shown.select_one(".result-chips").text == f"{net} chips"
        # A reload from the database shows the same.
        reread = durak_actor.load(table.pk)
        assert table_view(reread, user.pk)["game"]["rating_you"] == view["game"]["rating_you"]
    spectator = banner(actor.state, None)
    assert spectator.select_one(".result-rating") is None
    assert spectator.select_one(".result-chips") is None


def test_an_unrated_game_shows_no_rating_line(open_durak, alice, bob):
    table = open_durak(rated=False)
    actor = seat_and_start(table, alice, bob)
    play_to_the_end(actor, {0: alice.pk, 1: bob.pk})
    for user in (alice, bob):
        assert table_view(actor.state, user.pk)["game"]["rating_you"] is None
        shown = banner(actor.state, user.pk)
        assert shown is not None
        assert shown.select_one(".result-rating") is None
        assert shown.select_one(".result-chips") is None  # casual: no chips either


def test_a_game_against_a_bot_alone_shows_no_rating_line(open_durak, alice):
    table = open_durak()  # a rated table, but a bot is no opponent: the game is not rated
    actor = seat_and_start(table, alice, bots=1)
    play_to_the_end(actor, {0: alice.pk})
    assert banner(actor.state, alice.pk).select_one(".result-rating") is None
