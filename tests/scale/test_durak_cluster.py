"""Durak tables on the shared live runtime across processes (issues 24 and 26): two Daphne processes on
PostgreSQL and Redis. (a) A player whose socket is on the process that does not own the table plays a whole
game through the owner: every command crosses the channel layer and the owner's actor applies it, under the
one lease it held from the start. (b) Behind HAProxy (the configuration `make run-cluster` runs), the owner
the table's path was routed to is killed outright mid-game: its player reconnects through HAProxy, which sends
the socket to the other process, and leaves the seat to the bot (`unavailable` until the dead owner's lease
has lapsed), the other process takes the table over (a new epoch) and the bots finish the game there. After
both: the action log replays to the stored game (no move applied twice or lost), the chips conserved (audit
clean)."""

import asyncio
import secrets
import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.audit import audit_ledger
from durak.engine import Match, apply, shuffled_deck, start_game
from durak.models import DurakAction, DurakGame, DurakTable
from tests.blackjack.wsclient import SocketClient, session_cookie
from tests.durak.live.conftest import open_durak_table, simple_move
from tests.threads import in_a_thread

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

#: A game not over this long after it began (or a take-over not done) is a hang.
HANG_SECONDS = 120.0
FAST_BOTS = {"DURAK_BOT_SECONDS": "0.05"}


def player(name: str):
    return get_user_model().objects.create_user(username=name, password="Durak-scale-1", display_name=name)


def open_table(user, *, seats: int, stake: int) -> DurakTable:
    return open_durak_table(user, name="Durak scale", seats=seats, stake=stake, turn_seconds=60)


def lease_of(table_id: int) -> tuple[str, int, int]:
    return DurakTable.objects.values_list("owner", "epoch", "version").get(pk=table_id)


def game_over(table_id: int) -> bool:
    game = DurakGame.objects.filter(table_id=table_id).order_by("-number").first()
    return game is not None and game.finished


def replays_to_the_stored_game(table_id: int) -> bool:
    """The game's action log, replayed in version order from its deck, gives the state stored at its end: no
    move applied twice or lost across the take-over (the log's versions are unique per game besides)."""
    game = DurakGame.objects.get(table_id=table_id)
    state = start_game(
        Match.from_dict(game.match), shuffled_deck(server_seed=game.server_seed, client_seed=game.client_seed)
    )
    for action in DurakAction.objects.filter(game=game).order_by("version").values_list("action", flat=True):
        state = apply(state, action)
    return state.to_dict() == game.state


async def joined(server, table_id: int, user) -> SocketClient:
    cookie = await in_a_thread(session_cookie, user)
    client = SocketClient(
        user.username, server.ws(f"/ws/durak/{table_id}/?format=json"), cookie=cookie, origin=server.url
    )
    await client.connect()
    await client.receive()
    return client


async def until(check, what: str, timeout: float = HANG_SECONDS) -> None:
    ends = time.monotonic() + timeout
    while not await in_a_thread(check):
        assert time.monotonic() < ends, f"{what}: not within {timeout} s"
        await asyncio.sleep(0.1)


async def after(client: SocketClient, version: int, *, timeout: float = HANG_SECONDS) -> dict:
    """Read until a state after `version`. A move the client sent may be refused `stale_version`: a bot
    attacker threw in a card first (the bots move on the owner's timers), and the fresh state follows."""
    ends = time.monotonic() + timeout
    while client.state["v"] <= version:
        message = await client.receive(timeout=max(1.0, ends - time.monotonic()))
        if message["type"] == "error":
            assert message["code"] == "stale_version", message
    return client.state


async def play_to_the_end(client: SocketClient) -> dict:
    """Play the client's seat until the game is over: a move whenever it is the client's turn, every state
    read (the bots' moves arrive as the owner's announcements)."""
    while True:
        state = client.state
        if state["table"]["status"] != "playing":
            return state
        if state["to_act"] == state["you"]["seat"] and (move := simple_move(state["game"])) is not None:
            await client.send({**move, "v": state["v"]}, paced=True)
        await after(client, state["v"])


async def left(client: SocketClient) -> int:
    """Send a leave, with the version the client saw, until the owner applies it (the player is away: the bot
    plays the seat); an `unavailable` answer (the owner did not answer) makes the client send it again, and so
    does `stale_version` (the bots moved meanwhile: the fresh state follows). Returns how many `unavailable`
    answers came."""
    unavailable = 0
    ends = time.monotonic() + HANG_SECONDS
    while True:
        await client.send({"action": "leave", "v": client.version})
        while True:
            message = await client.receive(timeout=max(1.0, ends - time.monotonic()))
            if message["type"] == "error":
                assert message["code"] in ("unavailable", "stale_version"), message
                unavailable += message["code"] == "unavailable"
                break
            if message["type"] == "state" and message["you"]["away"]:
                return unavailable


