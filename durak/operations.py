"""What staff do to a live Durak table (the admin's actions): close it, open it again, stand a player up.
Each goes to the table's owner when a live process holds it (`live.route.Route.from_sync`: its actor applies
it in its mailbox), else to an actor made for the command here (`durak.actor.DurakActor.apply_once`)."""

from durak.actor import DurakActor
from durak.models import GAME
from durak.remote import DurakRoute, release_user
from durak.table import Close, Command, Reopen
from live import quarantine


def close_table(*, table_id: int) -> int | None:
    """Close the table: between games at once, every player stood up; during a game when it ends (nobody may
    sit meanwhile). The lobby drops it. Returns the new version (None: closed already)."""
    return _through_owner(table_id, "close", Close())


def reopen_table(*, table_id: int) -> int | None:
    """Open a closed table again, quarantined or not (or keep open one that was to close after its game)."""
    quarantine.lift(GAME, table_id=table_id)
    return _through_owner(table_id, "reopen", Reopen())


def stand_up(*, table_id: int, user_id: int) -> int | None:
    """Stand a player up (`durak.table.Release`): in a game the bot plays their seat to its end and it
    settles as the seat does; between games the seat is freed."""
    return release_user(table_id, user_id)


def _through_owner(table_id: int, op: str, command: Command) -> int | None:
    return DurakRoute.from_sync(table_id, {"op": op}, lambda: DurakActor.apply_once(table_id, command))
