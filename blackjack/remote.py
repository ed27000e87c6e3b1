"""Every command for a blackjack table reaches its one owner (`live.route`): applied by the table's actor here
when this process owns the table or nobody does, else forwarded to the owning process.

Blackjack's commands (`op`): `act` (a player's parsed `message`: its `action` and `v`, the version the
player saw, so a retried action the lost owner applied after all is refused as `stale_version`), and staff's
`settings` (`values`), `close`, `reopen`, `release` (`user`: stand that player up). A socket opening or
closing is the runtime's `presence`.
"""

from typing import Any

from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from blackjack import actors, flow
from blackjack.services import staff
from cards.errors import Refused
from live import route

#: The commands (`op`) a table's owner applies besides presence.
OPS = ("act", "settings", "close", "reopen", "release")


class Route(route.Route):
    """The way to a blackjack table's owner (`live.route.Route`)."""

    kind = "table"
    actor = actors.BlackjackActor

    @classmethod
    async def act_here(cls, body: dict[str, Any], *, user=None) -> int | None:
        table_id, op = body["table"], body["op"]
        if op not in OPS:
            raise Refused("bad_message", f"Unknown table command {op!r}.")
        actor = actors.actor_for(table_id)
        match op:
            case "act":
                if user is None:
                    user = await database_sync_to_async(_user)(body["user"])
                message = body["message"]
                return await actors.perform(
                    table_id=table_id, user=user, action=message, expected_version=message["v"]
                )
            case "settings":
                return await actor.call(
                    lambda: staff.change_settings(table_id=table_id, values=body["values"])
                )
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
