"""The Redis channel layer, with a connection pool that waits for a free connection instead of failing, and
that drops a message it cannot authenticate instead of failing the consumer that popped it.

channels-redis builds redis-py's plain pool, which since redis-py 8 holds at most 100 connections and raises
`MaxConnectionsError` at once beyond them: a burst of sockets joining and leaving their groups (a few hundred
players arriving or leaving together) failed in their handlers with tracebacks. Here each process holds at
most `pool_max_size` connections per Redis, and a command that finds them all busy waits up to
`pool_timeout` seconds for one.

With `symmetric_encryption_keys` (settings: `CHANNEL_LAYER_KEY`) every message is a Fernet token: encrypted,
and signed with the key. A message that does not verify was written by someone without the key (or is older
than the layer's expiry, a replay): channels-redis raises `InvalidToken` out of `receive`, which ends the
consumer that happened to pop it, so anyone who can write to Redis could close other people's sockets. Here
it is logged and skipped, and the receiver waits for the next message.

`group_channels` reads who renewed their membership of a group lately (without sending anything): a process's
relay of table notices (`live.fanout`) sends a table's notices only while another live process is in
the table's group."""

import logging
import time

from channels_redis.core import RedisChannelLayer as ChannelsRedisLayer
from cryptography.fernet import InvalidToken
from redis import asyncio as aioredis

logger = logging.getLogger(__name__)


class RedisChannelLayer(ChannelsRedisLayer):
    def __init__(self, *args, pool_max_size: int = 50, pool_timeout: float = 20, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.pool_max_size = pool_max_size
        self.pool_timeout = pool_timeout

    def create_pool(self, index: int) -> aioredis.BlockingConnectionPool:
        options = dict(self.hosts[index])  # as settings.CHANNEL_LAYERS gives it: an address and options
        return aioredis.BlockingConnectionPool.from_url(
            options.pop("address"), max_connections=self.pool_max_size, timeout=self.pool_timeout, **options
        )

    async def receive_single(self, channel: str) -> tuple[str | list[str], dict]:
        """The next message of `channel` that verifies with the layer's keys; others are dropped unread."""
        while True:
            try:
                return await super().receive_single(channel)
            except InvalidToken:
                logger.warning("channel layer: dropped a message on %s that did not verify", channel)

    async def group_channels(self, group: str, *, within: float) -> list[str]:
        """The channels added to `group` (or added again) in the last `within` seconds: the members that
        renew their membership that often and are still alive. (`group_send` sends to every member of the
        group expiry, a day: a process that died stays in its groups that long.)"""
        assert self.require_valid_group_name(group), "Group name not valid"
        connection = self.connection(self.consistent_hash(group))
        members = await connection.zrangebyscore(self._group_key(group), min=time.time() - within, max="+inf")
        return [member.decode("utf8") for member in members]
