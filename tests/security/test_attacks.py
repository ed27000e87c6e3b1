"""Security checks across the site: websocket origins, anonymous connections, CSRF on every POST route, HTML
injection through chat and names, and log-in throttling under a scripted attack."""

import uuid

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RoutePattern

from accounts import throttling
from blackjack import services
from blackjack.engine.rules import PRESETS
from blackjack.models import RulePreset, Table
from live import chat
from tests.blackjack.wsclient import CommunicatorClient, session_cookie

PAYLOAD = '<script>alert("owned")</script><img src=x onerror=alert(1)>'
NAME_PAYLOAD = "<script>alert(1)</script>"  # display names hold at most 40 characters
PASSWORD = "Correct-horse-battery-9"


@pytest.fixture
def player(db):
    return get_user_model().objects.create_user(f"p{uuid.uuid4().hex[:10]}", password=PASSWORD)


@pytest.fixture
def table(db):
    preset, _ = RulePreset.objects.get_or_create(
        name="Vegas Strip", defaults={"rules": PRESETS["Vegas Strip"].to_dict()}
    )
    return services.create_table(name="Security", preset=preset, min_bet=10, max_bet=500)


# --- websockets -------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize(
    "path", ["/ws/tables/{id}/?format=json", "/ws/tables/{id}/", "/ws/lobby/?format=json"]
)
@pytest.mark.parametrize(
    "origin", [b"http://evil.example", b"http://127.0.0.1.evil.example", b"null", b"https://localhost.evil"]
)
async def test_foreign_origins_are_refused_at_the_handshake(table, player, path, origin):
    cookie = await database_sync_to_async(session_cookie)(player)
    client = CommunicatorClient(
        "cross-site",
        path.format(id=table.pk),
        cookie=cookie,
        headers=[(b"origin", origin), (b"host", b"127.0.0.1")],
    )
    assert not await client.connect()
    same_site = CommunicatorClient("same-site", path.format(id=table.pk), cookie=cookie)
    assert await same_site.connect()  # the control: the same request from the site's own origin is accepted
    await same_site.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize("json_format", [True, False])
async def test_anonymous_connections_cannot_act(table, json_format):
    watcher = CommunicatorClient(
        "anonymous", f"/ws/tables/{table.pk}/" + ("?format=json" if json_format else "")
    )
    assert await watcher.connect()
    await watcher.receive()
    version = await database_sync_to_async(lambda: Table.objects.get(pk=table.pk).version)()
    for action in (
        {"action": "sit", "seat": 1},
        {"action": "bet", "amount": 10},
        {"action": "chat", "text": "hi"},
    ):
        await watcher.send({**action, "v": version})
        reply = await watcher.receive()
        if json_format:
            assert reply["code"] == "not_authenticated"
        else:
            assert 'id="flash"' in reply
            assert "Log in" in reply
    assert await database_sync_to_async(lambda: Table.objects.get(pk=table.pk).version)() == version
    await watcher.close()


# --- CSRF -------------------------------------------------------------------------------------------------


def _routes(patterns, prefix=""):
    """(path with sample arguments, route name) for every route the URLconf defines with path()."""
    for entry in patterns:
        if not isinstance(entry.pattern, RoutePattern):
            continue  # regular-expression routes (a few admin ones) have no sample arguments
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            for converter, sample in (("int", "1"), ("str", "x"), ("slug", "x"), ("path", "x")):
                while f"<{converter}:" in route:
                    start = route.index(f"<{converter}:")
                    route = route[:start] + sample + route[route.index(">", start) + 1 :]
            yield "/" + route, entry.name


FORMS = {
    "login",
    "register",
    "logout",
    "profile",
    "claim_grant",
    "password_change",
    "password_reset",
    "open_table",
    "sit",
}


