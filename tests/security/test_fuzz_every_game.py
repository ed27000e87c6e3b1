"""Hostile frames at every game's table socket (the site's one consumer pipeline), on the table's owner and
through a process that does not own the table: each frame gets a clear refusal or a view, the socket stays
open, the server logs no error and nothing of the table changes. The frames include those that once closed
Durak's socket with 1011 and skipped its clean-up (issue 34): a digit `int()` refuses ("²"), lone surrogates
in a seed or a card, a NUL in a seed, a version too large for the database or the channel layer.

Seeded and reproducible (`random.Random`), in process (`WebsocketCommunicator`), the rate limit lifted (it is
tested on its own).
"""

import json
import logging
import random

import pytest
from channels.db import database_sync_to_async
from django.db import models

from blackjack import services
from blackjack.models import Table
from durak.models import DurakTable
from live import consumer as consumers
from live import forward
from live.protocol import MAX_FRAME_BYTES
from tests import fake_owner
from tests.blackjack.conftest import preset_row
from tests.blackjack.wsclient import CommunicatorClient, session_cookie
from tests.durak.live.conftest import open_durak_table
from tests.security.test_fuzz_frames import NASTY_NUMBERS, NASTY_STRINGS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

OWNER = "live.test-fuzz-owner"
FRAMES = 150
#: The frames that closed Durak's socket before the pipeline was shared (issue 34, item 3), each as sent.
ONCE_FATAL = [
    '{"action": "take", "v": "\\u00b2"}',
    '{"action": "ready", "seed": "\\ud800", "v": 0}',
    '{"action": "attack", "card": "6\\ud800", "v": 0}',
    '{"action": "ready", "seed": "a\\u0000b", "v": 0}',
    '{"action": "take", "v": 1000000000000000000000000000000}',
    '{"action": "sit", "seat": 1, "v": "\\u00b2"}',
]


class _Unlimited(consumers.FloodGuard):
    def hit(self, now: float) -> str:
        return self.OK


@pytest.fixture(autouse=True)
def _no_rate_limit(monkeypatch):
    monkeypatch.setattr(consumers, "FloodGuard", _Unlimited)


GAMES = {
    "blackjack": (Table, ["sit", "leave", "bet", "ready", "hit", "stand", "double", "insurance"]),
    "durak": (DurakTable, ["sit", "leave", "add_bot", "ready", "start", "attack", "beat", "take"]),
}


def hostile(r: random.Random, actions: list[str], version: int) -> str | bytes:
    """A frame the table must refuse whatever its state: broken bytes or JSON, a broken version, nasty values,
    or a well-formed action from a version still to come."""
    kind = r.randrange(8)
    value = lambda: r.choice([*NASTY_STRINGS, *NASTY_NUMBERS, None, True, [], {}])  # noqa: E731
    if kind == 0:
        return bytes(r.randrange(256) for _ in range(r.randrange(1, 40)))
    if kind == 1:
        return r.choice(["{", "[]", "null", "1", '"x"', '{"action": }', "\x00", "[" * 3000])
    if kind == 2:
        return json.dumps({"action": "chat", "text": "x" * (MAX_FRAME_BYTES + 10)})
    if kind == 3:
        return json.dumps({"action": value(), "v": version})
    if kind == 4:
        return json.dumps({"action": r.choice(actions), "v": r.choice([None, -1, 1.5, 2**64, "x", [], True])})
    if kind == 5:
        return r.choice(ONCE_FATAL)
    fields = {name: value() for name in r.sample(["seat", "card", "target", "seed", "amount", "hand"], 3)}
    return json.dumps({"action": r.choice(actions), **fields, "v": version + r.randrange(1, 2**40)})


def open_table(game: str, user):
    if game == "durak":
        return open_durak_table(user, seats=3)

    return services.create_table(preset=preset_row("Vegas Strip", None), name="Fuzz", min_bet=10, max_bet=500)


def version_of(model: type[models.Model], table_id: int) -> int:
    return model.objects.values_list("version", flat=True).get(pk=table_id)


@pytest.mark.parametrize("owned_elsewhere", [False, True], ids=["owner", "non-owner"])
@pytest.mark.parametrize("game", ["blackjack", "durak"])
async def test_hostile_frames_are_refused_and_change_nothing(
    game, owned_elsewhere, alice, caplog, monkeypatch
):
    model, actions = GAMES[game]
    table = await database_sync_to_async(open_table)(game, alice)
    if owned_elsewhere:
        fake_owner.act_for(OWNER, monkeypatch)
        await database_sync_to_async(fake_owner.lease)(model, table, OWNER)
        forward.listen(OWNER)
    cookie = await database_sync_to_async(session_cookie)(alice)
    path = f"/ws/{'tables' if game == 'blackjack' else 'durak'}/{table.pk}/"
    clients = [
        CommunicatorClient("json", path + "?format=json", cookie=cookie),
        CommunicatorClient("html", path, cookie=cookie),
    ]
    try:
        for client in clients:
            assert await client.connect()
            await client.receive()
        before = await database_sync_to_async(version_of)(model, table.pk)
        r = random.Random(f"{game}:{owned_elsewhere}")
        with caplog.at_level(logging.ERROR):
            for n in range(FRAMES):
                client = clients[n % 2]
                frame = hostile(r, actions, before)
                if isinstance(frame, bytes):
                    await client.communicator.send_to(bytes_data=frame)
                else:
                    await client.send(frame)
                reply = await client.receive(timeout=10)
                if client.json_format:
                    assert reply["type"] == "error", (frame, reply)
                    assert reply["code"] in ("bad_message", "stale_version", "bad_amount"), (frame, reply)
                else:
                    assert "error" in reply or "flash" in reply, (frame, reply)
                if client.json_format and reply["code"] == "stale_version":
                    await client.receive(timeout=10)  # the fresh view that follows it
                elif not client.json_format and 'data-code="stale_version"' in reply:
                    pass  # the HTML refusal comes with the fresh view in the same message
            for client in clients:
                await client.nothing_more()
                assert client.communicator.output_queue.empty()
        assert [record for record in caplog.records if record.levelno >= logging.ERROR] == []
        assert await database_sync_to_async(version_of)(model, table.pk) == before
        # The sockets are still open and still play: a legal action is applied.
        await clients[0].send({"action": "sit", **({"seat": 1} if game == "blackjack" else {}), "v": before})
        assert (await clients[0].until_version(before + 1))["v"] == before + 1
    finally:
        for client in clients:
            await client.close()
        if owned_elsewhere:
            await fake_owner.stop_receivers(OWNER)
