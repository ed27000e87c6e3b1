"""For the fan-out tests: what a consumer's mailbox is to `tables.fanout` (a queue the test reads), and two
processes' registries side by side on one loop, linked through the real Redis."""

import asyncio
import contextlib

from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import channel_layers

from tables.fanout import Fanout, RedisPubSub


class Listener:
    def __init__(self):
        self.queue: asyncio.Queue[dict] = asyncio.Queue()

    def deliver(self, message: dict) -> None:
        self.queue.put_nowait(message)

    async def receive(self, timeout: float = 2) -> dict:
        return await asyncio.wait_for(self.queue.get(), timeout=timeout)

    async def nothing_more(self, wait: float = 0.3) -> bool:
        await asyncio.sleep(wait)
        return self.queue.empty()


@contextlib.asynccontextmanager
async def two_processes():
    """Two processes' fan-out registries ("first", "second"), each with its own connections to the Redis of
    the configured channel layer, named after it (`CLIENT LIST` shows them). Every listener leaves and both
    relays stop afterwards."""
    first, second = Fanout(_link("first"), origin="first"), Fanout(_link("second"), origin="second")
    try:
        yield first, second
    finally:
        for process in (first, second):
            for group, members in list(process.groups.items()):
                for member in list(members):
                    await process.leave(group, member)
            await process.close()


def _link(name: str) -> RedisPubSub:
    return RedisPubSub.for_layer(
        channel_layers.make_backend(DEFAULT_CHANNEL_LAYER), client_name=f"fanout-{name}"
    )
