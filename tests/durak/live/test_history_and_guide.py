"""A player's Durak history says, per game, how it went for them (won, the fool, a draw, left early), what it
did to their chips and rating, and whom they played; the replay shows cards as faces; the rules guide is the
game's guide page, in the site's menu and linked from the open form and the table."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from durak.models import DurakGame, DurakRating
from durak.table import Leave
from tests.durak.live.conftest import play_out, record_game, seat_and_start

pytestmark = pytest.mark.django_db


def rows_of(page: str) -> list[str]:
    """The history's rows, newest first, as text with the tags taken out and spaces squeezed."""
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr.*?</tr>", body, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()) for row in rows]


def missing(row: str, *words: str) -> list[str]:
    return [word for word in words if word not in row]


def test_the_history_says_the_result_the_chips_the_rating_change_and_the_opponents(
    client, alice, bob, open_durak
):
    table = open_durak(stake=100)
    start = timezone.now() - timedelta(hours=1)
    games = iter(start + timedelta(minutes=n) for n in range(5))
    record_game(open_durak(name="Casual"), [alice, None], fool=1, rated=False, when=next(games))
    won = record_game(table, [alice, bob], fool=1, stake=100, payouts=[200, 0], when=next(games))
    record_game(table, [alice, bob], fool=0, stake=100, payouts=[0, 200], when=next(games))
    record_game(table, [alice, bob], fool=None, stake=100, payouts=[100, 100], when=next(games))
    old = record_game(table, [alice, bob], fool=1, stake=100, payouts=[200, 0], when=next(games))
    DurakGame.objects.filter(pk=old.pk).update(ratings=[])  # rated before the change was kept
    client.force_login(alice)
    page = client.get(reverse("durak_history")).content.decode()
    assert "fool: seat" not in page
    rated_before, draw, fool, first, casual = rows_of(page)  # the newest first
    before, after = DurakGame.objects.get(pk=won.pk).ratings[0]
    assert after > before
    change = f"+{round(after - before)}"
    assert not missing(first, "Bob", "You won", "+100", "staked 100, got 200 back", change)
    assert not missing(first, f"{before:.0f} → {after:.0f}")
    assert not missing(fool, "You were the fool", "-100", "got 0 back")
    assert not missing(draw, "A draw", "±0")
    assert not missing(casual, "Bot 2", "casual", "unrated")
    assert not missing(rated_before, "You won", "rated")
    assert "→" not in rated_before
    # Bob's side of the first game.
    client.force_login(bob)
    bobs = rows_of(client.get(reverse("durak_history")).content.decode())
    assert not missing(bobs[-1], "Alice", "You were the fool", "-100")  # the first


def test_a_played_game_keeps_each_players_rating_change_and_who_left(client, alice, bob, open_durak):
    table = open_durak(stake=50)
    actor = seat_and_start(table, alice, bob)
    actor.handle(Leave(bob.pk))
    play_out(actor, {0: alice})  # Bob's seat: the bot, to the end
    game = DurakGame.objects.get()
    assert game.left == [1]
    for seat, user in enumerate((alice, bob)):
        before, after = game.ratings[seat]
        assert before == 1500.0
        assert after == DurakRating.objects.get(user=user, variant="podkidnoy").rating
    client.force_login(bob)
    [row] = rows_of(client.get(reverse("durak_history")).content.decode())
    assert "You left early" in row
    assert "Alice" in row
    client.force_login(alice)
    [row] = rows_of(client.get(reverse("durak_history")).content.decode())
    assert "You left early" not in row


def test_an_unrated_game_keeps_no_rating_change(alice, open_durak):
    actor = seat_and_start(open_durak(rated=False), alice, bots=1)
    play_out(actor, {0: alice})
    assert DurakGame.objects.get().ratings == []


def test_the_replay_shows_cards_as_faces_and_the_players_by_name(client, alice, bob, open_durak):
    actor = seat_and_start(open_durak(), alice, bob)
    play_out(actor, {0: alice, 1: bob})
    game = DurakGame.objects.get()
    client.force_login(alice)
    page = client.get(reverse("durak_replay", args=[game.pk])).content.decode()
    steps = page.split('<ol class="replay-steps', 1)[1].split("</ol>", 1)[0]
    text = " ".join(re.sub(r"<[^>]+>", " ", steps).split())
    assert not re.search(r"\b[6-9TJQKA][shdc]\b", text), "a card code in the replay"
    assert 'class="pc' in steps
    assert "You lead" in text or "Bob leads" in text
    assert "Seat 1" not in text
    assert "against Bob" in page


def test_the_rules_guide_explains_every_variant_and_option(client):
    response = client.get(reverse("durak_guide"))
    assert response.status_code == 200
    page = response.content.decode()
    for words in (
        "36-card deck",
        "trump",
        "Throw in",
        "Take",
        "Bito",
        "Podkidnoy",
        "Perevodnoy",
        "transfer",
        "Passport",
        "6 → 10 → J → Q → K → A",
        "All sides",
        "Neighbours",
        "One side",
        "Six",
        "Five first bout",
        "No limit",
        "fool",
        "stake",
        "Glicko-2",
        "bots",
        "30 seconds",
        "server seed",
    ):
        assert words in page, words


def test_the_rules_guide_is_in_the_menu_and_linked_from_the_open_form_and_the_table(
    client, alice, open_durak
):
    guide = reverse("durak_guide")
    lobby = client.get(reverse("lobby")).content.decode()
    assert f'<a href="{guide}">Durak rules</a>' in lobby
    assert f'<a href="{reverse("how_to_play")}">Blackjack rules</a>' in lobby
    client.force_login(alice)
    assert f'href="{guide}"' in client.get(reverse("durak_open")).content.decode()
    table = open_durak()
    assert f'href="{guide}"' in client.get(reverse("durak_table", args=[table.pk])).content.decode()
