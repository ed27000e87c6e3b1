"""The Durak table actor: the one owner, in this process, of a live Durak table, on the site's table loop
(`live.table.TableActor`: load -> decide -> fenced commit -> publish, the lease, the timer, presence,
quarantine).

What Durak brings to the loop: its table as stored and read back (`load`), the pure flow that decides each
command (`durak.table.decide`, which asks the pure engine), and the write of an outcome in ONE short
transaction whose first statement is the fence (`_FENCE`: `UPDATE ... WHERE id AND version AND epoch`; no row
raises `Stale`). The turn deadline is the table's `deadline` (the earliest of the seat to act's turn and the
graces of players gone during a game): when it rings, the bot moves for the seat the table waits for
(`Expire`, keyed on the version). A stake the wallet cannot cover is refused at the deal and the transaction
rolls back. A table whose commands keep failing is stopped (`stop`): the game in play is voided and every
stake refunded, everyone stood up, the table closed.

After each commit the actor hands the table (a frozen value, with its version) to the table's viewers in this
process (`live.fanout.show`), each of whom sees its own view of it (`durak.view.table_view`); the other
processes get a "version v" notice and read the table once for their viewers (`load`). A commit that moved
chips tells the players' pages their balance changed (`accounts.sockets.tell_balance`).
"""

import logging
from dataclasses import replace
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from accounts import services as wallet
from accounts import sockets
from cards.errors import Refused
from cards.fairness import new_server_seed
from durak import services
from durak.bots import knowledge
from durak.bots.knowledge import Seen
from durak.engine import GameState, Match, shuffled_deck, start_game
from durak.models import GAME, DurakAction, DurakGame, DurakSeat, DurakTable, Status
from durak.table import (
    CLOSED,
    GRACE_SECONDS,
    Bout,
    Command,
    Expire,
    Game,
    Logged,
    Outcome,
    Present,
    Seat,
    Table,
    bot_name,
    decide,
    last_bout_of,
    lobby_row_changed,
    seen_from_log,
)
from live import fanout
from live.table import Behind, Stale, TableActor

logger = logging.getLogger(__name__)

#: Every write of an actor starts here: the table row moves from the version in memory to the outcome's, or
#: nothing is written. The epoch is the lease's: once another process has taken the table over, this one's
#: writes change nothing.
_FENCE = (
    f"UPDATE {DurakTable._meta.db_table} SET version = %s, status = %s, deadline = %s, turn_deadline = %s, "
    "ready_deadline = %s, closing = %s WHERE id = %s AND version = %s AND epoch = %s"
)


class DurakActor(TableActor):
    game = GAME
    model = DurakTable
    #: A player whose connection went keeps their seat in a game this long (`durak.table`).
    grace_seconds: float = GRACE_SECONDS

    def load(self) -> Table:
        return load(self.key)

    def decide(self, state: Table, command: Command, now: datetime) -> Outcome | None:
        command = self._past_marks(command)
        try:
            return decide(
                state,
                command,
                now,
                bot_seconds=settings.DURAK_BOT_SECONDS,
                grace_seconds=self.grace_seconds,
            )
        except Refused as refused:
            seen = getattr(command, "expected", None)
            if refused.code == "stale_version" and type(seen) is int and seen > state.version:
                raise Behind(refused) from None
            raise

    def commit(self, state: Table, outcome: Outcome) -> Table:
        return commit(state, outcome, epoch=self.epoch)

    def publish(self, before: Table, outcome: Outcome, after: Table) -> None:
        fanout.show(GAME, self.key, after, lobby=lobby_row_changed(before, after))

    def version_of(self, state: Table) -> int:
        return state.version

    def deadline_of(self, state: Table) -> datetime | None:
        return state.deadline

    def expiries(self, version: int) -> list[Command]:
        return [Expire(version, fresh_seed=new_server_seed())]

    def presence_command(self, users: frozenset[int]) -> Command:
        return Present(users)

    @classmethod
    def stop(cls, *, table_id: int, reason: str) -> bool:
        """Void the game in play (every human's stake refunded from the pot, nobody rated), stand everyone
        up and close the table, marked for staff: one transaction."""
        with transaction.atomic():
            row = DurakTable.objects.select_for_update().filter(pk=table_id).first()
            if row is None or row.quarantined_at is not None:
                return False
            game = row.current_game
            if row.status == Status.PLAYING and game is not None and not game.finished:
                for user_id in game.players:
                    if user_id is not None and game.stake:
                        wallet.pay(
                            user=_user(user_id),
                            amount=game.stake,
                            kind="refund",
                            game=GAME,
                            table_ref=table_id,
                            memo=f"Durak game {game.pk} voided",
                        )
                DurakGame.objects.filter(pk=game.pk).update(
                    finished=True, voided=True, finished_at=timezone.now()
                )
            DurakSeat.objects.filter(table_id=table_id).update(
                user=None, is_bot=False, away=False, ready=False, seed="", gone=None, barred=False
            )
            _close_marked(table_id, reason)
        return True

    @classmethod
    def stop_stuck(cls, *, table_id: int, reason: str) -> None:
        with transaction.atomic():
            _close_marked(table_id, reason)

    def _past_marks(self, command: Command) -> Command:
        """The command as sent against the newest marks if it was sent against a version only marks replaced
        (`live.presence.CountingActor.past_marks`)."""
        if isinstance(command, Expire):
            version = self.past_marks(command.version)
            return command if version == command.version else replace(command, version=version)
        expected = getattr(command, "expected", None)
        if expected is None or self.past_marks(expected) == expected:
            return command
        return replace(command, expected=self.past_marks(expected))


