"""The Redis channel layer, with a connection pool that waits for a free connection instead of failing.

channels-redis builds redis-py's plain pool, which since redis-py 8 holds at most 100 connections and raises
`MaxConnectionsError` at once beyond them: a burst of sockets joining and leaving their groups (a few hundred
players arriving or leaving together) failed in their handlers with tracebacks. Here each process holds at
most `pool_max_size` connections per Redis, and a command that finds them all busy waits up to
`pool_timeout` seconds for one.
"""

from channels_redis.core import RedisChannelLayer as ChannelsRedisLayer
from redis import asyncio as aioredis


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
