"""The blackjack table actor: the one owner, in this process, of a live blackjack table, on the site's table
loop (`live.table.TableActor`: load -> decide -> fenced commit -> publish, the lease, the timer, presence,
quarantine).

What blackjack brings to the loop: its table as stored (`services.load.begin`: the rows kept beside the flow's
`TableState`, so the store writes back what changed), the pure flow (`blackjack.flow.decide`, through
`services.store.decide` with fresh seeds and the shoe's order), and the write of an outcome without reading
the table again (`_commit`): the fence is the first statement, and when no chips move and no row is made it
heads the write pipeline (two round trips on PostgreSQL: the batch, COMMIT). A command is a function of the
loaded table (a `Build`: an action needs its player, read from the seats). A round that cannot go on
(`RoundBroken`) is voided with every stake refunded.

After each commit the actor builds the new version's shared view part from what it holds
(`viewmodel.shared_from_memory`, with the `viewmodel.Memory` of events and balances it keeps) and hands
it to the table's viewers in this process (`live.fanout.show`), the acting player's among them; the other
processes get only a "version v" notice and read the database. The table's deadline is the earliest of its
window's deadline and the end of an absent player's grace period (`deadline_of`). See docs/architecture.md.
"""

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from channels.db import database_sync_to_async
from django.db import DataError, connection, transaction
from django.db.models import Q

from blackjack import flow, viewmodel
from blackjack.models import GAME, Phase, Seat, Table
from blackjack.services import actions, load, quarantine, store
from blackjack.services.load import Loaded, RoundBroken
from cards.errors import Refused
from live import fanout
from live.table import Behind, Stale
from live.table import TableActor as LiveTableActor
from storage.batch import sends_together

# The table row moves from the version in memory to the outcome's, or nothing is written: the first statement
# of every commit (the ORM's update costs more CPU than the rest of the statement's trip). The epoch is the
# lease's: once another process has taken the table over, this one's writes change nothing.
_FENCE = f"UPDATE {Table._meta.db_table} SET version = %s WHERE id = %s AND version = %s AND epoch = %s"
# The same fence as the first statement of the write pipeline (PostgreSQL), where no row count comes back:
# no row fails the statement (a division by zero), which fails the pipeline's later statements and the
# transaction with them.
_FENCE_IN_PIPELINE = f"WITH fenced AS ({_FENCE} RETURNING 1) SELECT 1 / count(*) FROM fenced"
_DIVISION_BY_ZERO = "22012"

logger = logging.getLogger(__name__)

#: Makes the command from the loaded state (an action needs its player, read from the seats).
Build = Callable[[Loaded], flow.Command]


