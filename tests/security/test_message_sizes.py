"""Message sizes: what the server sends is never capped by the limit on what clients send, and stays small.

Daphne's `--websocket-max-message-size` caps the frames the server sends as well as those it reads (a larger
outgoing frame closed the socket with 1011), so the cluster starts Daphne without it and the consumer caps
what clients send itself. The lobby is paginated, chat lines are bounded in bytes, and a player opens at most
three tables.
"""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from blackjack import operations, services
from blackjack.models import RulePreset, Table
from blackjack.protocol import parse_message
from blackjack.rendering import live_html
from blackjack.services.staff import MAX_OPEN_TABLES_PER_PLAYER
from blackjack.viewmodel import LOBBY_PAGE_SIZE, lobby_section, viewer_view
from cards.errors import Refused
from live import chat
from live.consumer import FRAME_TOO_LARGE, MAX_OPEN_FRAME_BYTES
from live.models import ChatLine
from live.protocol import MAX_CHAT_BYTES
from tests.blackjack.wsclient import CommunicatorClient, SocketClient, session_cookie

#: The cap the cluster used to pass Daphne.
OLD_CAP = 16384


def _fill_chat(table, user, *, char: str = "&", lines: int = 30) -> None:
    """Chat lines as large as the parser lets through, of a character HTML escapes to five bytes."""
    text = char * (MAX_CHAT_BYTES // len(char.encode()))
    ChatLine.objects.bulk_create(
        ChatLine(game="blackjack", table_ref=table.pk, user=user, text=text) for _ in range(lines)
    )


@pytest.mark.django_db(transaction=True)
def test_a_message_over_16_kib_is_sent_and_the_socket_stays_open(servers, table, alice):
    """Through a real Daphne started as the cluster starts it: the HTML chat log of a full chat is over 16
    KiB; the browser gets it, and the same socket then carries the player's next message."""
    _fill_chat(table, alice, lines=29)
    server = servers()
    cookie = session_cookie(alice)
    version = Table.objects.values_list("version", flat=True).get(pk=table.pk)
    line = "&" * MAX_CHAT_BYTES

    async def scenario():
        client = SocketClient("alice", server.ws(f"/ws/tables/{table.pk}/"), cookie=cookie, origin=server.url)
        await client.connect()
        try:
            await client.receive(timeout=10)  # the first view
            await client.send({"action": "chat", "text": line})
            first = await client.receive(timeout=10)  # the chat log, its thirtieth line new
            await client.send({"action": "sit", "seat": 1, "v": version})
            second = await client.receive(timeout=10)
            return first, second, client.socket.close_code
        finally:
            await client.close()

    first, second, close_code = asyncio.run(scenario())
    assert 'id="chat-log"' in first
    assert len(first.encode()) > OLD_CAP
    assert "alice" in second.lower()  # the view of her sitting down
    assert close_code is None


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize("json_format", [True, False])
async def test_a_frame_over_the_cap_is_refused_clearly_and_closes_the_socket(table, alice, json_format):
    cookie = await database_sync_to_async(session_cookie)(alice)
    path = f"/ws/tables/{table.pk}/" + ("?format=json" if json_format else "")
    client = CommunicatorClient("alice", path, cookie=cookie)
    assert await client.connect()
    await client.receive()
    version = await database_sync_to_async(lambda: Table.objects.get(pk=table.pk).version)()
    padding = {"pad": "x" * MAX_OPEN_FRAME_BYTES}
    await client.send({"action": "sit", "seat": 1, "v": version, "HEADERS": padding})
    refusal = await client.receive()
    if json_format:
        assert refusal["type"] == "error"
        assert refusal["code"] == "bad_message"
        assert "too large" in refusal["message"]
    else:
        assert "too large" in refusal
    assert await client.closed_with() == FRAME_TOO_LARGE
    await client.close()
    assert await database_sync_to_async(lambda: Table.objects.get(pk=table.pk).version)() == version


@pytest.mark.django_db
def test_chat_lines_are_bounded_in_bytes_not_characters():
    euro = "\u20ac"  # three bytes of UTF-8
    accepted = parse_message(json.dumps({"action": "chat", "text": euro * 100, "v": 0}), html=False)
    assert accepted["text"] == euro * 100
    with pytest.raises(Refused) as refused:
        parse_message(json.dumps({"action": "chat", "text": euro * 101, "v": 0}), html=False)
    assert refused.value.code == "bad_message"
    assert "bytes" in refused.value.message


@pytest.mark.django_db
def test_the_chat_service_bounds_lines_in_bytes_too(table, alice):
    """A caller other than the parser (a bot tool, a later game) meets the same bound in the service."""
    euro = "\u20ac"
    chat.post(game="blackjack", table_id=table.pk, user=alice, text=euro * 100)
    with pytest.raises(Refused) as refused:
        chat.post(game="blackjack", table_id=table.pk, user=alice, text=euro * 101)
    assert refused.value.code == "bad_message"
    assert ChatLine.objects.filter(game="blackjack", table_ref=table.pk).count() == 1


@pytest.mark.django_db
def test_the_open_table_service_enforces_the_cap_itself(make_user):
    player = make_user("opener")
    preset = RulePreset.objects.get_or_create(name="Vegas Strip", defaults={"rules": {"decks": 6}})[0]
    for number in range(MAX_OPEN_TABLES_PER_PLAYER):
        services.open_table(
            user=player, name=f"T{number}", preset=preset, min_bet=10, max_bet=500, private=False
        )
    with pytest.raises(Refused) as refused:
        services.open_table(
            user=player, name="one more", preset=preset, min_bet=10, max_bet=500, private=True
        )
    assert refused.value.code == "too_many_tables"
    assert Table.objects.filter(created_by=player).count() == MAX_OPEN_TABLES_PER_PLAYER


@pytest.mark.django_db
def test_the_largest_chat_log_stays_small(table, alice):
    _fill_chat(table, alice)
    lines = chat.recent(game="blackjack", table_id=table.pk)
    html = render_to_string("live/chat.html#chat_log", {"chat": lines})
    # 30 lines of 300 bytes, five times as long once HTML-escaped: under 64 KiB (1 MiB is Daphne's limit).
    assert len(html.encode()) < 64 * 1024
    view = viewer_view(table_id=table.pk, user=alice)
    assert len(live_html(view, user=alice, error=None).encode()) < 16 * 1024  # no view carries the chat


@pytest.mark.django_db
def test_the_lobby_is_paginated_and_stays_small(make_table, alice):
    for number in range(LOBBY_PAGE_SIZE * 3 + 1):
        make_table(name=f"Table {number} " + "W" * 40)
    first, last = lobby_section(1), lobby_section(99)
    assert (first["page"], first["pages"], first["total"]) == (1, 4, LOBBY_PAGE_SIZE * 3 + 1)
    assert len(first["tables"]) == LOBBY_PAGE_SIZE
    assert (last["page"], len(last["tables"])) == (4, 1)
    assert len(json.dumps(first).encode()) < OLD_CAP
    html = render_to_string("blackjack/lobby_section.html", {"section": first, "user": AnonymousUser()})
    assert len(html.encode()) < OLD_CAP
    assert "?page=2" in html


@pytest.mark.django_db
def test_a_player_opens_at_most_three_tables_staff_more(make_user):
    player, staff = make_user("opener"), make_user("croupier", is_staff=True)
    preset = RulePreset.objects.get_or_create(name="Vegas Strip", defaults={"rules": {"decks": 6}})[0]
    form = {"preset": preset.pk, "min_bet": 10, "max_bet": 500}
    for user in (player, staff):
        browser = Client()
        browser.force_login(user)
        for number in range(MAX_OPEN_TABLES_PER_PLAYER + 1):
            response = browser.post(reverse("open_table"), {**form, "name": f"{user.username} {number}"})
        opened = Table.objects.filter(created_by=user, is_open=True).count()
        if user is player:
            assert response.status_code == 200
            assert f"You already have {MAX_OPEN_TABLES_PER_PLAYER} open tables" in response.content.decode()
            assert opened == MAX_OPEN_TABLES_PER_PLAYER
        else:
            assert response.status_code == 302
            assert opened == MAX_OPEN_TABLES_PER_PLAYER + 1
    operations.close_table(table_id=Table.objects.filter(created_by=player).first().pk)
    browser = Client()
    browser.force_login(player)
    assert browser.post(reverse("open_table"), {**form, "name": "again"}).status_code == 302


@pytest.mark.django_db
def test_the_lobby_page_and_its_socket_show_the_page_asked_for(make_table):
    for number in range(LOBBY_PAGE_SIZE + 1):
        make_table(name=f"Table {number}")
    last = Table.objects.order_by("-id").first()
    page = Client().get(reverse("lobby"), {"page": "2"}).content.decode()
    assert 'ws-connect="/ws/lobby/?page=2"' in page
    assert f'data-table="{last.pk}"' in page
    assert "Page 2 of 2" in page
    first = Client().get(reverse("lobby"), {"page": "x"}).content.decode()
    assert 'ws-connect="/ws/lobby/"' in first
    assert f'data-table="{last.pk}"' not in first


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_lobby_socket_sends_the_page_asked_for(make_table):
    def tables():
        for number in range(LOBBY_PAGE_SIZE + 1):
            make_table(name=f"Table {number}")

    await database_sync_to_async(tables)()
    client = CommunicatorClient("lobby", "/ws/lobby/?format=json&page=2")
    assert await client.connect()
    message = await client.receive()
    await client.close()
    assert (message["page"], message["pages"], message["total"]) == (2, 2, LOBBY_PAGE_SIZE + 1)
    assert len(message["tables"]) == 1
