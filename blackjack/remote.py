"""Every command for a table reaches its one owner: applied here, or forwarded to the owning process.

A table is owned by at most one live process, the holder of its lease (`holder`). A command (a player's
action, a chat line, a socket opening or closing, a staff edit) is applied by the table's actor in this
process when the table is owned here or by nobody (`apply_here`; the actor takes the lease when it loads
the table). When another live process owns it, the command is forwarded over the channel layer to that
process's channel (`live.forward`); its receiver applies the command through its actor and answers with the
result: the new version, or the refusal's code and message, which the asker raises again as
`Refused`, so a forwarded command ends for the client exactly as a local one would.

A command is a dict the layer can carry (`{"table": id, "op": ..., ...}`; the user goes by id):
`act` (`action`, `v`), `chat` (`text`), `presence` (`connected`, `channel` and `process`: the socket's),
`settings` (`values`), `close`, `reopen`, `release` (`user`: stand that player up).

An owner that does not answer in time (it died) gives `forward.Unreachable`; the asker resolves the owner
again for its next command, so once the dead owner's lease has run out the table is taken over (by this
process, or by whichever took it first). A player's action carries the version the player saw, so a retried
action that the lost owner had applied after all is refused as `stale_version`: applied once.

The way to the owner is the live runtime's, shared with Durak (`live.route`): this module says how a table
command is applied here. `OwnedElsewhere` is what loading an actor raises when another live process holds the
lease.
"""

from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from blackjack import actors, broadcast, flow
from blackjack.models import Table
from cards.errors import Refused
from live import forward, lease, process, route

#: The kind of the table commands on a process's channel.
KIND = "table"
#: The commands (`op`) a table's owner applies.
OPS = ("act", "chat", "presence", "settings", "close", "reopen", "release")


def holder(table_id: int) -> str | None:
    """The process that holds a live lease on the table (this one included), or None."""
    return lease.holder(Table, table_id)


async def apply_here(body: dict[str, Any], *, user=None):
    """Apply the command through the table's actor in this process: the new version (None if nothing
    changed; the actor shows it to the table's viewers here, the acting player's among them). `user` is the
    acting user when the caller has it; otherwise it is read by the id the command carries. Raises
    `Refused`, `Table.DoesNotExist`, or `OwnedElsewhere` from the actor's load."""
    from blackjack import services
    from blackjack.services import staff

    table_id, op = body["table"], body["op"]
    if op not in OPS:
        raise Refused("bad_message", f"Unknown table command {op!r}.")
    if user is None and op in ("act", "chat"):
        user = await database_sync_to_async(_user)(body["user"])
    actor = actors.actor_for(table_id)
    match op:
        case "act":
            return await actors.perform(
                table_id=table_id,
                user=user,
                action=body["action"],
                expected_version=body["v"],
            )
        case "chat":
            await actor.call(
                lambda: services.post_chat(table_id=table_id, user=user, text=body["text"]),
                reload=False,
            )
            return None
        case "presence":
            user_id = user.pk if user is not None else body["user"]
            holder = body.get("process", process.name())
            return await actor.presence(user_id, body["channel"], connected=body["connected"], holder=holder)
        case "settings":
            return await actor.call(lambda: staff.change_settings(table_id=table_id, values=body["values"]))
        case "close":
            return await actor.tell(lambda loaded: flow.Release(close=True))
        case "reopen":
            return await actor.tell(lambda loaded: flow.Reopen())
        case "release":
            return await actor.tell(lambda loaded: flow.Release(player_id=body["user"]))


def _user(user_id: int):
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise Refused("not_authenticated", "Log in to play.")
    return user


route.serve(KIND, apply_here, refusal=Refused, gone=Table.DoesNotExist)


def _result(answer: dict[str, Any]) -> int | None:
    """The owner's answer as the local call would have ended: a version, or the refusal raised again."""
    return route.result(answer, refusal=Refused, gone=Table.DoesNotExist)


class Route(route.Route):
    """The way to a table's owner from one connection (`live.route.Route`). When the owner is another
    process, its answer's version is read from the database once for this process's viewers
    (`broadcast.committed_elsewhere`; the owner's notice of that version then changes nothing), so the acting
    viewer here gets its view whichever comes first."""

    kind = KIND
    model = Table
    refusal = Refused

    def __init__(self, table_id: int, reply_to: str) -> None:
        super().__init__(table_id, reply_to)
        self.table_id = table_id

    async def apply_here(self, body: dict[str, Any], *, user):
        return await apply_here(body, user=user)  # the table's actor runs on Channels' database thread

    def arrived(self, version: int) -> None:
        broadcast.committed_elsewhere(self.table_id, version)


def from_sync(table_id: int, body: dict[str, Any], here: Callable[[], int | None]) -> int | None:
    """A command from synchronous code (a staff edit in the admin, the lobby's one-click seat): sent to the
    owner's process when the table has a live owner (this process included: its receiver applies it through
    the actor), else written by `here` (the services' write, which locks the table row). Raises
    `Refused` (`unavailable` when the owner does not answer)."""
    owner = holder(table_id)
    if owner is None:
        return here()
    try:
        answer = async_to_sync(_ask)(owner, {"table": table_id, **body})
    except forward.Unreachable:
        raise Refused(
            "unavailable", "The server that runs this table did not answer; try again in a few seconds."
        ) from None
    if "moved" in answer:
        raise Refused("unavailable", "The table moved to another server; try again.")
    return _result(answer)


async def _ask(owner: str, body: dict[str, Any]) -> dict[str, Any]:
    if owner == process.name():
        forward.listen()
    return await forward.request(owner, KIND, body)
