"""The table and lobby consumers through real websockets (WebsocketCommunicator, full ASGI stack): who may
connect, who may act, refusals, stale versions, size cap, flooding, reconnecting, the HTML format and chat."""

import contextlib
import json
import time
from collections import Counter

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async

from accounts.audit import audit_ledger
from blackjack import services
from blackjack.models import Table
from live import chat
from live.chat import CHAT_LINES
from live.consumer import POLICY_VIOLATION, unwrapped
from live.models import ChatLine
from tests.blackjack.conftest import deal_cards
from tests.blackjack.wsclient import CommunicatorClient, assert_oob_fragment, move, session_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def table_path(table, *, json_format=True, token=None):
    query = "&".join(
        part for part in ("format=json" if json_format else "", f"token={token}" if token else "") if part
    )
    return f"/ws/tables/{table.pk}/" + (f"?{query}" if query else "")


@pytest_asyncio.fixture
async def connect():
    """`await connect(table, user=None, json_format=True)`: a connected client with its first state."""
    clients = []

    async def open_client(table, user=None, *, json_format=True, name=None, token=None):
        cookie = await database_sync_to_async(session_cookie)(user) if user is not None else None
        client = CommunicatorClient(
            name or (user.username if user else "spectator"),
            table_path(table, json_format=json_format, token=token),
            cookie=cookie,
        )
        assert await client.connect()
        clients.append(client)
        await client.receive()
        return client

    yield open_client
    # Connections left open would keep running their consumers into the next test.
    for client in clients:
        with contextlib.suppress(Exception):  # closed already
            await client.close()


async def db(function, *args, **kwargs):
    return await database_sync_to_async(function)(*args, **kwargs)


def table_version(table) -> int:
    return Table.objects.values_list("version", flat=True).get(pk=table.pk)


# --- connecting ------------------------------------------------------------------------------------------


async def test_spectator_watches_but_cannot_act(table, alice, connect):
    watcher = await connect(table)
    assert watcher.state["type"] == "state"
    assert watcher.state["table"]["id"] == table.pk
    assert watcher.state["you"]["is_spectator"] is True

    for message in ({"action": "sit", "seat": 1}, {"action": "chat", "text": "hi"}, {"action": "hit"}):
        await watcher.act(**message)
        error = await watcher.error()
        assert error["code"] == "not_authenticated"
    # Even a malformed frame gets the same answer: anonymous connections are not parsed at all.
    await watcher.send("not json")
    assert (await watcher.error())["code"] == "not_authenticated"
    assert await db(table_version, table) == watcher.version

    # The spectator still receives every change.
    player = await connect(table, alice)
    await player.act("sit", seat=3)
    state = await watcher.until_version(player.version + 1)
    assert state["table"]["seats"][2]["player"] == "alice"


async def test_foreign_origin_is_refused_at_the_handshake(table):
    client = CommunicatorClient(
        "evil", table_path(table), headers=[(b"origin", b"http://evil.example"), (b"host", b"127.0.0.1")]
    )
    assert await client.connect() is False


async def test_missing_origin_is_refused(table):
    client = CommunicatorClient("no-origin", table_path(table), headers=[(b"host", b"127.0.0.1")])
    assert await client.connect() is False


async def test_unknown_and_private_tables(make_table, alice, bob):
    private = await db(make_table, "Downtown", is_private=True, created_by=alice)
    missing = CommunicatorClient("x", "/ws/tables/999999/?format=json")
    assert await missing.connect() is False
    stranger = CommunicatorClient("bob", table_path(private), cookie=await db(session_cookie, bob))
    assert await stranger.connect() is False
    wrong = CommunicatorClient("bob", table_path(private, token="nope"), cookie=await db(session_cookie, bob))
    assert await wrong.connect() is False

    invited = CommunicatorClient("bob", table_path(private, token=private.private_token))
    assert await invited.connect() is True
    await invited.receive()
    assert invited.state["table"]["id"] == private.pk
    await invited.close()
    owner = CommunicatorClient("alice", table_path(private), cookie=await db(session_cookie, alice))
    assert await owner.connect() is True
    await owner.close()


# --- playing through the protocol ------------------------------------------------------------------------


