"""Every command for a Durak table reaches its one owner (`live.route`, shared with blackjack): applied by the
table's actor here when this process owns the table or nobody does (the actor then takes the lease), or
forwarded over the channel layer to the owning process, whose answer (the new version, or the refusal's code
and message, raised again here as `Refused`) ends the command exactly as a local one would.

A command crosses as the player's checked message (`DurakConsumer.parse`: the action, its card and target,
the version the player saw, the player's seed) with the player's id and name (`op` "act"); the owner makes
the table command of it (`command_of`), so a new game's server seed is made by the process that keeps it, and
never crosses the layer. A user's socket opening or closing is `op` "presence" (`connected`, and the
socket's `channel` and `process`): the owner counts it (`DurakActor.presence`: the reconnect grace). A
forwarded action carries the version its player saw, so an action the owner applied after its answer was lost
is refused as `stale_version` when retried: applied once.
"""

from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from cards.errors import Refused
from cards.fairness import new_server_seed
from durak import actor as durak_actor
from durak.models import DurakSeat, DurakTable
from durak.table import Act, AddBot, Command, Leave, Ready, Release, Sit, Start
from live import forward, lease, process, route

#: The kind of the Durak commands on a process's channel.
KIND = "durak"
#: The engine's actions a player sends; the table's own are sit, leave, add_bot, ready and start.
ENGINE_ACTIONS = ("attack", "beat", "transfer", "take", "done")


def command_of(message: dict[str, Any], user_id: int, name: str, *, barred: bool = False) -> Command:
    """The table command of a player's checked message (`DurakConsumer.parse`); `barred`: the player's
    account is suspended or closed (read for a `sit`: a seated player's is on their seat)."""
    expected = message.get("v")
    match message["action"]:
        case "sit":
            return Sit(user_id, name, expected=expected, barred=barred)
        case "leave":
            return Leave(user_id, expected=expected)
        case "add_bot":
            return AddBot(user_id, expected=expected)
        case "ready" | "start":
            return (Ready if message["action"] == "ready" else Start)(
                user_id,
                fresh_seed=new_server_seed(),
                seed=message["seed"],
                expected=expected,
            )
        case action if action in ENGINE_ACTIONS:
            played = {"action": action, **{key: message[key] for key in ("card", "target") if key in message}}
            return Act(user_id, played, expected=expected)
    raise Refused("bad_message", f"Unknown action {message['action']!r}.")


async def apply_here(body: dict[str, Any], *, user=None) -> int | None:
    """Apply a player's message, or count a socket, through the table's actor in this process: the new
    version (None: nothing changed). Raises `Refused`, `DurakTable.DoesNotExist`, or `OwnedElsewhere` from
    the actor's load."""
    user_id = user.pk if user is not None else body["user"]
    match body.get("op"):
        case "act":
            message = body["message"]
            barred = message.get("action") == "sit" and await database_sync_to_async(is_barred)(user_id)
            command = command_of(message, user_id, body["name"], barred=barred)
        case "release":
            command = Release(body["user"])
        case "presence":
            channel, holder = body.get("channel"), body.get("process")
            if not isinstance(channel, str) or not channel or not isinstance(holder, str) or not holder:
                raise Refused("bad_message", "A presence names its socket's channel and process.")
            actor = durak_actor.actor_for(body["table"])
            return await actor.presence(user_id, channel, connected=bool(body["connected"]), holder=holder)
        case op:
            raise Refused("bad_message", f"Unknown Durak table command {op!r}.")
    actor = durak_actor.actor_for(body["table"])
    return await actor.tell(command)


def is_barred(user_id: int) -> bool:
    """Whether the account may not play (suspended or closed), as committed now."""
    user = get_user_model().objects.filter(pk=user_id).only("suspended", "is_active").first()
    return user is None or user.barred


route.serve(KIND, apply_here, refusal=Refused, gone=DurakTable.DoesNotExist)


def release_user_seats(*, user) -> int:
    """Stand `user` up at every Durak table (a suspension, a closed account: `durak.table.Release`): a seat
    in a game is played out by the bot, any other freed at once. Returns the number of tables changed."""
    table_ids = sorted(set(DurakSeat.objects.filter(user=user).values_list("table_id", flat=True)))
    for table_id in table_ids:
        release_user(table_id, user.pk)
    return len(table_ids)


def release_user(table_id: int, user_id: int) -> int | None:
    """Stand a player up at a table (staff: a suspension, a closed account; `durak.table.Release`), from
    synchronous code: through the table's owner when a live process holds it (this one included), else by an
    actor made for this command, whose lease is handed back after it. Returns the new version."""
    owner = lease.holder(DurakTable, table_id)
    if owner is None:
        actor = durak_actor.DurakActor(table_id, marks_on_load=False)
        try:
            return actor.apply(Release(user_id))
        finally:
            if actor.epoch is not None and table_id not in durak_actor.DurakActor.actors:
                lease.release(DurakTable, [(table_id, actor.epoch)])
    body = {"table": table_id, "op": "release", "user": user_id}
    try:
        answer = async_to_sync(_ask)(owner, body)
    except forward.Unreachable:
        raise Refused(
            "unavailable", "The server that runs this table did not answer; try again in a few seconds."
        ) from None
    if "moved" in answer:
        raise Refused("unavailable", "The table moved to another server; try again.")
    return route.result(answer, refusal=Refused, gone=DurakTable.DoesNotExist)


async def _ask(owner: str, body: dict[str, Any]) -> dict[str, Any]:
    if owner == process.name():
        forward.listen()
    return await forward.request(owner, KIND, body)


class DurakRoute(route.Route):
    """The way to a Durak table's owner from one connection (`live.route.Route`)."""

    kind = KIND
    model = DurakTable
    refusal = Refused

    async def apply_here(self, body: dict[str, Any], *, user):
        return await apply_here(body, user=user)
