"""The Durak table's websocket over the in-memory channel layer: a player and a bot play a game to its end,
no payload ever carries a card its viewer may not see, bad input is refused and changes nothing."""

import json
import re

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from accounts.audit import audit_ledger
from cards.fairness import seed_hash
from durak.actor import DurakActor
from durak.models import DurakAction, DurakGame, DurakSeat, DurakTable
from tests.blackjack.wsclient import CommunicatorClient, session_cookie
from tests.durak.live.conftest import simple_move

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
CARD = re.compile(r"^[6789TJQKA][shdc]$")
DONE_MARK = 'id="durak-result"'  # a finished game: the seed is out, nothing is hidden any more


@pytest.fixture(autouse=True)
def _bots_move_at_once():
    with override_settings(LIVE_TIMERS=True, DURAK_BOT_SECONDS=0.0):
        yield


def cards_in(value) -> set[str]:
    """Every card string anywhere in a payload."""
    if isinstance(value, str):
        return {value} if CARD.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


def visible(state: dict) -> set[str]:
    """The cards this viewer may see: their hand, the table, the trump, the last move's cards (played
    face up; a beat that ended the bout sent them to the discard pile) and the last bout's (each was face up
    on the table: the test checks that apart)."""
    game = state["game"]
    if game is None:
        return set()
    table = {card for pair in game["table"] for card in pair if card}
    last = cards_in(game["last"]["action"]) if game.get("last") else set()
    return set(game["hand"]) | table | {game["trump"]} | last | cards_in(game.get("last_bout"))


async def test_a_player_and_a_bot_play_a_game_to_the_end_over_the_socket(alice, bob, open_durak, connect):
    table = await database_sync_to_async(open_durak)(stake=20)
    player = await connect(table, alice)
    watcher = await connect(table, bob)
    page_watcher = await connect(table, json_format=False)  # an anonymous spectator's page
    await player.act("sit")
    await player.until_version(1)
    await player.act("add_bot")
    await player.until_version(2)
    committed = player.state["table"]["next_seed_hash"]  # before the player's seed is given
    await player.act("start")
    await player.until_version(3)
    assert player.state["game"]["seed_hash"] == committed
    assert player.state["table"]["next_seed_hash"] != committed  # the next game's, committed anew
    for _ in range(400):
        state = player.state
        if state["table"]["status"] != "playing":
            break
        me = state["you"]["seat"]
        if state["to_act"] == me and (move := simple_move(state["game"])) is not None:
            await player.send({**move, "v": state["v"]}, paced=True)
            await player.until_version(state["v"] + 1)
        else:
            await player.until_version(state["v"] + 1)  # the bot's move, on its timer
    else:
        raise AssertionError("the game did not end")
    assert state["game"]["finished"]
    assert seed_hash(state["game"]["server_seed"]) == committed  # revealed at the end
    await watcher.until_version(state["v"])
    game = await database_sync_to_async(DurakGame.objects.get)()
    assert game.finished
    assert await database_sync_to_async(DurakAction.objects.count)() == state["v"] - 3
    assert (await database_sync_to_async(audit_ledger)()).ok
    # Hidden information: every payload, to the player and to the spectator, holds only what its viewer
    # may see (the spectator: no hand at all).
    for client in (player, watcher):
        face_up: set[str] = set()  # every card this client was shown on the table so far
        for text in client.payloads:
            payload = json.loads(text)
            if payload.get("type") != "state" or payload["game"] is None:
                continue
            if payload["game"]["finished"]:
                continue  # the deck's seed is out: nothing is hidden any more
            game = payload["game"]
            face_up |= {card for pair in game["table"] for card in pair if card}
            face_up |= cards_in(game["last"]["action"]) if game.get("last") else set()
            assert cards_in(game.get("last_bout")) <= face_up, (client.name, payload["v"])
            assert cards_in(payload) <= visible(payload), (client.name, payload["v"])
            if client is watcher:
                assert payload["game"]["hand"] == []
                assert payload["game"]["allowed"] == []
    # The page's fragments: the cards drawn for the spectator are the table's and the trump, at each version.
    public = {}
    for text in player.payloads:
        payload = json.loads(text)
        if payload.get("type") == "state" and payload["game"] is not None:
            game = payload["game"]
            public[payload["v"]] = (
                {card for pair in game["table"] for card in pair if card}
                | {game["trump"]}
                | cards_in(game.get("last_bout"))
            )
    while True:  # everything the page was sent
        try:
            await page_watcher.receive(timeout=0.3)
        except TimeoutError:
            break
    checked = 0
    for text in page_watcher.payloads:
        version = re.search(r'id="durak-status"[^>]*data-v="(\d+)"', text)
        if version is None or int(version.group(1)) not in public or DONE_MARK in text:
            continue
        assert set(re.findall(r'data-card="([^"]+)"', text)) <= public[int(version.group(1))]
        assert "card-button" not in text  # no hand at all
        checked += 1
    assert checked > 10