async def seat_and_bet(a, b, bets=(10, 10)):
    """Alice takes seat 1 and Bob seat 2, both bet: the cards are dealt."""
    await move(a, "sit", seat=1, others=[b])
    await move(b, "sit", seat=2, others=[a])
    await move(a, "bet", amount=bets[0], others=[b])
    return await move(b, "bet", amount=bets[1], seat=2, others=[a])


async def test_two_players_play_a_round_to_settlement(table, alice, bob, connect, scripted_shoe, balance):
    # Alice 10 6 (16) hits a 5 -> 21; Bob 9 9 splits: 9+2 doubles with a T -> 21, 9+7 stands; dealer T 7 = 17.
    scripted_shoe(
        table, deal_cards(["Th", "6c"], ["9s", "9d"], dealer=["Td", "7s"], then=["5h", "2c", "Tc", "7d"])
    )
    a = await connect(table, alice)
    b = await connect(table, bob)

    await move(a, "sit", seat=1, others=[b])
    await move(b, "sit", seat=2, others=[a])
    assert a.state["table"]["phase"] == "betting"
    assert a.state["you"]["allowed_by_seat"] == {"1": ["bet"]}
    await move(a, "bet", amount=100, others=[b])
    state = await move(b, "bet", amount=50, seat=2, others=[a])
    assert state["table"]["phase"] == "playing"
    assert state["table"]["dealer"]["cards"] == ["Td", None]
    assert a.state["table"]["turn"] == {"seat": 1, "hand": 0}
    assert "hit" in a.state["you"]["allowed"]
    assert "hit" not in b.state["you"]["allowed"]

    await move(a, "hit", others=[b])  # 21: the hand stands by itself, the turn passes to Bob
    assert a.state["table"]["turn"] == {"seat": 2, "hand": 0}
    await move(b, "split", others=[a])
    await move(b, "double", seat=2, hand=0, others=[a])
    await move(b, "stand", seat=2, hand=1, others=[a])

    final = a.state["table"]
    assert final["phase"] == "settled"
    assert final["dealer"]["cards"] == ["Td", "7s"]
    assert final["dealer"]["hole_hidden"] is False
    assert [hand["result"] for hand in final["seats"][0]["hands"]] == ["win"]
    assert [hand["result"] for hand in final["seats"][1]["hands"]] == ["win", "lose"]
    assert a.state["you"]["balance"] == 10_000 + 100
    assert b.state["you"]["balance"] == 10_000 + 100 - 50
    assert await db(balance, alice) == 10_100
    assert await db(balance, bob) == 10_050
    assert "ready" in a.state["you"]["allowed"]
    report = await db(audit_ledger)
    assert report.ok, report.discrepancies


async def test_out_of_turn_and_other_seat_actions_are_refused(table, alice, bob, connect, scripted_shoe):
    scripted_shoe(table, deal_cards(["Th", "6c"], ["9s", "8d"], dealer=["Td", "7s"]))
    a = await connect(table, alice)
    b = await connect(table, bob)
    await seat_and_bet(a, b)
    assert a.state["table"]["turn"] == {"seat": 1, "hand": 0}
    before = await db(table_version, table)

    await b.act("hit")
    assert (await b.error())["code"] == "not_your_turn"
    await b.act("hit", seat=1)
    assert (await b.error())["code"] == "not_your_turn"
    await b.act("stand", seat=2, hand=0)
    assert (await b.error())["code"] == "not_your_turn"
    await a.act("hit", seat=1, hand=1)
    assert (await a.error())["code"] == "not_your_turn"
    await a.act("split")
    assert (await a.error())["code"] == "illegal_action"
    await a.act("bet", amount=10)
    assert (await a.error())["code"] == "illegal_action"
    await a.act("sit", seat=2)
    assert (await a.error())["code"] == "seat_taken"
    assert await db(table_version, table) == before
    await b.nothing_more()


