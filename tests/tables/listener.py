"""What a consumer's mailbox is to `tables.fanout`, for tests: a queue the test reads."""

import asyncio


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