async def test_bad_input_is_refused_with_a_clear_error_and_changes_nothing(alice, open_durak, connect):
    table = await database_sync_to_async(open_durak)()
    player = await connect(table, alice)
    version = player.version
    bad = [
        ("not json", "bad_message"),
        (json.dumps([1, 2]), "bad_message"),
        (json.dumps({"action": "sit", "admin": True, "v": version}), "bad_message"),
        (json.dumps({"action": "attack", "card": "7s", "v": version}), "not_seated"),
        (json.dumps({"action": "fly", "v": version}), "bad_message"),
        (json.dumps({"action": "sit", "v": "x"}), "bad_message"),
        (json.dumps({"action": "sit"}), "bad_message"),  # the version the sender saw is required
        (json.dumps({"action": "sit", "v": version + 5}), "stale_version"),
        (json.dumps({"action": "start", "v": version}), "not_seated"),
        # Frames that used to close the socket (issue 34): a digit that int() refuses, a lone surrogate in a
        # seed or a card, a NUL in a seed, a version too large for the database or the channel layer.
        (json.dumps({"action": "take", "v": "\u00b2"}), "bad_message"),
        ('{"action": "ready", "seed": "\\ud800", "v": ' + str(version) + "}", "bad_message"),
        ('{"action": "attack", "card": "6\\ud800", "v": ' + str(version) + "}", "bad_message"),
        (json.dumps({"action": "ready", "seed": "a\u0000b", "v": version}), "bad_message"),
        (json.dumps({"action": "take", "v": 10**30}), "bad_message"),
        (json.dumps({"action": "beat", "card": "2s", "target": "7s", "v": version}), "bad_message"),
    ]
    for text, code in bad:
        await player.send(text)
        error = await player.error()
        assert error["code"] == code, text
        assert error["message"]
    stored = await database_sync_to_async(DurakTable.objects.get)(pk=table.pk)
    assert stored.version == version


async def test_a_spectator_cannot_act(alice, open_durak, connect):
    table = await database_sync_to_async(open_durak)()
    spectator = await connect(table)
    await spectator.send({"action": "sit", "v": 0})
    assert (await spectator.error())["code"] == "not_authenticated"


async def test_the_page_format_is_out_of_band_fragments(alice, open_durak, connect):
    table = await database_sync_to_async(open_durak)()
    page = await connect(table, alice, json_format=False)
    first = page.payloads[0]  # a fresh page: every region
    for region in ("durak-status", "durak-seats", "durak-board", "durak-hand", "durak-controls"):
        assert f'id="{region}"' in first
    await page.send({"action": "sit", "v": 0})
    html = await page.receive()  # then only the regions that changed: not the (empty) board
    for region in ("durak-status", "durak-seats", "durak-controls"):
        assert f'id="{region}"' in html
    assert 'id="durak-board"' not in html
    assert "Add a bot" in html
    await page.send({"action": "fly", "v": 1})
    error = await page.receive()
    assert 'id="durak-error"' in error
    assert "unknown action" in error