def _close_marked(table_id: int, reason: str) -> None:
    """Close the table, marked quarantined with `reason`, its version moved on (an actor holding it reloads);
    inside the caller's transaction. Its viewers are told after the commit."""
    DurakTable.objects.filter(pk=table_id).update(
        status=CLOSED,
        deadline=None,
        turn_deadline=None,
        quarantined_at=timezone.now(),
        quarantine_reason=reason,
        version=F("version") + 1,
    )
    version = DurakTable.objects.values_list("version", flat=True).get(pk=table_id)
    fanout.changed_on_commit(GAME, table_id, version, lobby=True)


actor_for = DurakActor.actor_for
forget_actors = DurakActor.forget_actors


# --- the database side: load and commit ---


def load(table_id: int) -> Table:
    """The table as stored (raises DurakTable.DoesNotExist)."""
    row = DurakTable.objects.select_related("current_game").get(pk=table_id)
    seats = tuple(
        Seat(
            number=seat.number,
            user_id=seat.user_id,
            name=seat.user.public_name if seat.user_id else ("Bot" if seat.is_bot else ""),
            is_bot=seat.is_bot,
            away=seat.away,
            ready=seat.ready,
            seed=seat.seed,
            gone=seat.gone,
            barred=seat.user_id is not None and (seat.barred or seat.user.barred),
        )
        for seat in DurakSeat.objects.filter(table_id=table_id).select_related("user").order_by("number")
    )
    seats = tuple(replace(s, name=bot_name(s.number)) if s.is_bot else s for s in seats)
    game = None
    if row.current_game is not None:
        g = row.current_game
        log = list(DurakAction.objects.filter(game_id=g.pk).order_by("version"))
        game = Game(
            id=g.pk,
            number=g.number,
            players=tuple(g.players),
            state=GameState.from_dict(g.state),
            first_version=g.first_version,
            server_seed=g.server_seed,
            server_seed_hash=g.server_seed_hash,
            client_seed=g.client_seed,
            seed_digests=tuple(g.seed_digests),
            stake=g.stake,
            rated=g.rated,
            match=Match.from_dict(g.match),
            payouts=tuple(g.payouts),
            last=Logged(log[-1].seat, log[-1].action, log[-1].by_bot) if log else None,
            last_bout=_last_bout(g, [row.action for row in log]),
            left=tuple(g.left),
            ratings=tuple((r[0], r[1]) if r else None for r in g.ratings),
        )
        game = replace(game, seen=_seen(game, [entry.action for entry in log]))
    return Table(
        id=row.pk,
        name=row.name,
        variant=row.variant,
        attack=row.attack,
        limit=row.limit,
        seats=seats,
        stake=row.stake,
        rated=row.rated,
        turn_seconds=row.turn_seconds,
        bot_level=row.bot_level,
        status=row.status,
        version=row.version,
        deadline=row.deadline,
        turn_deadline=row.turn_deadline,
        ready_deadline=row.ready_deadline,
        closing=row.closing,
        opener=row.created_by_id,
        game=game,
        match=Match.from_dict(row.match) if row.match is not None else None,
        games_played=game.number if game is not None else 0,
        next_server_seed=row.next_server_seed,
    )


def commit(before: Table, outcome: Outcome, *, epoch: int) -> Table:
    """Write `outcome` in one transaction, fenced by the version in memory and the lease's `epoch`; the table
    as committed (a new game gets its row's id). Raises Stale (nothing written) or Refused (a stake the
    wallet cannot cover, or above a new account's limit)."""
    try:
        with transaction.atomic():
            return _write(before, outcome, epoch)
    except IntegrityError:  # the action log holds this version already: another writer came first
        raise Stale from None