@pytest.mark.django_db
def test_every_post_without_a_csrf_token_is_refused(player, table):
    routes = list(_routes(get_resolver().url_patterns))
    assert {name for _, name in routes} >= FORMS  # the site's forms are all enumerated
    client = Client(enforce_csrf_checks=True)
    client.force_login(player)
    accepted = [
        (path, response.status_code)
        for path, _ in routes
        if (response := client.post(path, {"username": player.username, "text": "x"})).status_code != 403
    ]
    assert accepted == []
    # The control: with its token the log-in form is processed (not refused by the CSRF check).
    anonymous = Client(enforce_csrf_checks=True)
    page = anonymous.get(reverse("login"))
    token = page.cookies["csrftoken"].value
    response = anonymous.post(
        reverse("login"), {"username": player.username, "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302


# --- HTML injection ---------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_chat_and_names_cannot_inject_html(table, player):
    def setup():
        # A name that skipped validation (set in the database directly) must still be shown as text.
        get_user_model().objects.filter(pk=player.pk).update(display_name=NAME_PAYLOAD)
        chat.post(game="blackjack", table_id=table.pk, user=player, text=PAYLOAD)
        version = Table.objects.get(pk=table.pk).version
        services.perform(
            table_id=table.pk, user=player, action={"action": "sit", "seat": 1}, expected_version=version
        )

    await database_sync_to_async(setup)()

    def pages():
        client = Client()
        client.force_login(player)
        paths = [
            f"/tables/{table.pk}/",
            "/",
            "/blackjack/leaderboard/",
            "/durak/leaderboard/",
            f"/players/{player.username}/",
            "/accounts/profile/",
        ]
        return {path: client.get(path) for path in paths}

    for path, response in (await database_sync_to_async(pages)()).items():
        assert response.status_code == 200, path
        body = response.content.decode()
        assert "<script>alert" not in body, path
        assert "<img src=x" not in body, path
    table_page = (await database_sync_to_async(pages)())[f"/tables/{table.pk}/"].content.decode()
    assert "&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;" in table_page

    cookie = await database_sync_to_async(session_cookie)(player)
    live = CommunicatorClient("html", f"/ws/tables/{table.pk}/", cookie=cookie)
    assert await live.connect()
    fragments = [await live.receive()]
    await live.send({"action": "chat", "text": PAYLOAD})
    fragments.append(await live.receive())  # the chat log
    for fragment in fragments:
        assert "<script>alert" not in fragment
        assert "<img src=x" not in fragment
    assert "&lt;script&gt;" in fragments[1]
    await live.close()
    # The JSON protocol carries the text as data, for the client to show as text.
    data = CommunicatorClient("json", f"/ws/tables/{table.pk}/?format=json", cookie=cookie)
    assert await data.connect()
    await data.receive()
    await data.send({"action": "chat", "text": PAYLOAD})
    assert (await data.next_of("chat"))["text"] == PAYLOAD
    await data.close()


@pytest.mark.django_db
def test_the_profile_form_refuses_markup_in_names(player):
    client = Client()
    client.force_login(player)
    response = client.post(reverse("profile"), {"display_name": PAYLOAD, "avatar": "spade", "email": ""})
    assert response.status_code == 200  # the form again, with its error
    player.refresh_from_db()
    assert player.display_name == ""


# --- log-in throttling --------------------------------------------------------------------------------------


def _address() -> str:
    """A private IPv4 address unused by earlier runs (throttle counters may outlive a run in shared Redis)."""
    bits = uuid.uuid4().int
    return f"10.{bits >> 16 & 255}.{bits >> 8 & 255}.{bits & 255}"


def _attempt(username, password, ip):
    return Client().post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip)


@pytest.mark.django_db
def test_a_stranger_cannot_lock_a_player_out(player):
    """Failures from address A lock that account from A only: its owner logs in from address B."""
    stranger = _address()
    statuses = [_attempt(player.username, f"guess-{n}", stranger).status_code for n in range(30)]
    assert statuses[: throttling.MAX_FAILURES] == [200] * throttling.MAX_FAILURES  # checked and refused
    assert set(statuses[throttling.MAX_FAILURES :]) == {429}  # then that address is refused
    assert _attempt(player.username, PASSWORD, stranger).status_code == 429  # even the right password
    assert _attempt(player.username, PASSWORD, _address()).status_code == 302  # the owner, elsewhere


@pytest.mark.django_db
def test_scripted_guessing_from_one_address_is_locked_out(player):
    ip = _address()
    limit = throttling.MAX_FAILURES_PER_NETWORK
    names = [f"victim{n}-{uuid.uuid4().hex[:6]}" for n in range(limit + 10)]
    statuses = [_attempt(name, "guess", ip).status_code for name in names]
    assert statuses[:limit] == [200] * limit
    assert set(statuses[limit:]) == {429}
    assert _attempt(player.username, PASSWORD, ip).status_code == 429  # a real account, from that address
    assert _attempt(player.username, PASSWORD, _address()).status_code == 302  # elsewhere it logs in


@pytest.mark.django_db
def test_guessing_one_account_from_many_addresses_spares_the_owners_network(player):
    home = _address()
    assert _attempt(player.username, PASSWORD, home).status_code == 302  # the owner's usual network
    limit = throttling.MAX_FAILURES_PER_ACCOUNT
    statuses = [_attempt(player.username, f"guess-{n}", _address()).status_code for n in range(limit + 5)]
    assert statuses[:limit] == [200] * limit
    assert set(statuses[limit:]) == {429}  # new addresses are refused for this account now
    assert _attempt(player.username, PASSWORD, home).status_code == 302  # its owner still gets in
