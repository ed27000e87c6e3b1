"""Commands that cross processes: sent over the channel layer to the process that owns their object.

Each server process receives on its own channel (`process.name()`) the commands other processes forward to it:
`listen()` starts the receiver, a task on the running loop, on first use. Each message is handed to the
handler registered for its `kind` (`handles`), in a task of its own (the handler's actor orders the commands
of one object), and the handler's answer goes back on the reply channel the message names.

`request` sends a command to an owner and waits for its answer. An owner that does not answer within
`REPLY_SECONDS` (it died, or is stuck) raises `Unreachable`: the command may or may not have been applied, so
what is forwarded must be safe to send again (a table action carries the version its player saw, and a second
application of it is refused as stale). The answer goes to the asker's own channel: a consumer's (its handler
of `REPLY` messages passes them to `answered`), or, for a caller without one (a staff edit from a synchronous
view), a channel made for the one request.
"""

import asyncio
import contextvars
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer

from live import process

#: How long an asker waits for the owner's answer.
REPLY_SECONDS = 5.0
#: The message types: a command on an owner's channel, and its answer (a consumer's handler: `live_reply`).
REQUEST = "live.request"
REPLY = "live.reply"

logger = logging.getLogger(__name__)

#: Applies a forwarded command's body in this process; returns the answer (a dict the layer can carry).
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

_handlers: dict[str, Handler] = {}
_receivers: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Task]] = {}
_serving: set[asyncio.Task] = set()
_waiting: dict[str, asyncio.Future] = {}


class Unreachable(Exception):
    """The owner did not answer in time, or its channel is full: the command may or may not be applied."""


class Failed(Exception):
    """The owner failed to handle the command (an error of the server, logged there)."""


def handles(kind: str) -> Callable[[Handler], Handler]:
    """Register the handler of the commands of `kind` in this process."""

    def register(handler: Handler) -> Handler:
        _handlers[kind] = handler
        return handler

    return register


def listen(name: str | None = None) -> None:
    """Receive the commands sent to `name` (this process's channel by default) on the running loop, from now
    until the loop ends; nothing if that receiver is running already. Its task gets a context of its own, so
    the commands it applies do not run in the caller's (a request's thread-sensitive context, say)."""
    name = name or process.name()
    loop = asyncio.get_running_loop()
    running = _receivers.get(name)
    if running is not None and running[0] is loop and not running[1].done():
        return
    _receivers[name] = (loop, loop.create_task(_receive(name), context=contextvars.Context()))


async def stop(name: str | None = None) -> None:
    """Stop the receiver of `name` (tests: a process that dies)."""
    running = _receivers.pop(name or process.name(), None)
    if running is not None:
        running[1].cancel()
        await asyncio.gather(running[1], return_exceptions=True)


async def _receive(name: str) -> None:
    layer = get_channel_layer()
    while True:
        try:
            message = await layer.receive(name)
        except Exception:  # Redis away: try again in a moment, the commands sent meanwhile wait in Redis
            logger.exception("the receiver of %s failed; receiving again in a second", name)
            await asyncio.sleep(1)
            continue
        task = asyncio.create_task(_serve(layer, message))
        _serving.add(task)
        task.add_done_callback(_serving.discard)


async def _serve(layer, message: dict[str, Any]) -> None:
    kind = message.get("kind")
    handler = _handlers.get(kind) if kind is not None else None
    if handler is None:
        logger.error("no handler for forwarded commands of kind %r", message.get("kind"))
        answer: dict[str, Any] = {"failed": True}
    else:
        try:
            answer = await handler(message["body"])
        except Exception:
            logger.exception("a forwarded command of kind %r failed", message.get("kind"))
            answer = {"failed": True}
    try:
        await layer.send(message["reply_to"], {"type": REPLY, "id": message["id"], **answer})
    except Exception:  # the asker's channel is gone or full: it gets `Unreachable` when its wait ends
        logger.warning("the answer to a forwarded command could not be sent", exc_info=True)


async def request(
    owner: str, kind: str, body: dict[str, Any], *, reply_to: str | None = None, timeout: float | None = None
) -> dict[str, Any]:
    """Send a command of `kind` to the process `owner` and return its answer; raises `Unreachable` when none
    comes within `timeout` (`REPLY_SECONDS`), `Failed` when the owner failed to handle it. `reply_to`: the
    asker's channel, whose handler passes the answer to `answered`; without it a channel is made for this
    request and read here."""
    layer = get_channel_layer()
    request_id = secrets.token_hex(8)
    own_channel = reply_to is None
    if own_channel:
        reply_to = await layer.new_channel()
    else:
        waiting = _waiting[request_id] = asyncio.get_running_loop().create_future()
    message = {"type": REQUEST, "kind": kind, "id": request_id, "reply_to": reply_to, "body": body}
    try:
        await layer.send(owner, message)
        async with asyncio.timeout(REPLY_SECONDS if timeout is None else timeout):
            answer = await (layer.receive(reply_to) if own_channel else waiting)
    except (TimeoutError, ChannelFull):
        raise Unreachable(f"{owner} did not answer") from None
    finally:
        _waiting.pop(request_id, None)
    if answer.get("failed"):
        raise Failed(f"{owner} failed to apply a command of kind {kind!r}")
    return answer


def answered(event: dict[str, Any]) -> None:
    """An answer arrived on an asker's channel: hand it to the request waiting for it (none: that request
    gave up waiting, and the answer is dropped)."""
    request_id = event.get("id")
    waiting = _waiting.get(request_id) if request_id is not None else None
    if waiting is not None and not waiting.done():
        waiting.set_result(event)