async def test_an_unknown_table_is_refused(alice):
    cookie = await database_sync_to_async(session_cookie)(alice)
    client = CommunicatorClient("alice", "/ws/durak/999999/?format=json", cookie=cookie)
    assert not await client.connect()


@pytest.mark.parametrize("variant", ["podkidnoy", "perevodnoy", "passport"])
async def test_a_player_who_leaves_is_replaced_by_the_bot_and_the_game_ends(
    alice, open_durak, connect, variant
):
    table = await database_sync_to_async(open_durak)(variant=variant, attack="neighbours", seats=4, stake=10)
    player = await connect(table, alice)
    await player.act("sit")
    for version in (2, 3, 4):
        await player.until_version(version - 1)
        await player.act("add_bot")
    await player.until_version(4)
    await player.act("start")
    state = await player.until_version(5)
    assert state["table"]["status"] == "playing"
    for _ in range(20):  # the bots move meanwhile: a leave sent against an older version is refused, resent
        await player.act("leave")
        reply = await player.receive()
        while reply["type"] != "error" and not (reply["type"] == "state" and reply["you"]["away"]):
            reply = await player.receive()
        if reply["type"] == "state":
            break
        assert reply["code"] == "stale_version"
    assert player.state["you"]["away"]
    while player.state["table"]["status"] == "playing":
        await player.until_version(player.version + 1)  # every move now on the bots' timers
    game = player.state["game"]
    assert game["finished"]
    assert player.state["seats"][0]["empty"]  # her seat is free once the game is over
    assert (await database_sync_to_async(audit_ledger)()).ok


async def play_to_the_end(player) -> dict:
    """`player` plays its moves (the simple policy) until the game ends; the others move on their timers."""
    for _ in range(400):
        state = player.state
        if state["table"]["status"] != "playing":
            return state
        if state["to_act"] == state["you"]["seat"] and (move := simple_move(state["game"])) is not None:
            await player.send({**move, "v": state["v"]}, paced=True)
        await player.until_version(state["v"] + 1)
    raise AssertionError("the game did not end")


async def test_a_disconnected_player_gets_the_grace_then_the_bot_plays_their_seat_to_the_end(
    alice, bob, open_durak, connect, monkeypatch
):
    monkeypatch.setattr(DurakActor, "grace_seconds", 0.3)
    table = await database_sync_to_async(open_durak)(stake=10)
    player = await connect(table, alice)
    other = await connect(table, bob)
    await player.act("sit")
    await player.until_version(1)
    await other.until_version(1)
    await other.act("sit")
    await other.until_version(2)
    await other.act("ready")
    await player.until_version(3)
    assert player.state["table"]["status"] == "waiting"
    assert [seat["ready"] for seat in player.state["seats"]] == [False, True]
    await player.act("start")
    await player.until_version(4)
    assert player.state["table"]["status"] == "playing"
    await other.close()  # bob's connection goes: his grace starts, then the bot takes his seat
    # Nobody moves meanwhile (turns last 30 s): the next versions are bob's grace starting, then ending.
    state = await player.until_version(5)
    assert state["seats"][1]["gone"]
    assert not state["seats"][1]["away"]
    state = await player.until_version(6)
    assert state["seats"][1]["away"]
    assert state["table"]["status"] == "playing"
    state = await play_to_the_end(player)
    assert state["game"]["finished"]
    assert state["seats"][1]["empty"]  # the seat is free once the game is over
    game = await database_sync_to_async(DurakGame.objects.get)()
    assert game.players == [alice.pk, bob.pk]  # bob settled as his seat did
    assert sum(game.payouts) == game.pot == 20
    assert (await database_sync_to_async(audit_ledger)()).ok