def _write(before: Table, outcome: Outcome, epoch: int) -> Table:
    table = outcome.table
    with connection.cursor() as cursor:
        fence = [
            table.version,
            table.status,
            table.deadline,
            table.turn_deadline,
            table.ready_deadline,
            table.closing,
            table.id,
            before.version,
            epoch,
        ]
        cursor.execute(_FENCE, fence)
        if cursor.rowcount != 1:
            raise Stale
    if outcome.seats_changed:
        _write_seats(before, table)
    game = table.game
    if outcome.started:
        game = _create_game(table)
        table = replace(table, game=game)
    elif outcome.logged is not None:
        state = game.state
        DurakGame.objects.filter(pk=game.id).update(
            state=state.to_dict(),
            version=table.version,
            finished=state.finished,
            fool=state.fool,
            payouts=list(game.payouts),
            left=list(game.left),
            finished_at=timezone.now() if state.finished else None,
        )
    if outcome.logged is not None:
        logged = outcome.logged
        DurakAction.objects.create(
            game_id=game.id,
            version=table.version,
            seat=logged.seat,
            action=logged.action,
            by_bot=logged.by_bot,
        )
    if outcome.started:
        DurakTable.objects.filter(pk=table.id).update(
            match=table.match.to_dict(), next_server_seed=table.next_server_seed
        )
    elif outcome.settled:
        DurakTable.objects.filter(pk=table.id).update(match=table.match.to_dict())
    if outcome.settled:
        ratings = _settle(table, game)
        table = replace(table, game=replace(game, ratings=ratings))
    return table


def _last_bout(game: DurakGame, actions: list[dict]) -> Bout | None:
    """The game's last closed bout, as the engine replays it from the deal's seeds and the action log (as the
    replay page does; a few milliseconds for a whole game). None if the log does not replay (a game whose
    stored state was edited by hand)."""
    if not actions:
        return None
    deck = shuffled_deck(server_seed=game.server_seed, client_seed=game.client_seed, nonce=game.nonce)
    try:
        return last_bout_of(start_game(Match.from_dict(game.match), deck), actions)
    except Refused:
        return None


def _seen(game: Game, actions: list[dict]) -> Seen | None:
    """What the game's players saw (`Game.seen`, the bots' memory), replayed from the action log; if the log
    does not lead to the stored state (rows changed by hand), what the state alone shows."""
    seen = seen_from_log(game, actions)
    if seen is None:
        logger.error("Durak game %s: its action log does not replay to its state", game.id)
        return knowledge.guess(game.state)
    return seen


def _write_seats(before: Table, after: Table) -> None:
    for old, new in zip(before.seats, after.seats, strict=True):
        if old != new:
            DurakSeat.objects.filter(table_id=after.id, number=new.number).update(
                user_id=new.user_id,
                is_bot=new.is_bot,
                away=new.away,
                ready=new.ready,
                seed=new.seed,
                gone=new.gone,
                barred=new.barred,
            )


def _user(user_id: int):
    return get_user_model()(pk=user_id)


def _create_game(table: Table) -> Game:
    game = table.game
    humans = [user for user in game.players if user is not None]
    row = DurakGame.objects.create(
        table_id=table.id,
        number=game.number,
        players=list(game.players),
        state=game.state.to_dict(),
        first_version=game.first_version,
        version=table.version,
        match=game.match.to_dict(),
        server_seed=game.server_seed,
        server_seed_hash=game.server_seed_hash,
        client_seed=game.client_seed,
        seed_digests=list(game.seed_digests),
        stake=game.stake,
        pot=game.stake * len(humans),
        rated=game.rated,
    )
    DurakTable.objects.filter(pk=table.id).update(current_game=row.pk)
    row.participants.set(humans)
    if game.stake:
        for seat, user_id in enumerate(game.players):
            if user_id is None:
                continue
            services.check_stake(user_id=user_id, stake=game.stake)  # a new account's limit
            sockets.tell_balance(user_id=user_id)  # the header of the player's pages, after the commit
            try:
                wallet.stake(
                    user=_user(user_id),
                    amount=game.stake,
                    game=GAME,
                    table_ref=table.id,
                    memo=f"Durak game {row.pk} stake",
                )
            except wallet.WalletError:
                name = table.seats[seat].name
                raise Refused(
                    "insufficient_chips", f"{name} cannot cover the stake of {game.stake:,}."
                ) from None
    return replace(game, id=row.pk)


def _settle(table: Table, game: Game) -> tuple[tuple[float, float] | None, ...]:
    """The pot back to the players (`durak.table.settle`) and the ratings, in the commit's transaction; per
    seat the rating before and after (empty: unrated)."""
    for user_id, amount in zip(game.players, game.payouts, strict=True):
        if user_id is not None and amount:
            sockets.tell_balance(user_id=user_id)
            kind = "refund" if amount == game.stake else "payout"
            wallet.pay(
                user=_user(user_id),
                amount=amount,
                kind=kind,
                game=GAME,
                table_ref=table.id,
                memo=f"Durak game {game.id}",
            )
    if not game.rated:
        return ()
    changes = services.rate(game.players, game.state.fool, variant=game.state.rules.variant, game_id=game.id)
    return tuple((change[0], change[1]) if change else None for change in changes)
