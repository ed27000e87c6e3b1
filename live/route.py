"""Every command for a live object reaches its one owner, whatever the game: applied here, or forwarded.

An object (a blackjack table, a Durak table) is owned by at most one live process, the holder of its lease
(`live.lease.holder`). A command is applied by the object's actor in this process when the object is owned
here or by nobody (the game's `apply_here`; its actor takes the lease when it loads the object). When
another live process owns it, the command is forwarded over the channel layer to that process's channel
(`live.forward`); its receiver applies the command through its actor (`serve`) and answers with the result:
the new version, or the refusal's code and message, which the asker raises again as the game's refusal, so a
forwarded command ends for the client exactly as a local one would.

A command is a dict the layer can carry (`{"table": id, "op": ..., ...}`; the user goes by id). An owner that
does not answer in time (it died) gives `forward.Unreachable`; the asker resolves the owner again for its next
command, so once the dead owner's lease has run out the object is taken over (by this process, or by
whichever took it first). A command must carry what makes a second application of it a refusal (a player's
action: the version the player saw, refused as `stale_version` once applied).

A game says, on its `Route` subclass: `kind` (its commands' kind on the owner's channel, and `serve`'s),
`model` (its `live.models.Leased` rows), `refusal` (its refusal exception, made from a code and a message),
`apply_here` and, optionally, `arrived` (what this process does with a version the owner committed).
"""

from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async
from django.db import Error as DatabaseFailure

from live import forward, lease, process
from live.lease import OwnedElsewhere

#: A command is passed on at most this many times when the owner it was sent to says another owns the object.
MAX_HOPS = 3
#: The answer of an owner whose database failed: nothing was applied.
DATABASE_DOWN = ["unavailable", "The server cannot reach its database; nothing was changed. Retry."]

_UNRESOLVED = object()


def serve(
    kind: str,
    apply: Callable[[dict[str, Any]], Awaitable[int | None]],
    *,
    refusal: type[Exception],
    gone: type[Exception],
) -> None:
    """Register, in `live.forward`, the handler of the commands of `kind` forwarded to this process: each is
    applied by `apply` (the game's `apply_here`) and the outcome answered: the version, a refusal (`refused`:
    its code and message), `moved` (another process owns the object now), `gone` (no such object)."""

    @forward.handles(kind)
    async def forwarded(body: dict[str, Any]) -> dict[str, Any]:
        try:
            version = await apply(body)
        except refusal as refused:
            return {"refused": [refused.code, refused.message]}
        except OwnedElsewhere as moved:
            return {"moved": moved.owner}
        except gone:
            return {"gone": True}
        except DatabaseFailure:
            return {"refused": DATABASE_DOWN}
        return {"version": version}


def result(answer: dict[str, Any], *, refusal: type[Exception], gone: type[Exception]) -> int | None:
    """The owner's answer as the local call would have ended: a version, or the refusal raised again."""
    if "refused" in answer:
        raise refusal(*answer["refused"])
    if answer.get("gone"):
        raise gone
    return answer["version"]


class Route:
    """The way to an object's owner from one connection: the owner as last resolved (read again after an
    owner did not answer, or said another owns the object)."""

    kind: str
    model: type
    refusal: type[Exception]

    def __init__(self, key: int, reply_to: str) -> None:
        self.key = key
        self.reply_to = reply_to
        self.owner: Any = _UNRESOLVED

    @property
    def gone(self) -> type[Exception]:
        return self.model.DoesNotExist

    async def apply_here(self, body: dict[str, Any], *, user):
        """Apply the command through the object's actor in this process: the new version (None if nothing
        changed). Raises the game's refusal, `OwnedElsewhere` (from the actor's load), or `gone`."""
        raise NotImplementedError

    def arrived(self, version: int) -> None:
        """The owner (another process) committed `version` for a command of this connection."""

    def owner_of(self) -> str | None:
        """The other process that holds a live lease on the object, or None (nobody, or this process)."""
        owner = lease.holder(self.model, self.key)
        return owner if owner != process.name() else None

    async def resolved(self) -> str | None:
        """The owner as last resolved (resolved now if it is not): another process's name, or None."""
        if self.owner is _UNRESOLVED:
            self.owner = await database_sync_to_async(self.owner_of)()
        return self.owner

    async def send(self, body: dict[str, Any], *, user, in_handler: bool = False):
        """Apply the command where the object is owned and return the new version; when the owner is another
        process, its answer's version goes to `arrived`. `in_handler`: the caller is one of the connection's
        own message handlers (connect, disconnect), which hold up the connection's messages, the owner's
        answer among them: the answer then comes on a channel of its own. Raises the game's refusal, `gone`,
        `forward.Unreachable` (the owner did not answer: it may have applied the command)."""
        body = {"table": self.key, **body}
        for _ in range(MAX_HOPS):
            if await self.resolved() is None:
                try:
                    return await self.apply_here(body, user=user)
                except OwnedElsewhere as taken:
                    self.owner = taken.owner
                    continue
            forward.listen()  # this process answers forwarded commands too, from its first forwarded one
            try:
                reply_to = None if in_handler else self.reply_to
                answer = await forward.request(
                    self.owner, self.kind, {**body, "user": user.pk}, reply_to=reply_to
                )
            except forward.Unreachable:
                self.owner = _UNRESOLVED
                raise
            if "moved" in answer:
                self.owner = answer["moved"] if answer["moved"] != process.name() else None
                continue
            version = result(answer, refusal=self.refusal, gone=self.gone)
            if version is not None:
                self.arrived(version)
            return version
        raise forward.Unreachable(f"{self.kind} {self.key}: its owner moved {MAX_HOPS} times")