async def test_the_lobby_shows_durak_rows_live_and_filters_by_game(alice, open_durak, connect):
    lobby = CommunicatorClient("lobby", "/ws/lobby/?format=json")
    assert await lobby.connect()
    assert (await lobby.receive())["durak_tables"] == []
    table = await database_sync_to_async(open_durak)(seats=3)
    row = (await lobby.receive())["durak_tables"][0]
    assert (row["id"], row["taken"], row["status_code"]) == (table.pk, 0, "waiting")
    player = await connect(table, alice)
    await player.act("sit")
    assert (await lobby.receive())["durak_tables"][0]["taken"] == 1
    await player.until_version(1)
    await player.act("add_bot")
    assert (await lobby.receive())["durak_tables"][0]["taken"] == 2
    await player.until_version(2)
    await player.act("start")
    assert (await lobby.receive())["durak_tables"][0]["status_code"] == "playing"
    await lobby.close()
    only_durak = CommunicatorClient("lobby", "/ws/lobby/?game=durak")
    assert await only_durak.connect()
    fragment = await only_durak.receive()
    await only_durak.close()
    assert re.findall(r'<\w+ id="([^"]+)"', fragment)[:1] == ["durak-tables"]
    assert 'id="lobby-tables"' not in fragment
    assert f'data-durak-table="{table.pk}"' in fragment


async def test_a_second_tab_closing_does_not_start_the_grace(alice, open_durak, connect):
    table = await database_sync_to_async(open_durak)()
    first = await connect(table, alice)
    second = await connect(table, alice)
    await first.act("sit")
    await second.until_version(1)
    await second.close()
    await first.until_version(1)
    await first.act("add_bot")
    state = await first.until_version(2)  # no version for a grace came between
    assert not state["seats"][0]["gone"]
    await first.close()
    seat = await database_sync_to_async(DurakSeat.objects.get)(table=table, number=0)
    assert seat.gone is not None  # her last socket closed


@pytest.mark.slow  # about 16 s a variant
@pytest.mark.parametrize("variant", ["podkidnoy", "perevodnoy", "passport"])
async def test_four_players_over_the_socket_finish_a_game_of_each_variant_and_see_only_their_own_hands(
    variant, alice, bob, make_user, open_durak, connect
):
    """Four protocol clients (the JSON format bots and tools use) get ready and play a game to its end: the
    game starts when all four are ready, every move is the mover's, and no payload to any of them carries a
    card its viewer may not see; the stakes are conserved."""
    carol = await database_sync_to_async(make_user)("carol")
    dave = await database_sync_to_async(make_user)("dave")
    table = await database_sync_to_async(open_durak)(variant=variant, seats=4, stake=10)
    players = [await connect(table, user) for user in (alice, bob, carol, dave)]
    for number, client in enumerate(players):  # each acts on the version it saw: the one before its move
        await client.until_version(number)
        await client.act("sit")
    for number, client in enumerate(players):
        await client.until_version(4 + number)
        await client.act("ready", seed=f"seed-of-{client.name}")
    await players[0].until_version(8)  # four seats, then four players ready: the game starts with the last
    for _ in range(1000):
        state = max((client.state for client in players), key=lambda s: s["v"])
        if state["table"]["status"] != "playing":
            break
        mover = next(client for client in players if client.state["you"]["seat"] == state["to_act"])
        mine = await mover.until_version(state["v"])
        if (move := simple_move(mine["game"])) is not None:
            await mover.send({**move, "v": mine["v"]}, paced=True)
        for client in players:
            await client.until_version(state["v"] + 1)
    else:
        raise AssertionError("the game did not end")
    game = await database_sync_to_async(DurakGame.objects.get)()
    assert game.finished
    assert len(game.players) == 4
    assert (await database_sync_to_async(audit_ledger)()).ok
    for client in players:
        for text in client.payloads:
            payload = json.loads(text)
            if payload.get("type") != "state" or payload["game"] is None or payload["game"]["finished"]:
                continue
            assert cards_in(payload) <= visible(payload), (client.name, payload["v"])
