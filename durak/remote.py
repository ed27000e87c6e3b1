"""Every command for a Durak table reaches its one owner (`live.route`): applied by the table's actor here
when this process owns the table or nobody does (the actor then takes the lease), or forwarded over the
channel layer to the owning process, whose answer (the new version, or the refusal's code and message) ends
the command exactly as a local one would.

A player's command crosses as their parsed message (`durak.protocol`: the action, its card and target, the
version the player saw, the player's seed; `op` "act") with the player's id; the owner makes the table command
of it (`command_of`), so a new game's server seed is made by the process that keeps it, and never crosses the
layer. Staff's `release` (`user`) stands a player up (a suspension, a closed account, the admin), `close` and
`reopen` close and open the table (`durak.operations`). A socket opening or
closing is the runtime's `presence`. A forwarded action carries the version its player saw, so an action the
owner applied after its answer was lost is refused as `stale_version` when retried: applied once.
"""

from typing import Any

from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from cards.errors import Refused
from cards.fairness import new_server_seed
from durak.actor import DurakActor
from durak.models import DurakSeat, DurakTable
from durak.protocol import ENGINE_ACTIONS
from durak.table import Act, AddBot, Close, Command, Leave, Ready, Release, Reopen, Sit, Start
from live import route


def command_of(message: dict[str, Any], user, *, barred: bool = False) -> Command:
    """The table command of a player's parsed message (`durak.protocol`); `barred`: the player's account is
    suspended or closed (read for a `sit`: a seated player's is on their seat)."""
    expected = message["v"]
    match message["action"]:
        case "sit":
            return Sit(user.pk, user.public_name, expected=expected, barred=barred)
        case "leave":
            return Leave(user.pk, expected=expected)
        case "add_bot":
            return AddBot(user.pk, expected=expected)
        case "ready" | "start":
            return (Ready if message["action"] == "ready" else Start)(
                user.pk,
                fresh_seed=new_server_seed(),
                seed=message.get("seed") or new_server_seed()[:32],
                expected=expected,
            )
        case action if action in ENGINE_ACTIONS:
            played = {
                "action": action,
                **{key: message[key] for key in ("card", "target") if message.get(key)},
            }
            return Act(user.pk, played, expected=expected)
    raise Refused("bad_message", f"Unknown action {message['action']!r}.")


class DurakRoute(route.Route):
    """The way to a Durak table's owner (`live.route.Route`)."""

    kind = "durak"
    actor = DurakActor

    @classmethod
    async def act_here(cls, body: dict[str, Any], *, user=None) -> int | None:
        match body.get("op"):
            case "act":
                if user is None:
                    user = await database_sync_to_async(_user)(body["user"])
                message = body["message"]
                barred = message.get("action") == "sit" and await database_sync_to_async(is_barred)(user.pk)
                command = command_of(message, user, barred=barred)
            case "release":
                command = Release(body["user"])
            case "close":
                command = Close()
            case "reopen":
                command = Reopen()
            case op:
                raise Refused("bad_message", f"Unknown Durak table command {op!r}.")
        return await DurakActor.actor_for(body["table"]).tell(command)


def _user(user_id: int):
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise Refused("not_authenticated", "Log in to play.")
    return user


def is_barred(user_id: int) -> bool:
    """Whether the account may not play (suspended or closed), as committed now."""
    user = get_user_model().objects.filter(pk=user_id).only("suspended", "is_active").first()
    return user is None or user.barred


def release_user_seats(*, user) -> int:
    """Stand `user` up at every Durak table (a suspension, a closed account: `durak.table.Release`): a seat
    in a game is played out by the bot, any other freed at once. Returns the number of tables changed."""
    table_ids = sorted(set(DurakSeat.objects.filter(user=user).values_list("table_id", flat=True)))
    for table_id in table_ids:
        release_user(table_id, user.pk)
    return len(table_ids)


def release_user(table_id: int, user_id: int) -> int | None:
    """Stand a player up at a table, from synchronous code: through the table's owner when a live process
    holds it (this one included), else by an actor made for this command. Returns the new version."""
    return DurakRoute.from_sync(
        table_id,
        {"op": "release", "user": user_id},
        lambda: DurakActor.apply_once(table_id, Release(user_id)),
    )


def act_for(table_id: int, user, action: str) -> int | None:
    """A player's table action (`sit`, `add_bot`) from synchronous code (quick play), through the table's
    owner, at the table's version as stored now. Returns the new version; raises `Refused`."""
    version = DurakTable.objects.values_list("version", flat=True).get(pk=table_id)
    message = {"action": action, "v": version}
    command = command_of(message, user, barred=user.barred)
    return DurakRoute.from_sync(
        table_id,
        {"op": "act", "message": message, "user": user.pk},
        lambda: DurakActor.apply_once(table_id, command),
    )