def test_a_player_on_the_non_owner_plays_a_game_through_the_owner(servers):
    name = f"live.durak-owner-{secrets.token_hex(4)}"
    owner = servers(LIVE_PROCESS=name, **FAST_BOTS)
    other = servers(**FAST_BOTS)
    alice = player("alice")
    table = open_table(alice, seats=2, stake=0)
    DurakTable.objects.filter(pk=table.pk).update(
        owner=name, epoch=1, lease_until=timezone.now() + timedelta(hours=1)
    )

    async def scenario():
        # A viewer at the owner starts its receiver of forwarded commands (and its actor loads the table).
        watcher = await joined(owner, table.pk, alice)
        client = await joined(other, table.pk, alice)
        for action in ("sit", "add_bot", "start"):
            await client.send({"action": action, "v": client.version})
            await client.until_version(client.version + 1)
        state = await play_to_the_end(client)
        await watcher.until_version(state["v"])
        await watcher.close()
        await client.close()
        return state

    state = asyncio.run(scenario())
    assert state["game"]["finished"]
    owner, epoch, version = lease_of(table.pk)
    assert (owner, epoch) == (name, 1)  # the owner applied every command, under one lease
    assert version >= state["v"]  # and the sockets' closing after the game may have changed the seats
    assert replays_to_the_stored_game(table.pk)
    assert DurakAction.objects.filter(by_bot=False).count() > 0  # alice's own moves, forwarded
    report = audit_ledger()
    assert report.ok, report.discrepancies


def test_the_table_of_a_killed_owner_is_taken_over_and_the_bots_finish_the_game(cluster):
    site = cluster(2, **FAST_BOTS)
    alice, bob = player("alice"), player("bob")
    table = open_table(alice, seats=3, stake=50)

    async def scenario():
        a, b = [await joined(site, table.pk, user) for user in (alice, bob)]
        await a.send({"action": "sit", "v": a.version})
        await b.until_version(1)
        await b.send({"action": "sit", "v": b.version})
        await a.until_version(2)
        await a.send({"action": "add_bot", "v": a.version})
        await b.until_version(3)
        await b.send({"action": "ready", "v": b.version})  # bob plays this game (the bot is always ready)
        await a.until_version(4)
        await a.send({"action": "start", "v": a.version})
        await a.until_version(5)
        await b.until_version(5)
        await b.send({"action": "leave", "v": b.version})  # bob leaves his seat to the bot at once
        await a.until_version(6)
        await b.close()
        # A few moves (alice's, and the bots' on the owner's timers), then the kill.
        while a.version < 12 and a.state["table"]["status"] == "playing":
            state = a.state
            if state["to_act"] == state["you"]["seat"] and (move := simple_move(state["game"])) is not None:
                await a.send({**move, "v": state["v"]})
            await after(a, state["v"])
        assert a.state["table"]["status"] == "playing"
        await a.close()
        owner, epoch, _ = await in_a_thread(lease_of, table.pk)
        first = next(server for server in site.servers if f".{server.process.pid}." in owner)
        first.kill()
        killed_at = time.monotonic()
        # Alice comes back, through HAProxy on the other process, and leaves her seat to the bot too.
        client = await joined(site, table.pk, alice)
        unavailable = await left(client)
        await client.close()
        await until(lambda: game_over(table.pk), "the bots finish the game")
        return first, owner, epoch, time.monotonic() - killed_at, unavailable

    first, dead, epoch, took, unavailable = asyncio.run(scenario())
    second = next(server for server in site.servers if server is not first)
    owner, new_epoch, _ = lease_of(table.pk)
    assert owner != dead  # taken over
    assert f".{second.process.pid}." in owner  # by the process HAProxy sent alice's socket to
    assert new_epoch > epoch
    # Every socket of the table went where its path was routed: the owner, then the other process only.
    routes = [name for name, path in site.balancer.routes() if path == f"/ws/durak/{table.pk}/"]
    assert routes[:2] == [site.name(first)] * 2, routes
    assert set(routes[2:]) == {site.name(second)}, routes
    print(
        f"\nDurak take-over after SIGKILL of the owner: the game finished {took:.1f} s after the kill "
        f"({unavailable} command(s) answered `unavailable` meanwhile)"
    )
    assert replays_to_the_stored_game(table.pk)
    game = DurakGame.objects.get(table_id=table.pk)
    assert sum(game.payouts) == game.pot == 100
    report = audit_ledger()
    assert report.ok, report.discrepancies