class BlackjackActor(LiveTableActor):
    """The owner of one blackjack table's state in this process."""

    game = GAME
    model = Table
    passes = (RoundBroken,)

    def __init__(self, key: int, **options) -> None:
        super().__init__(key, **options)
        #: What the views need beyond the state (None until the first commit after a load).
        self.memory: viewmodel.Memory | None = None
        #: The shared view part of the version in memory, once built after a commit.
        self.view: viewmodel._Shared | None = None

    def load(self) -> Loaded:
        self.memory = self.view = None
        return load.begin(self.key)  # no row: "No such table"

    def decide(self, loaded: Loaded, build: Build, now: datetime) -> flow.Outcome | None:
        loaded.now = now
        command = self._past_marks(build(loaded))
        outcome = store.decide(loaded, command)
        if outcome.refusal is not None:
            refusal = Refused(outcome.refusal.code, outcome.refusal.message)
            seen = getattr(command, "expected_version", None)
            if refusal.code == "stale_version" and type(seen) is int and seen > loaded.state.version:
                raise Behind(refusal)  # the client saw a version another writer made: look again
            raise refusal
        if outcome.broken is not None:
            rnd, reason = outcome.broken
            raise RoundBroken(rnd.id, reason)
        return outcome if outcome.changed else None

    def commit(self, loaded: Loaded, outcome: flow.Outcome) -> Loaded:
        """Write the outcome behind the fence. When every write of the outcome goes in the one batch (no chips
        move, no row is made or deleted: the ordinary action), the fence is the batch's first statement and
        the command takes two round trips on PostgreSQL (the batch, COMMIT); otherwise it goes first on its
        own, so that no row is locked before the table's (the services lock the table first)."""
        fence = [outcome.state.version, self.key, loaded.state.version, self.epoch]
        pipelined = sends_together(connection.alias) and _batched_only(loaded, outcome)
        try:
            with transaction.atomic():
                if pipelined:
                    store.write(loaded, outcome, first=(_FENCE_IN_PIPELINE, fence), announce=False)
                else:
                    with connection.cursor() as cursor:
                        cursor.execute(_FENCE, fence)
                        if cursor.rowcount != 1:
                            raise Stale
                    store.write(loaded, outcome, announce=False)
        except DataError as error:
            if pipelined and getattr(error.__cause__, "sqlstate", None) == _DIVISION_BY_ZERO:
                raise Stale from None
            raise
        _keep(loaded, outcome.state)
        return loaded

    def publish(self, before: Loaded, outcome: flow.Outcome, after: Loaded) -> None:
        """Bring the memory up to date, build the new version's shared view part from it and hand that to
        the table's viewers (the commit stands whatever happens here; a failure is logged and the memory read
        again next time)."""
        loaded = after
        changed, loaded.balances = loaded.balances, {}
        state = outcome.state
        try:
            memory = self.memory
            if memory is None:  # the first commit since the table was loaded: read what the views need
                memory = self.memory = viewmodel.remember(self.key)
            else:
                added = [
                    viewmodel.event_entry(loaded.now, event.text, event.kind) for event in outcome.events
                ]
                memory.events = [*memory.events, *added][-viewmodel.EVENTS_SHOWN :]
                memory.balances.update(changed)
            if loaded.round is not None:
                shoe = loaded.round.shoe
            elif state.shoe is not None and state.shoe.id in loaded.shoes:
                shoe = loaded.shoes[state.shoe.id]
            else:
                shoe = viewmodel._unretired_shoe(loaded.table)
            self.view = viewmodel.shared_from_memory(loaded.table, loaded.round, shoe, loaded.seats, memory)
        except Exception:
            logger.exception("table %s: the views of version %s could not be built", self.key, state.version)
            self.memory = self.view = None
            fanout.changed(GAME, self.key, state.version, lobby=outcome.lobby)
            return
        for user_id, balance in changed.items():
            balance_seen(user_id, balance, but=self)
        fanout.show(GAME, self.key, self.view, lobby=outcome.lobby)

    def version_of(self, loaded: Loaded) -> int:
        return loaded.state.version

    def deadline_of(self, loaded: Loaded) -> datetime | None:
        """The table's deadline, or the moment its first absent player's grace period ends (outside play),
        whichever comes first."""
        state = loaded.state
        moments = [state.deadline] if state.deadline else []
        if state.phase in (Phase.WAITING, Phase.BETTING, Phase.SETTLED):
            seats = state.seats.values()
            gone = [seat.disconnected_at for seat in seats if seat.player and seat.disconnected_at]
            moments += [moment + flow.DISCONNECT_GRACE for moment in gone]
        return min(moments) if moments else None

    def expiries(self, version: int) -> list[Build]:
        """The deadline of `version`, then the players whose grace period is over stood up."""
        return [lambda loaded: flow.Expire(version), lambda loaded: flow.StandUpAbsent()]

    def presence_command(self, users: frozenset[int]) -> Build:
        return lambda loaded: flow.Present(users)

    def recovered(self, error: Exception) -> int | None:
        if isinstance(error, RoundBroken):
            return actions.void_round(round_id=error.round_id, reason=error.reason)
        return None

    @classmethod
    def stop(cls, *, table_id: int, reason: str) -> bool:
        return quarantine.stop(table_id=table_id, reason=reason)

    @classmethod
    def stop_stuck(cls, *, table_id: int, reason: str) -> None:
        quarantine.close_stuck(table_id=table_id, reason=reason)

    @classmethod
    def due(cls, now: datetime):
        """Besides the due deadlines, the tables whose absent players' grace is over, and those of a lapsed
        owner with players not marked yet (a restart, or a dead owner nobody talks to): their grace must
        run."""
        absent = Seat.objects.filter(
            user__isnull=False,
            disconnected_at__lte=now - flow.DISCONNECT_GRACE,
            table__phase__in=[Phase.WAITING, Phase.BETTING, Phase.SETTLED],
        ).values("table_id")
        unmarked = Seat.objects.filter(user__isnull=False, disconnected_at__isnull=True).values("table_id")
        lapsed = ~Q(owner="") & (Q(lease_until__isnull=True) | Q(lease_until__lte=now))
        rows = Table.objects.filter(Q(deadline__lte=now) | Q(pk__in=absent) | (lapsed & Q(pk__in=unmarked)))
        return rows.values_list("id", "version", "deadline", "owner", "lease_until")

    def _past_marks(self, command: flow.Command) -> flow.Command:
        """The command as sent against the newest marks if it was sent against a version only marks replaced
        (`live.presence.CountingActor.past_marks`)."""
        if isinstance(command, flow.Act):
            seen = self.past_marks(command.expected_version)
            if seen != command.expected_version:
                return replace(command, expected_version=seen)
        elif isinstance(command, flow.Expire) and self.past_marks(command.version) != command.version:
            return flow.Expire(self.past_marks(command.version))
        return command


