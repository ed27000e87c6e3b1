"""High card on the site's runtime: its table actor (`live.table.TableActor`) and its way to a table's
owner (`live.route.Route`)."""

from typing import Any

from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from cards.errors import Refused
from cards.fairness import new_server_seed
from live import fanout, route
from live.table import TableActor
from tests.highcard import store
from tests.highcard.flow import Close, Deal, Leave, Present, Sit, decide
from tests.highcard.models import HighCardTable


class HighCardActor(TableActor):
    game = store.GAME
    model = HighCardTable

    def load(self):
        return store.load(self.key)

    def decide(self, state, command, now):
        return decide(state, command)

    def commit(self, state, outcome):
        return store.commit(state, outcome, self.epoch)

    def publish(self, before, outcome, after):
        fanout.show(store.GAME, self.key, after, lobby=before.seats != after.seats or after.closed)

    def version_of(self, state) -> int:
        return state.version

    def presence_command(self, users):
        return Present(users)

    @classmethod
    def stop(cls, *, table_id: int, reason: str) -> bool:
        return store.close(table_id, reason)

    @classmethod
    def stop_stuck(cls, *, table_id: int, reason: str) -> None:
        store.close(table_id, reason)


class HighCardRoute(route.Route):
    kind = "highcard"
    actor = HighCardActor

    @classmethod
    async def act_here(cls, body: dict[str, Any], *, user=None) -> int | None:
        if body.get("op") == "close":
            command = Close()
        else:
            if user is None:
                user = await database_sync_to_async(get_user_model().objects.get)(pk=body["user"])
            message = body["message"]
            match message["action"]:
                case "sit":
                    command = Sit(user.pk, user.public_name, message["v"])
                case "leave":
                    command = Leave(user.pk, message["v"])
                case "deal":
                    command = Deal(user.pk, message["v"], new_server_seed())
                case _:
                    raise Refused("bad_message", "Unknown action.")
        return await HighCardActor.actor_for(body["table"]).tell(command)
