"""Every command for a live table reaches its one owner, whatever the game: applied here, or forwarded.

A table is owned by at most one live process, the holder of its lease (`live.lease.holder`). A command is
applied by the table's actor in this process when the table is owned here or by nobody (`Route.apply`; the
actor takes the lease when it loads the table). When another live process owns it, the command is forwarded
over the channel layer to that process's channel (`live.forward`); its receiver applies it through its actor
(`serve`) and answers with the result: the new version, or the refusal's code and message, which the asker
raises again as `cards.errors.Refused`, so a forwarded command ends for the client exactly as a local one
would. A version the owner committed for a command of this process is read once for this process's viewers
(`arrived`: `live.fanout.committed_elsewhere`).

A command is a dict the layer can carry (`{"table": id, "op": ..., ...}`; the user goes by id). `presence`
(`connected`, and the socket's `channel` and `process`) is the runtime's own: the owner counts the socket
(`live.presence`). Every other `op` is the game's (`act_here`). An owner that does not answer in time (it
died) gives `forward.Unreachable`; the asker resolves the owner again for its next command, so once the dead
owner's lease has run out the table is taken over (by this process, or by whichever took it first). A command
must carry what makes a second application of it a refusal (a player's action: the version the player saw,
refused as `stale_version` once applied).

A game says, on its `Route` subclass: `kind` (its commands' kind on an owner's channel), `actor` (its
`live.table.TableActor`) and `act_here`; `serve()` registers its forwarded commands' handler (at the app's
`ready()`).
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.db import Error as DatabaseFailure
from django.db import router, transaction

from cards.errors import Refused
from live import fanout, forward, lease, process
from live.lease import OwnedElsewhere

if TYPE_CHECKING:
    from live.table import TableActor

#: A command is passed on at most this many times when the owner it was sent to says another owns the table.
MAX_HOPS = 3
#: The answer of an owner whose database failed: nothing was applied.
DATABASE_DOWN = ["unavailable", "The server cannot reach its database; nothing was changed. Retry."]
#: What a staff edit gets from an owner that did not answer.
OWNER_AWAY = "The server that runs this table did not answer; try again in a few seconds."

_UNRESOLVED = object()


class Route:
    """The way to a table's owner from one connection: the owner as last resolved (read again after an owner
    did not answer, or said another owns the table)."""

    kind: ClassVar[str]
    actor: ClassVar[type["TableActor"]]

    def __init__(self, key: int, reply_to: str) -> None:
        self.key = key
        self.reply_to = reply_to
        self.owner: Any = _UNRESOLVED

    # --- applying a command in this process ---

    @classmethod
    async def apply(cls, body: dict[str, Any], *, user=None) -> int | None:
        """Apply the command through the table's actor in this process: the new version (None: nothing
        changed). Raises `Refused`, `OwnedElsewhere` (from the actor's load), or the model's
        `DoesNotExist`."""
        if body.get("op") == "presence":
            channel, holder = body.get("channel"), body.get("process")
            if not isinstance(channel, str) or not channel or not isinstance(holder, str) or not holder:
                raise Refused("bad_message", "A presence names its socket's channel and process.")
            user_id = user.pk if user is not None else body["user"]
            actor = cls.actor.actor_for(body["table"])
            return await actor.presence(user_id, channel, connected=bool(body["connected"]), holder=holder)
        return await cls.act_here(body, user=user)

    @classmethod
    async def act_here(cls, body: dict[str, Any], *, user=None) -> int | None:
        """The game's commands (`op` other than presence); `user` is the acting user when the caller has it,
        else the command carries the user's id."""
        raise NotImplementedError

    @classmethod
    def serve(cls) -> None:
        """Register, in `live.forward`, the handler of this game's commands forwarded to this process: each is
        applied by `apply` and the outcome answered: the version, a refusal (`refused`: its code and message),
        `moved` (another process owns the table now), `gone` (no such table)."""

        @forward.handles(cls.kind)
        async def forwarded(body: dict[str, Any]) -> dict[str, Any]:
            try:
                version = await cls.apply(body)
            except Refused as refused:
                return {"refused": [refused.code, refused.message]}
            except OwnedElsewhere as moved:
                return {"moved": moved.owner}
            except cls.actor.model.DoesNotExist:
                return {"gone": True}
            except DatabaseFailure:
                return {"refused": DATABASE_DOWN}
            return {"version": version}

    @classmethod
    def result(cls, answer: dict[str, Any]) -> int | None:
        """The owner's answer as the local call would have ended: a version, or the refusal raised again."""
        if "refused" in answer:
            raise Refused(*answer["refused"])
        if answer.get("gone"):
            raise cls.actor.model.DoesNotExist
        return answer["version"]

    @classmethod
    def from_sync(cls, table_id: int, body: dict[str, Any], here: Callable[[], int | None]) -> int | None:
        """A command from synchronous code (a staff edit in the admin, the lobby's one-click seat): sent to
        the owner's process when the table has a live owner (this process included: its receiver applies it
        through the actor), else done by `here` (a write of the game's services, or `TableActor.apply_once`).
        Raises `Refused` (`unavailable` when the owner does not answer). Called outside any transaction when
        the table has an owner (`outside_transactions`)."""
        owner = lease.holder(cls.actor.model, table_id)
        if owner is None:
            return here()
        outside_transactions(cls.actor.model)
        try:
            answer = async_to_sync(_ask)(owner, cls.kind, {"table": table_id, **body})
        except forward.Unreachable:
            raise Refused("unavailable", OWNER_AWAY) from None
        if "moved" in answer:
            raise Refused("unavailable", "The table moved to another server; try again.")
        return cls.result(answer)

    # --- one connection's way to the owner ---

    def arrived(self, version: int) -> None:
        """The owner (another process) committed `version` for a command of this connection: the viewers here
        get it read once (the owner's notice of the same version then changes nothing)."""
        fanout.committed_elsewhere(self.actor.game, self.key, version)

    def owner_of(self) -> str | None:
        """The other process that holds a live lease on the table, or None (nobody, or this process)."""
        owner = lease.holder(self.actor.model, self.key)
        return owner if owner != process.name() else None

    async def resolved(self) -> str | None:
        """The owner as last resolved (resolved now if it is not): another process's name, or None."""
        if self.owner is _UNRESOLVED:
            self.owner = await database_sync_to_async(self.owner_of)()
        return self.owner

    async def send(self, body: dict[str, Any], *, user, in_handler: bool = False):
        """Apply the command where the table is owned and return the new version; when the owner is another
        process, its answer's version goes to `arrived`. `in_handler`: the caller is one of the connection's
        own message handlers (connect, disconnect), which hold up the connection's messages, the owner's
        answer among them: the answer then comes on a channel of its own. Raises `Refused`, the model's
        `DoesNotExist`, `forward.Unreachable` (the owner did not answer: it may have applied the command)."""
        body = {"table": self.key, **body}
        for _ in range(MAX_HOPS):
            if await self.resolved() is None:
                try:
                    return await self.apply(body, user=user)
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
            version = self.result(answer)
            if version is not None:
                self.arrived(version)
            return version
        raise forward.Unreachable(f"{self.kind} {self.key}: its owner moved {MAX_HOPS} times")


def outside_transactions(model) -> None:
    """Raise `RuntimeError` if the caller is in a transaction: a command waits for its owner's answer outside
    any. The owner commits it in a transaction of its own, on another connection, which waits for what the
    caller's transaction holds (SQLite's write lock, taken at its BEGIN IMMEDIATE; the rows it wrote on
    PostgreSQL) while the caller waits for the owner: neither moves until the caller gives up after
    `forward.REPLY_SECONDS` and rolls back, and then the owner applies the command all the same. (Nor would
    the owner's commit be undone with the caller's transaction.) Send it after the commit
    (`transaction.on_commit`), or from a view without a transaction (`live.admin.OwnedTableAdmin`)."""
    if transaction.get_connection(router.db_for_write(model)).in_atomic_block:
        raise RuntimeError(
            f"a command for the owner of a {model._meta.label} row was sent inside a transaction: "
            "the owner's write would wait for it"
        )


async def _ask(owner: str, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    if owner == process.name():
        forward.listen()
    return await forward.request(owner, kind, body)
