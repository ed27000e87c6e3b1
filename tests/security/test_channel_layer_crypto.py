"""Nothing secret crosses Redis, and a message on the channel layer cannot change what a viewer sees without
the servers' key: the Redis layer encrypts and authenticates every message (Fernet, `CHANNEL_LAYER_KEY`), and
drops one that does not verify (`cardroom.channel_layer`). Read and written here with raw redis-py, as
anyone who can reach Redis could."""

import asyncio
import contextlib
import random
import re
import time
import uuid

import msgpack
import pytest
import redis.asyncio
from channels.layers import get_channel_layer
from django.conf import settings
from django.test import Client
from websockets.asyncio.client import connect

from accounts.sockets import user_group
from blackjack.models import Round, Table
from cardroom.channel_layer import RedisChannelLayer

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]
PREFIX_BYTES = 12  # channels-redis's random prefix, which keeps equal messages apart in a sorted set
FERNET_TOKEN = re.compile(rb"gAAAAA[A-Za-z0-9_=-]+")  # version byte 0x80, then urlsafe base64 only


def redis_url() -> str:
    return settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"]


def layer(*, keyed: bool) -> RedisChannelLayer:
    """The Redis layer as the settings configure it (with or without their key), under a prefix of its own:
    what it stores is found, and flushed, apart from anything else on this Redis."""
    config = dict(settings.CHANNEL_LAYERS["default"]["CONFIG"])
    if not keyed:
        del config["symmetric_encryption_keys"]
    return RedisChannelLayer(**config, prefix=f"test-crypto-{uuid.uuid4().hex}")


async def stored(client: redis.asyncio.Redis, prefix: str) -> list[bytes]:
    """Every message a layer with `prefix` holds in Redis now (its channels are sorted sets)."""
    found = []
    async for key in client.scan_iter(match=f"{prefix}*"):
        if not key.startswith(f"{prefix}:group:".encode()):
            found += await client.zrange(key, 0, -1)
    return found


async def forge(client: redis.asyncio.Redis, group: str, message: dict, *, prefix: str = "asgi") -> int:
    """Put `message` on the layer for every member of `group`, as channels-redis's group send writes it
    (msgpack after a random prefix, the receiving channels listed in `__asgi_channel__`, on the sorted set of
    each process's channel), but without the key. Returns the number of channels it went to."""
    members = [member.decode() for member in await client.zrange(f"{prefix}:group:{group}", 0, -1)]
    by_key: dict[str, list[str]] = {}
    for channel in members:
        by_key.setdefault(prefix + channel[: channel.index("!") + 1], []).append(channel)  # no colon
    for key, channels in by_key.items():
        data = random.randbytes(PREFIX_BYTES) + msgpack.packb({**message, "__asgi_channel__": channels})
        await client.zadd(key, {data: time.time()})  # the layer drops members older than its expiry
    return len(members)


@pytest.fixture
def dealt(table, alice, bob, act):
    """A table in the middle of a round: the dealer's hole card is down, the next shoe's seed is secret."""
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=10, seat=1)
    act(table, bob, "bet", amount=10, seat=2)
    table.refresh_from_db()
    return table


@pytest.mark.asyncio
async def test_what_the_layer_stores_in_redis_is_only_ciphertext(dealt):
    state = (await Round.objects.filter(table=dealt).order_by("-pk").afirst()).state
    hole = state["dealer_cards"][1]
    next_seed = (await Table.objects.aget(pk=dealt.pk)).next_server_seed
    # What a process that owns the table might hand another: the whole state, secrets and all.
    message = {"type": "table.changed", "v": dealt.version, "state": state, "next_server_seed": next_seed}
    secrets = [next_seed.encode(), msgpack.packb(hole), b"dealer_cards", b"next_server_seed"]
    client = redis.asyncio.Redis.from_url(redis_url())
    keyed, plain = layer(keyed=True), layer(keyed=False)
    try:
        # The check itself: without a key the layer's message shows every secret in Redis.
        channel = await plain.new_channel()
        await plain.group_add("table-secret", channel)
        await plain.group_send("table-secret", message)
        (clear,) = await stored(client, plain.prefix)
        assert all(secret in clear for secret in secrets)

        channel = await keyed.new_channel()
        await keyed.group_add("table-secret", channel)
        await keyed.group_send("table-secret", message)
        (held,) = await stored(client, keyed.prefix)
        assert not any(secret in held for secret in secrets)
        assert FERNET_TOKEN.fullmatch(held[PREFIX_BYTES:])  # nothing but the token after the prefix
        assert await asyncio.wait_for(keyed.receive(channel), 5) == message  # and the servers read it whole
    finally:
        await plain.flush()
        await keyed.flush()
        await client.aclose()


@pytest.mark.asyncio
async def test_the_forgery_below_is_the_layers_own_wire_format():
    """Without a key, a message written by `forge` is taken by the layer like any other: so the next test's
    forgeries would reach the consumers if the layer trusted them."""
    plain = layer(keyed=False)
    client = redis.asyncio.Redis.from_url(redis_url())
    try:
        channel = await plain.new_channel()
        await plain.group_add("forged", channel)
        forged = {"type": "session.ended", "session": None}
        assert await forge(client, "forged", forged, prefix=plain.prefix) == 1
        assert await asyncio.wait_for(plain.receive(channel), 5) == forged
    finally:
        await plain.flush()
        await client.aclose()


def test_a_message_forged_into_redis_changes_nothing_a_viewer_receives(servers, dealt, alice):
    """Alice watches her table from a Daphne process. Messages forged into Redis for her sockets' group (end
    her session; a new version with a made-up table) are dropped there: no frame reaches her and her socket
    stays open. A message of the servers' own (sent with the key) still arrives after them."""
    server = servers()
    browser = Client()
    browser.force_login(alice)
    cookie = browser.cookies["sessionid"].value
    forged_table = {
        "table": {"phase": "settled", "dealer": {"cards": ["As", "Ks"]}},
        "you": {"balance": 10**9},
    }
    forgeries = [
        {"type": "session.ended", "session": None},
        {"type": "table.changed", "v": 10**9, "shared": forged_table},
        {"type": "balance.changed"},
    ]

    async def scenario() -> tuple[int, str]:
        client = redis.asyncio.Redis.from_url(redis_url())
        socket = await connect(
            server.ws(f"/ws/tables/{dealt.pk}/"),
            additional_headers={"Cookie": f"sessionid={cookie}"},
            origin=server.url,
        )
        try:
            await asyncio.wait_for(socket.recv(), 10)  # the table as it is
            # Her socket then tells the table's owner it is open (its first load marks the seats): the
            # versions that follow, until the table is quiet.
            with contextlib.suppress(TimeoutError):
                while True:
                    await asyncio.wait_for(socket.recv(), 1.5)
            reached = 0
            for message in forgeries:
                reached += await forge(client, user_group(alice.pk), message)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(socket.recv(), 3)  # nothing: not closed, nothing sent
            await get_channel_layer().group_send(user_group(alice.pk), {"type": "balance.changed"})
            return reached, await asyncio.wait_for(socket.recv(), 10)
        finally:
            await socket.close()
            await client.aclose()

    reached, genuine = asyncio.run(scenario())
    assert reached == len(forgeries)  # each went to her socket's channel
    assert 'id="nav-balance"' in genuine  # the servers' own notice: her balance, read afresh
    assert str(10**9) not in genuine
    assert server.output().count("did not verify") == len(forgeries)
