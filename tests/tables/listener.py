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


class SilentProxy:
    """A TCP relay to Redis whose connections can be made to go silent: after `silence()` the connections
    open until then stay open but carry nothing either way, as behind a firewall that forgot them (no reset,
    no error); connections opened later are relayed as usual."""

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.port: int | None = None
        self._silenced_before = 0  # connections numbered below this carry nothing
        self._opened = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> "SilentProxy":
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        self._server.close()
        for task in self._tasks:
            task.cancel()
        for writer in self._writers:
            writer.close()

    def silence(self) -> None:
        self._silenced_before = self._opened

    async def _relay(self, client_reader, client_writer) -> None:
        number = self._opened
        self._opened += 1
        server_reader, server_writer = await asyncio.open_connection(*self.target)
        self._writers += [client_writer, server_writer]
        for reader, writer in ((client_reader, server_writer), (server_reader, client_writer)):
            task = asyncio.get_running_loop().create_task(self._pump(number, reader, writer))
            self._tasks.add(task)

    async def _pump(self, number: int, reader, writer) -> None:
        while data := await reader.read(65536):
            if number >= self._silenced_before:
                writer.write(data)
                await writer.drain()
