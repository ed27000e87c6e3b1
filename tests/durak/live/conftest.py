"""Fixtures of the live Durak table tests: players, a table, and a short way to tell its actor a command."""

import contextlib

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from django.test import override_settings
from django.utils import timezone

from accounts.models import Wallet
from durak import actor as durak_actor
from durak import services
from durak.models import DurakGame, DurakTable
from durak.table import Act, AddBot, Ready, Sit, Start
from tests.blackjack.wsclient import CommunicatorClient, session_cookie

SERVER_SEED = "ab" * 32


@pytest.fixture(autouse=True)
def _no_durak_actors_kept():
    durak_actor.forget_actors()
    with override_settings(LIVE_TIMERS=False, DURAK_BOT_SECONDS=0.0):
        yield
    durak_actor.forget_actors()


@pytest.fixture
def balance():
    def chips(user) -> int:
        return Wallet.objects.values_list("balance", flat=True).get(user=user)

    return chips


def open_durak_table(user, **options) -> DurakTable:
    """A Durak table `user` opens: two seats of casual, rated Podkidnoy (all sides, six a bout, 30 s a turn)
    unless `options` say otherwise."""
    fields = {
        "name": "Durak test",
        "variant": "podkidnoy",
        "attack": "all_sides",
        "limit": "six",
        "seats": 2,
        "stake": 0,
        "rated": True,
        "turn_seconds": 30,
        **options,
    }
    return services.open_table(user=user, **fields)


@pytest.fixture
def open_durak(alice):
    def make(**options):
        table = open_durak_table(alice, **options)
        # The first deal's server seed is fixed, as the commands' next ones are: the games replay alike.
        DurakTable.objects.filter(pk=table.pk).update(next_server_seed=SERVER_SEED)
        table.refresh_from_db()
        return table

    return make


def start_command(user, seed: str = SERVER_SEED, client: str = "c" * 64) -> Start:
    return Start(user.pk, fresh_seed=seed, seed=client)


def ready_command(user, seed: str = SERVER_SEED, client: str = "c" * 64) -> Ready:
    return Ready(user.pk, fresh_seed=seed, seed=client)


def seat_and_start(table, *players, bots: int = 0):
    """Seat `players`, add `bots` bots; every player but the first (the opener) is ready, the opener starts;
    returns the actor."""
    actor = durak_actor.actor_for(table.pk)
    for user in players:
        actor.handle(Sit(user.pk, user.public_name))
    for _ in range(bots):
        actor.handle(AddBot(players[0].pk))
    for user in players[1:]:
        actor.handle(ready_command(user))
    actor.handle(start_command(players[0]))
    return actor


def play_out(actor, users: dict[int, object]) -> None:
    """Play the game to its end: each seat's move is its bot's choice, sent as the player's action (humans)
    or as the expiry of the version (bots)."""
    from durak import bot
    from durak.table import Expire

    while actor.state.status == "playing":
        table = actor.state
        seat = table.to_act()
        user = users.get(seat)
        if user is None:
            actor.handle(Expire(table.version), now=table.deadline)
        else:
            action = bot.choose(table.game.state, seat)
            actor.handle(Act(user.pk, {k: v for k, v in action.items() if k != "player"}))


def record_game(table, players, *, fool, stake=0, payouts=(), rated=True, when=None, left=()) -> DurakGame:
    """A finished game of `table` as the actor stores it, without playing it: `players` per seat (users, None
    for a bot), the fool's seat (None: a draw), what the pot paid each seat and the seats whose player had
    left; rated ones update the ratings (and keep their change on the game) as the game's end does."""
    number = DurakGame.objects.filter(table=table).count() + 1
    user_ids = [user.pk if user is not None else None for user in players]
    game = DurakGame.objects.create(
        table=table,
        number=number,
        players=user_ids,
        state={},
        first_version=0,
        version=0,
        match={},
        server_seed="",
        server_seed_hash="",
        client_seed="",
        stake=stake,
        pot=stake * sum(user is not None for user in players),
        rated=rated,
        finished=True,
        fool=fool,
        payouts=list(payouts) or [0] * len(players),
        left=list(left),
        finished_at=when or timezone.now(),
    )
    game.participants.set([user for user in players if user is not None])
    if rated:
        services.rate(tuple(user_ids), fool, variant=table.variant, game_id=game.pk)
    return game


@pytest_asyncio.fixture
async def connect():
    """Open a socket at a Durak table as `user` (None: a spectator), JSON unless `json_format=False`, its
    first view received; all closed after the test."""
    clients = []

    async def open_client(table, user=None, *, json_format=True):
        cookie = await database_sync_to_async(session_cookie)(user) if user is not None else None
        path = f"/ws/durak/{table.pk}/" + ("?format=json" if json_format else "")
        client = CommunicatorClient(user.username if user else "spectator", path, cookie=cookie)
        assert await client.connect()
        clients.append(client)
        await client.receive()
        return client

    yield open_client
    for client in clients:
        with contextlib.suppress(Exception):
            await client.close()


def simple_move(game: dict) -> dict | None:
    """A simple player: beat or lead when possible, else done, else take; None when the table passes for
    the player (nothing to add: it says "done" itself)."""
    allowed = game["allowed"]
    if game.get("passing"):
        assert allowed == []
        return None
    for name in ("beat", "attack", "done", "take"):
        for action in allowed:
            if action["action"] == name:
                return {k: v for k, v in action.items() if k != "player"}
    raise AssertionError(f"nothing allowed: {game}")