async def test_stale_and_duplicate_actions_are_applied_once(table, alice, connect, balance, scripted_shoe):
    # No blackjack for alice: her bet deals a round that stays open (a random shoe settled it one time in 20).
    scripted_shoe(table, deal_cards(["Ts", "7h"], dealer=["6s", "Td"]))
    a = await connect(table, alice)
    await a.act("sit", seat=1)
    await a.until_version(a.version + 1)
    version = a.version
    bet = {"action": "bet", "amount": 40, "seat": 1, "v": version}
    await a.send(bet)
    await a.send(bet)  # a double click: the same message twice
    await a.until_version(version + 1)
    error = await a.error()
    assert error["code"] == "stale_version"
    fresh = await a.next_of("state")
    assert fresh["v"] == version + 1  # the current state follows the refusal
    assert await db(balance, alice) == 10_000 - 40

    await a.act("chat", text="stale versions do not matter for chat")  # chat carries v but is not versioned
    await a.send({"action": "leave", "v": version - 1})
    assert (await a.error())["code"] == "stale_version"
    assert (await a.next_of("state"))["v"] == version + 1


async def test_bad_messages_and_amounts(table, alice, connect):
    a = await connect(table, alice)
    await a.act("sit", seat=1)
    await a.until_version(a.version + 1)
    for frame, code in (
        ("{", "bad_message"),
        ('{"action": "dance", "v": 1}', "bad_message"),
        (json.dumps({"action": "bet", "amount": "100", "v": a.version}), "bad_amount"),
        (json.dumps({"action": "bet", "amount": 5, "v": a.version}), "bad_amount"),  # below the table minimum
        (json.dumps({"action": "bet", "amount": 10**9, "v": a.version}), "bad_amount"),
        (json.dumps({"action": "sit", "seat": "2", "v": a.version}), "bad_message"),
        (json.dumps({"action": "stand"}), "bad_message"),
    ):
        await a.send(frame)
        error = await a.error()
        assert error["code"] == code, (frame, error)
        assert error["message"]
    assert await db(table_version, table) == a.version


async def test_frames_over_4_kib_are_refused_and_change_nothing(table, alice, connect):
    a = await connect(table, alice)
    version = a.version
    await a.send(json.dumps({"action": "sit", "seat": 1, "v": version, "HEADERS": {"pad": "x" * 4100}}))
    error = await a.error()
    assert error["code"] == "bad_message"
    assert "too large" in error["message"]
    assert await db(table_version, table) == version
    # The same message under the cap is accepted.
    await a.send(json.dumps({"action": "sit", "seat": 1, "v": version, "HEADERS": {"pad": "x" * 3000}}))
    assert (await a.until_version(version + 1))["you"]["seats"] == [1]


async def test_flooding_is_rate_limited_then_closed(table, alice, connect):
    a = await connect(table, alice)
    for _ in range(20):
        await a.send("{}")
    await a.send({"action": "sit", "seat": 1, "v": a.version})  # the 21st message within a second
    codes = Counter([(await a.error())["code"] for _ in range(21)])
    assert codes == {"bad_message": 20, "rate_limited": 1}
    assert await db(table_version, table) == a.version  # the sit was not applied
    for _ in range(60):
        await a.send("{}")
    assert await a.closed_with() == POLICY_VIOLATION


async def test_a_flood_is_counted_on_arrival_even_when_the_server_is_slow(table, alice, connect, monkeypatch):
    a = await connect(table, alice)
    real_perform = services.perform

    def slow_perform(**kwargs):
        time.sleep(0.1)  # 21 frames take two seconds to work through: the client sent them at once
        return real_perform(**kwargs)

    monkeypatch.setattr(services, "perform", slow_perform)
    for _ in range(21):
        await a.send({"action": "leave", "v": a.version})
    codes = Counter([(await a.error())["code"] for _ in range(21)])
    assert codes == {"illegal_action": 20, "rate_limited": 1}  # not seated: each leave is refused


async def test_reconnect_restores_the_view(table, alice, bob, connect, scripted_shoe):
    scripted_shoe(table, deal_cards(["Th", "6c"], ["9s", "8d"], dealer=["Td", "7s"]))
    a = await connect(table, alice)
    b = await connect(table, bob)
    await seat_and_bet(a, b)
    before = a.state
    assert before["table"]["phase"] == "playing"

    await a.close()
    state = await b.until_version(before["v"] + 1)
    assert state["table"]["seats"][0]["connected"] is False  # Alice's seat waits for her (grace period)
    again = await connect(table, alice)
    # The first view comes before her socket tells the owner it is open: the version that clears her mark
    # follows it.
    if again.state["table"]["seats"][0]["connected"] is False:
        await again.until_version(again.version + 1)
    assert again.state["v"] > before["v"]

    def strip(view):
        return {**view, "v": None}

    assert strip(again.state) == strip(before)
    assert again.state["table"]["seats"][0]["connected"] is True


