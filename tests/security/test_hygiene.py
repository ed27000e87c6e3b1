"""The smaller findings: per-user chat limits, a strict websocket Origin check, unknown websocket paths,
look-alike display names, invisible characters in chat, and no test host in the production defaults."""

import json
import os
import subprocess
import sys

import pytest
from channels.db import database_sync_to_async
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from accounts.forms import ProfileForm, RegistrationForm
from accounts.names import skeleton
from blackjack.protocol import parse_message
from live import chat
from live.chat import CHAT_LINES, CHAT_WINDOW_SECONDS
from live.models import ChatLine
from tests.blackjack.wsclient import CommunicatorClient, session_cookie


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


# --- chat ---------------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_chat_limit_is_per_user_across_sockets(table, alice, bob, monkeypatch):
    # One window for the whole test (the limit's own window ends are tested below, with a given clock).
    monkeypatch.setattr(chat, "CHAT_WINDOW_SECONDS", 10**10)
    cookie = await database_sync_to_async(session_cookie)(alice)
    path = f"/ws/tables/{table.pk}/?format=json"
    sockets = [CommunicatorClient(f"alice{n}", path, cookie=cookie) for n in range(3)]
    for socket in sockets:
        assert await socket.connect()
        await socket.receive()
    refusals = []
    for line in range(CHAT_LINES + 4):
        socket = sockets[line % 3]
        await socket.send({"action": "chat", "text": f"line {line}", "v": 0})
        while True:  # until this line comes back as a chat message, or its refusal
            reply = await socket.receive()
            if reply["type"] == "error":
                refusals.append(reply)
                break
            if reply["type"] == "chat" and reply["text"] == f"line {line}":
                break
    posted = await database_sync_to_async(lambda: ChatLine.objects.filter(user=alice).count())()
    assert posted == CHAT_LINES
    assert len(refusals) == 4
    assert {refusal["code"] for refusal in refusals} == {"rate_limited"}
    assert f"at most {CHAT_LINES}" in refusals[0]["message"]
    # Bob is not limited by Alice's lines.
    bobs = CommunicatorClient("bob", path, cookie=await database_sync_to_async(session_cookie)(bob))
    assert await bobs.connect()
    await bobs.receive()
    await bobs.send({"action": "chat", "text": "hello", "v": 0})
    assert (await bobs.next_of("chat"))["text"] == "hello"
    for socket in [*sockets, bobs]:
        await socket.close()


def test_the_chat_limit_window_moves_on():
    now = 1_000_000.0 * CHAT_WINDOW_SECONDS
    assert [chat.allowed(7, now=now + n / 10) for n in range(CHAT_LINES + 1)] == [True] * CHAT_LINES + [False]
    assert chat.allowed(8, now=now)  # another user
    assert chat.allowed(7, now=now + CHAT_WINDOW_SECONDS)  # the next window


def test_bidi_overrides_and_zero_width_characters_are_removed_from_chat():
    frame = json.dumps({"action": "chat", "text": "\u202egnp.exe \u200bhi\u2066\u200d!\ufeff", "v": 0})
    assert parse_message(frame, html=False)["text"] == "gnp.exe hi!"
    invisible_only = json.dumps({"action": "chat", "text": "\u200b\u202e", "v": 0})
    with pytest.raises(Exception, match="empty"):
        parse_message(invisible_only, html=False)


# --- websocket origins and paths ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("origin", "host", "accepted"),
    [
        (b"http://127.0.0.1:8001", b"127.0.0.1:8001", True),  # the control
        (b"http://localhost", b"localhost", True),
        (b"https://127.0.0.1:8001", b"127.0.0.1:8001", False),  # another scheme
        (b"http://127.0.0.1:9999", b"127.0.0.1:8001", False),  # another port of an allowed host
        (b"http://127.0.0.1", b"127.0.0.1:8001", False),
        (b"http://localhost:8001", b"127.0.0.1:8001", False),  # another allowed host
        (b"http://127.0.0.1:8001/path", b"127.0.0.1:8001", False),
        (b"http://user@127.0.0.1:8001", b"127.0.0.1:8001", False),
        (b"ftp://127.0.0.1:8001", b"127.0.0.1:8001", False),
        (b"http://evil.example", b"evil.example", False),  # a host not allowed, even if it asked for itself
    ],
)
async def test_the_origin_must_match_scheme_host_and_port(table, origin, host, accepted):
    client = CommunicatorClient(
        "origin", f"/ws/tables/{table.pk}/?format=json", headers=[(b"origin", origin), (b"host", host)]
    )
    assert await client.connect() is accepted
    if accepted:
        await client.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_trusted_origin_is_accepted(table, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://play.example"]
    client = CommunicatorClient(
        "trusted", "/ws/lobby/", headers=[(b"origin", b"https://play.example"), (b"host", b"127.0.0.1")]
    )
    assert await client.connect()
    await client.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize(
    "path", ["/ws/tables/-1/", "/ws/nothing/", "/ws/tables/abc/", "/", "/ws/lobby/extra/"]
)
async def test_unknown_websocket_paths_are_refused_cleanly(path):
    client = CommunicatorClient("lost", path)
    assert await client.connect() is False  # refused at the handshake (HTTP 403), no server error


def test_production_defaults_allow_no_test_host():
    script = "from django.conf import settings; print(','.join(settings.ALLOWED_HOSTS))"
    env = {key: value for key, value in os.environ.items() if key != "ALLOWED_HOSTS"}
    env |= {"DEBUG": "0", "SECRET_KEY": "x" * 50, "DJANGO_SETTINGS_MODULE": "cardroom.settings"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); " + script],
        env=env, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert result.stdout.split() == ["127.0.0.1,localhost,[::1]"]


# --- names --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "look_alike",
    [
        "\uff21\uff4c\uff49\uff43\uff45",  # full-width "Alice"
        "\u0410lice",  # Cyrillic A
        "Al\u0456ce",  # Cyrillic i
        "\u0391lice",  # Greek Alpha
        "ALICE",
        "Alíce",  # an accent
    ],
)
def test_look_alike_names_share_a_skeleton(look_alike):
    assert skeleton(look_alike) == skeleton("Alice")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "look_alike", ["\uff21\uff4c\uff49\uff43\uff45", "\u0410lice", "\u0410LICE", "Al\u0456ce"]
)
def test_a_look_alike_display_name_is_refused(alice, bob, look_alike):
    form = ProfileForm({"display_name": look_alike, "avatar": "spade", "email": ""}, instance=bob)
    assert not form.is_valid()
    assert form.has_error("display_name", "impersonation")


@pytest.mark.django_db
def test_a_look_alike_username_is_refused_at_registration(alice):
    form = RegistrationForm(
        {"username": "\u0430lice", "password1": "Long-enough-pass-93", "password2": "Long-enough-pass-93"}
    )
    assert not form.is_valid()
    assert form.has_error("username", "impersonation")
    house = RegistrationForm(
        {"username": "D\u0435aler", "password1": "Long-enough-pass-93", "password2": "Long-enough-pass-93"}
    )
    assert house.has_error("username", "impersonation")


@pytest.mark.django_db
def test_an_unrelated_name_is_accepted(alice, bob):
    browser = Client()
    browser.force_login(bob)
    response = browser.post(reverse("profile"), {"display_name": "Alicia", "avatar": "spade", "email": ""})
    assert response.status_code == 302