def _batched_only(loaded: Loaded, out: flow.Outcome) -> bool:
    """Whether `store.write` sends every write of the outcome in its batch (see `store.write`): no chips move
    (the wallet's statements return balances), no shoe, round or seat row is created or deleted, and every
    shoe and round written was loaded."""
    if out.moves or out.payments or out.seats_removed or not out.state.seats.keys() <= loaded.seats.keys():
        return False
    rounds_loaded = all(info.id in loaded.rounds for info in out.rounds)
    return rounds_loaded and all(info.id in loaded.shoes for info in out.shoes)


def _keep(loaded: Loaded, state: flow.TableState) -> None:
    """The commit succeeded: the outcome's state is the table's, and the models as written are the ones the
    next command's writes are compared with."""
    loaded.state = state
    loaded.keep_seats()
    current = state.round
    loaded.round = loaded.rounds[current.id] if current is not None else None
    loaded.rounds = {current.id: loaded.round} if current is not None else {}
    kept = (state.shoe, current.shoe if current is not None else None)
    loaded.shoes = {
        info.id: loaded.shoes[info.id] for info in kept if info is not None and info.id in loaded.shoes
    }


actor_for = BlackjackActor.actor_for
forget_actors = BlackjackActor.forget_actors


def balance_seen(user_id: int, balance: int, *, but: BlackjackActor | None = None) -> None:
    """A player's balance moved (at another table of this process, or outside any table: `balance_changed`):
    the actors here that show it take the new figure into their next view. From any thread: a snapshot of
    the map, and one dict item set per actor."""
    for actor in list(BlackjackActor.actors.values()):
        memory = actor.memory
        if actor is not but and memory is not None and user_id in memory.balances:
            memory.balances[user_id] = balance


def version_in_memory(table_id: int) -> int | None:
    """The version this process's actor of the table holds (None: no actor here, or nothing loaded)."""
    actor = BlackjackActor.actors.get(table_id)
    loaded = actor.state if actor is not None else None
    return loaded.state.version if loaded is not None and loaded.state is not None else None


def player_action(user, action: dict, expected_version) -> Build:
    """The command of `user`'s protocol action, as `services.perform` makes it."""

    def build(loaded: Loaded) -> flow.Command:
        loaded.users.setdefault(user.pk, user)
        player = actions.acting_player(loaded, user)
        return flow.Act(player=player, action=action, expected_version=expected_version)

    return build


async def perform(*, table_id: int, user, action: dict, expected_version):
    """`services.perform` through the table's actor: the new version (its views are shown to the table's
    viewers here by the actor; see `TableActor.tell`)."""
    if user is None or not user.is_authenticated:
        raise Refused("not_authenticated", "Log in to play.")
    try:
        return await actor_for(table_id).tell(player_action(user, action, expected_version))
    except RoundBroken as broken:
        await database_sync_to_async(actions.void_round)(round_id=broken.round_id, reason=broken.reason)
        raise Refused(
            "illegal_action", "The round could not be continued and was voided; every stake was refunded."
        ) from None