# --- the HTML format -------------------------------------------------------------------------------------


async def test_html_messages_are_out_of_band_fragments(table, alice, bob, connect, scripted_shoe):
    scripted_shoe(table, deal_cards(["Th", "6c"], dealer=["Ad", "Ks"]))
    page = await connect(table, alice, json_format=False)
    watcher = await connect(table, bob, json_format=False, name="bob-html")
    first = page.payloads[0]
    ids = assert_oob_fragment(first)
    assert {
        "table-status",
        "dealer",
        "seats",
        "controls",
        "event-log",
        "shoe-info",
        "flash",
    } <= set(ids)
    assert "nav-balance" in ids

    # Form values arrive as strings (htmx ws-send), with a HEADERS object.
    headers = {"HX-Request": "true", "HX-Trigger": "form-sit"}
    await page.send(
        {"action": "sit", "seat": "1", "v": str(await db(table_version, table)), "HEADERS": headers}
    )
    await page.receive()
    await page.send({"action": "bet", "amount": "25", "seat": "", "v": str(await db(table_version, table))})
    await page.receive()
    # Insurance window (ace up): the form sends "true"/"false".
    await page.send({"action": "insurance", "accept": "false", "v": str(await db(table_version, table))})
    await page.receive()
    # A refusal comes back as the #flash fragment.
    await page.send({"action": "bet", "amount": "abc", "v": "0"})
    flash = await page.receive()
    assert assert_oob_fragment(flash) == ["flash"]
    assert "whole number of chips" in flash
    # A stale version brings the flash, the version the forms send and what the page lacks of the fresh
    # state in one message: here nothing more (the page has the table's latest version already).
    await page.send({"action": "hit", "v": "0"})
    stale = await page.receive()
    assert "flash-stale_version" in stale
    assert sorted(assert_oob_fragment(stale)) == ["flash", "table-version"]

    await drain(watcher)
    assert len(watcher.payloads) >= 4  # the first view, then sit, bet and insurance
    for fragment in page.payloads + watcher.payloads:
        assert_oob_fragment(fragment)


async def drain(client) -> None:
    """Receive until nothing more arrives."""
    while True:
        try:
            await client.receive(timeout=0.3)
        except TimeoutError:
            return


# --- chat ------------------------------------------------------------------------------------------------


async def test_chat_is_stored_limited_and_escaped(table, alice, bob, connect):
    a = await connect(table, alice)
    html = await connect(table, bob, json_format=False)
    script = "<script>alert('x')</script> & hi"
    await a.act("chat", text=f"  {script}  ")
    message = await a.next_of("chat")
    assert message["text"] == script  # raw text, JSON-encoded
    assert message["from"] == "alice"
    assert message["at"]
    fragment = await html.receive()
    assert assert_oob_fragment(fragment) == ["chat-log"]
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; hi" in fragment
    assert "<script>" not in fragment
    stored = await db(lambda: list(ChatLine.objects.values_list("text", flat=True)))
    assert stored == [script]

    await a.act("chat", text="x" * 301)
    assert (await a.error())["code"] == "bad_message"
    await a.act("chat", text="   ")
    assert (await a.error())["code"] == "bad_message"
    assert await db(ChatLine.objects.count) == 1
    # The chat is the site's: no state carries it (the page shows its last lines).
    await a.act("sit", seat=1)
    state = await a.until_version(a.version + 1)
    assert "chat" not in state["table"]


