"""What staff (and the lobby's one-click seat) do to a live blackjack table: each goes to the table's owner
when a live process holds it (`live.route.Route.from_sync`: the actor applies it in its mailbox), else is
written by the services here, fenced by the table's version."""

from functools import partial

from blackjack import flow, remote
from blackjack.models import GAME, RulePreset, Seat
from blackjack.services import floats, store
from blackjack.services.staff import change_settings
from live import quarantine


def update_table(*, table_id: int, **values) -> int:
    """Change a table's settings (`TABLE_SETTINGS`). The round under way keeps the rules and limits it
    opened with (`Round.rules`, `min_bet`, `max_bet` are snapshots); the next round uses the new ones.
    Seats cannot be removed while a player sits in them. Applied by the table's owner (`blackjack.remote`).
    Tells the table and the lobby; returns the version."""
    if isinstance(values.get("preset"), RulePreset):
        values["preset"] = values["preset"].pk  # the command may cross processes: the preset goes by id
    return _through_owner(
        table_id,
        {"op": "settings", "values": values},
        lambda: change_settings(table_id=table_id, values=values),
    )


def close_table(*, table_id: int) -> int:
    """Close a table: nobody new may sit; players without chips in the round under way stand up now, the
    others when the round is settled (`leaving_after_round`). The lobby drops it. Its float goes back to the
    house now if no round is under way, else after the round (`floats.rebalance`). Returns the version."""
    version = _through_owner(table_id, {"op": "close"}, lambda: store.run(table_id, flow.Release(close=True)))
    floats.sweep(table_id=table_id)
    return version


def reopen_table(*, table_id: int) -> int:
    """Open a closed table again (it returns to the lobby if public), quarantined or not. Returns the
    version."""
    version = _through_owner(
        table_id, {"op": "reopen"}, lambda: store.run(table_id, flow.Reopen(), engine=False)
    )
    quarantine.lift(GAME, table_id=table_id)
    return version


def release_user_seats(*, user) -> int:
    """Stand `user` up at every table (a suspension, a deactivation): at once where no chips of theirs are in
    play, after the current round elsewhere. Returns the number of tables changed."""
    table_ids = set(Seat.objects.filter(user=user).values_list("table_id", flat=True))
    for table_id in sorted(table_ids):
        here = partial(store.run, table_id, flow.Release(player_id=user.pk))
        _through_owner(table_id, {"op": "release", "user": user.pk}, here)
    return len(table_ids)


def _through_owner(table_id: int, command: dict, here) -> int | None:
    """A staff edit goes to the table's owner, if a live process owns it."""
    return remote.Route.from_sync(table_id, command, here)
