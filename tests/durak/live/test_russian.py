"""Durak in Russian: a player whose account's language is ru gets the table page, the lobby and the live
fragments of the socket in Russian, with the words players say at the table (Бито, Беру, Пас); English stays
the default, and a Russian viewer's fragments never reach an English one. JSON for bots stays as it was."""

import re

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse
from django.utils import translation

from durak import refusals
from durak.templatetags.durak_ui import action_label, last_move
from tests.blackjack.wsclient import CommunicatorClient, session_cookie
from tests.durak.live.conftest import seat_and_start


def speaks_russian(user):
    user.language = "ru"
    user.save(update_fields=["language"])
    return user


def test_the_game_s_own_words_in_russian():
    with translation.override("ru"):
        assert action_label({"action": "take"}) == "Беру"
        assert action_label({"action": "done"}) == "Бито"
        assert action_label({"action": "done"}, True) == "Пас"
        assert action_label({"action": "beat", "target": "7h", "card": "9h"}) == "Побить 7♥ картой 9♥"
        view = {
            "seats": [{"away": False}],
            "game": {"names": ["Алиса"], "bots": [False], "last": {"seat": 0, "by_bot": False}},
        }
        view["game"]["last"]["action"] = {"action": "beat", "target": "7h", "card": "9h"}
        assert last_move(view) == "Алиса бьёт 7♥ картой 9♥."
    assert action_label({"action": "take"}) == "Take"
    assert action_label({"action": "done"}, True) == "Done"


def test_refusals_are_translated_at_the_edge_and_english_keeps_the_engine_s_words():
    with translation.override("ru"):
        assert (
            refusals.translated("not_your_turn", "only the defender takes")
            == "Брать может только защищающийся."
        )
        assert refusals.translated("cannot_beat", "7h does not beat 9h") == "Эта карта не бьёт ту."
        assert refusals.translated("something_new", "as worded") == "as worded"
    assert refusals.translated("cannot_beat", "7h does not beat 9h") == "7h does not beat 9h"
    assert refusals.translated("not_your_turn", "only the defender takes") == "Only the defender takes."


@pytest.mark.django_db
def test_the_table_page_and_the_lobby_in_russian(client, alice, bob, open_durak):
    table = open_durak()
    seat_and_start(table, alice, bob)
    client.force_login(speaks_russian(alice))
    page = client.get(reverse("durak_table", args=[table.pk])).text
    assert "Козырь" in page
    assert "Подкидной" in page
    assert "Ваши ходы" in page
    assert "Бито" in page or "Беру" in page or "Ходит" in page  # whoever moves first, in Russian
    hand = re.findall(r'role="img" aria-label="([^"]+)" data-card', page)
    assert len(hand) >= 6
    assert all(re.fullmatch(r"\w+ (пик|червей|бубен|треф)", name) for name in hand)
    lobby = client.get(reverse("lobby")).text
    assert ">Лобби</a>" in lobby
    assert "Открыть стол в дурака" in lobby
    assert "Идёт игра" in lobby

    client.force_login(bob)  # English by default
    page = client.get(reverse("durak_table", args=[table.pk])).text
    assert "Trump" in page
    assert "Козырь" not in page


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_russian_player_s_socket_fragments_are_russian_and_an_english_one_s_english(
    alice, bob, open_durak
):
    table = await database_sync_to_async(open_durak)()
    await database_sync_to_async(speaks_russian)(alice)
    clients = []
    for user in (alice, bob):
        cookie = await database_sync_to_async(session_cookie)(user)
        client = CommunicatorClient(user.username, f"/ws/durak/{table.pk}/", cookie=cookie)
        assert await client.connect()
        clients.append(client)
    russian, english = clients
    try:
        first = await russian.receive()
        assert "Ожидание: игра начнётся" in first
        assert ">Сесть</button>" in first
        assert "Waiting room" in await english.receive()

        await russian.send({"action": "sit", "v": 0})
        await russian.send({"action": "ready", "v": 0})  # stale: refused in Russian
        seen = ""
        while "durak-error" not in seen or "Пока вы смотрели" not in seen:
            seen += await russian.receive()
        assert "Встать из-за стола" in seen
        await english.quiet()
        assert all("Встать" not in text and "Ожидание" not in text for text in english.payloads)
        assert any(">Sit down</button>" in text for text in english.payloads)
    finally:
        for client in clients:
            await client.close()


def test_the_open_form_s_and_quick_play_s_refusals_are_translated_with_their_numbers():
    with translation.override("ru"):
        assert refusals.translated("insufficient_chips", "Your 40 chips cannot cover a stake of 1,000.") == (
            "Ваших фишек (40) не хватает на ставку 1,000."
        )
        assert refusals.translated("too_many_tables", "You have 3 open Durak tables already.").endswith(
            "открыто столов в дурака: 3."
        )
    assert refusals.translated("too_many_tables", "You have 3 open Durak tables already.") == (
        "You have 3 open Durak tables already."
    )