async def test_emotes_reach_everyone_unstored_and_unknown_ones_are_refused(
    table, alice, bob, connect, monkeypatch
):
    monkeypatch.setattr(chat, "CHAT_WINDOW_SECONDS", 10**10)  # one window of the chat limit for the test
    a = await connect(table, alice)
    html = await connect(table, bob, json_format=False)
    version = await db(table_version, table)
    await a.act("emote", emote="gg")
    message = await a.next_of("emote")
    assert {key: message[key] for key in ("emote", "text", "from", "display_name")} == {
        "emote": "gg",
        "text": "GG",
        "from": "alice",
        "display_name": alice.display_name or "alice",
    }
    assert message["at"].endswith("Z")
    fragment = await html.receive()
    assert assert_oob_fragment(fragment) == ["emote-log"]
    assert 'data-from="alice"' in fragment
    assert "GG" in fragment
    # Ephemeral: no chat line, no new version.
    assert await db(ChatLine.objects.count) == 0
    assert await db(table_version, table) == version

    await a.act("emote", emote="<b>rude</b>")
    error = await a.error()
    assert error["code"] == "bad_message"
    assert "unknown emote" in error["message"]
    assert "thumbs_up" in error["message"]
    await html.nothing_more()
    assert await db(table_version, table) == version

    # Emotes count against the chat limit: with the one sent above, CHAT_LINES in all, then refused.
    for _ in range(CHAT_LINES - 1):
        await a.act("emote", emote="party")
        assert (await a.next_of("emote"))["text"] == "\N{PARTY POPPER}"
    await a.act("chat", text="one more")
    refusal = await a.error()
    assert refusal["code"] == "rate_limited"
    assert "emotes" in refusal["message"]
    assert await db(ChatLine.objects.count) == 0


async def test_lean_states_leave_out_the_log(table, alice, bob, connect):
    full = await connect(table, alice)
    cookie = await database_sync_to_async(session_cookie)(bob)
    lean = CommunicatorClient("lean", f"/ws/tables/{table.pk}/?format=json&log=off", cookie=cookie)
    assert await lean.connect()
    try:
        first = await lean.receive()
        assert "events" not in first["table"]
        assert "chat" not in first["table"]
        await full.act("chat", text="hello")
        assert (await lean.next_of("chat"))["text"] == "hello"  # chat lines still arrive on their own
        await full.act("sit", seat=1)
        wide = await full.until_version(full.version + 1)
        narrow = await lean.until_version(wide["v"])
        assert wide["table"]["events"]
        # Everything else is the same state.
        trimmed = {key: value for key, value in wide["table"].items() if key != "events"}
        assert narrow["table"] == trimmed
        assert narrow["you"]["username"] == "bob"
        assert narrow["you"]["can_sit"] is True
        await lean.act("sit", seat=2)  # a lean client plays as any other
        assert (await lean.until_version(narrow["v"] + 1))["table"]["seats"][1]["player"] == "bob"
    finally:
        await lean.close()


# --- lobby -----------------------------------------------------------------------------------------------


async def test_lobby_streams_public_tables(make_table, alice, connect):
    public = await db(make_table)
    await db(make_table, "Downtown", is_private=True)
    lobby = CommunicatorClient("lobby", "/ws/lobby/?format=json")
    assert await lobby.connect()
    message = await lobby.receive()
    assert message["type"] == "lobby"
    assert [row["id"] for row in message["tables"]] == [public.pk]
    assert message["tables"][0]["seats_taken"] == 0

    player = await connect(public, alice)
    await player.act("sit", seat=4)
    update = await lobby.receive()
    assert update["tables"][0]["seats_taken"] == 1
    assert update["tables"][0]["phase"] == "betting"
    await lobby.close()


async def test_lobby_html_is_one_out_of_band_fragment(make_table, alice):
    await db(make_table, name="<b>Bold</b> table")
    lobby = CommunicatorClient("lobby", "/ws/lobby/", cookie=await db(session_cookie, alice))
    assert await lobby.connect()
    fragment = await lobby.receive()
    await lobby.close()
    assert assert_oob_fragment(fragment) == ["lobby-tables", "durak-tables"]
    assert "&lt;b&gt;Bold&lt;/b&gt; table" in fragment
    assert "<b>Bold</b>" not in fragment


async def test_the_consumer_keeps_the_user_out_of_channels_lazy_wrapper(django_user_model):
    from channels.auth import UserLazyObject

    user = django_user_model(username="plain")
    wrapped = UserLazyObject()
    wrapped._wrapped = user
    assert unwrapped(wrapped) is user
    assert unwrapped(user) is user
    with pytest.raises(ValueError, match="before it is ready"):
        unwrapped(UserLazyObject())  # as reading it would: the middleware has not resolved it
