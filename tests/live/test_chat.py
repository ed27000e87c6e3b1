"""The site's chat and quick reactions (`live.chat`), at every game's table: a Durak table has them as a
blackjack table does, by registering; lines are stored per game and table, reach every viewer (a JSON `chat`
message, the page's chat log again), are bounded and rate-limited per user; a spectator or a suspended account
cannot post."""

import pytest
from channels.db import database_sync_to_async

from cards.errors import Refused
from live import chat
from live.models import ChatLine
from tests.durak.live.conftest import open_durak_table

pytestmark = pytest.mark.django_db


def test_lines_are_kept_per_game_and_table_and_the_log_shows_the_last_ones(alice, bob):
    for n in range(35):
        chat.post(game="durak", table_id=1, user=alice if n % 2 else bob, text=f"  line {n}  ")
    chat.post(game="blackjack", table_id=1, user=alice, text="another game's table 1")
    lines = chat.recent(game="durak", table_id=1)
    assert [line["text"] for line in lines] == [f"line {n}" for n in range(5, 35)]
    assert lines[-1]["from"] == "bob"  # line 34
    assert [line["text"] for line in chat.recent(game="blackjack", table_id=1)] == ["another game's table 1"]
    assert chat.line(game="blackjack", table_id=1, line_id=lines[-1]["id"]) is None  # not that table's


def test_the_service_bounds_lines_and_checks_who_posts(alice, make_user, django_user_model):
    for text in ("   ", "x" * 301, "\u20ac" * 101):
        with pytest.raises(Refused) as refused:
            chat.post(game="durak", table_id=1, user=alice, text=text)
        assert refused.value.code == "bad_message"
    django_user_model.objects.filter(pk=alice.pk).update(suspended=True)
    alice.refresh_from_db()
    with pytest.raises(Refused) as refused:
        chat.check(alice)
    assert refused.value.code == "suspended"
    assert not ChatLine.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_durak_table_has_the_sites_chat_and_reactions(alice, bob, connect):
    table = await database_sync_to_async(open_durak_table)(alice)
    player = await connect(table, alice)
    watcher = await connect(table, bob)
    page = await connect(table, bob, json_format=False)
    spectator = await connect(table)
    await player.send({"action": "chat", "text": "<b>good luck</b>"})
    line = await watcher.next_of("chat")
    assert (line["from"], line["text"]) == ("alice", "<b>good luck</b>")
    fragment = await page.receive()
    assert 'id="chat-log"' in fragment
    assert "&lt;b&gt;good luck&lt;/b&gt;" in fragment
    await player.send({"action": "emote", "emote": "gg"})
    assert (await watcher.next_of("emote"))["text"] == "GG"
    assert 'id="emote-log"' in await page.receive()
    await spectator.send({"action": "chat", "text": "hi"})
    assert (await spectator.error())["code"] == "not_authenticated"
    stored = await database_sync_to_async(lambda: list(ChatLine.objects.values_list("game", "table_ref")))()
    assert stored == [("durak", table.pk)]
