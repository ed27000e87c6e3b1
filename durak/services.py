"""Opening a Durak table (the one write outside its actor: the table does not live yet), the reads the
pages share, the rating update and the staff's report of one-sided chip flows between players."""

from dataclasses import dataclass
from datetime import datetime
from itertools import combinations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q, QuerySet, Sum

from accounts import limits, selectors
from cards.errors import Refused
from durak import glicko
from durak.bot import DEFAULT_LEVEL
from durak.engine.rules import VARIANTS
from durak.models import DurakGame, DurakRating, DurakSeat, DurakTable, Status
from durak.table import bot_name
from live import fanout, private

#: Open Durak tables one player (not staff) may have: one person cannot fill the lobby.
MAX_OPEN_TABLES_PER_PLAYER = 3


def open_table(
    *,
    user,
    name: str,
    variant: str,
    attack: str,
    limit: str,
    seats: int,
    stake: int,
    rated: bool,
    turn_seconds: int,
    private: bool = False,
    bot_level: str = DEFAULT_LEVEL,
) -> DurakTable:
    """A new table with `seats` empty seats (the form and the model's constraints check the options). Without
    a `user` it is the site's own table (the demo tables): nobody is its opener, so its games start when every
    seated player is ready. A private table is in no lobby: players come through its invitation link."""
    if user is not None and user.barred:
        raise Refused("suspended", "Your account is suspended or closed: you cannot open a table.")
    if user is not None and not user.is_staff:
        mine = DurakTable.objects.filter(created_by=user).exclude(status=Status.CLOSED).count()
        if mine >= MAX_OPEN_TABLES_PER_PLAYER:
            raise Refused("too_many_tables", f"You have {mine} open Durak tables already.")
    if user is not None:
        check_stake(user_id=user.pk, stake=stake)
        check_chips(user=user, stake=stake)
    with transaction.atomic():
        table = DurakTable.objects.create(
            name=name,
            variant=variant,
            attack=attack,
            limit=limit,
            seats=seats,
            stake=stake,
            rated=rated,
            turn_seconds=turn_seconds,
            bot_level=bot_level,
            created_by=user,
            is_private=private,
        )
        DurakSeat.objects.bulk_create(DurakSeat(table=table, number=n) for n in range(seats))
        if not private:
            fanout.lobby_changed_on_commit()
    return table


#: Quick play's stakes (0: casual) and its tables' options besides the variant and the number of players.
QUICK_STAKES = (0, 10, 100, 1000)
QUICK_OPTIONS = {"attack": "all_sides", "limit": "six", "rated": True, "turn_seconds": 30}


def quick_tables(*, user, variant: str, stake: int, players: int) -> QuerySet[DurakTable]:
    """Public tables quick play may seat `user` at: waiting, of these options, with a free seat, not theirs
    to sit at already; the fullest first (a game starts sooner)."""
    return (
        DurakTable.objects.filter(
            status=Status.WAITING,
            is_private=False,
            quarantined_at=None,
            closing=False,
            variant=variant,
            stake=stake,
            seats=players,
            **QUICK_OPTIONS,
        )
        .filter(seat_rows__user=None, seat_rows__is_bot=False)
        .exclude(seat_rows__user=user)
        .annotate(taken=Count("seat_rows", filter=~Q(seat_rows__user=None) | Q(seat_rows__is_bot=True)))
        .order_by("-taken", "id")
        .distinct()
    )


def visible_table(table_id: int, *, user, token: str | None) -> DurakTable | None:
    """The table's row if `user` may see it (a private table: its players, its opener, or with its invitation
    token; `live.private`), else None (also for no such table)."""
    row = DurakTable.objects.filter(pk=table_id).only("is_private", "private_token", "created_by").first()
    if row is None or not row.is_private:
        return row
    seated = user.is_authenticated and DurakSeat.objects.filter(table_id=table_id, user_id=user.pk).exists()
    return row if private.admits(row, user=user, token=token, seated=seated) else None


def check_chips(*, user, stake: int) -> None:
    """Refuse (`insufficient_chips`) a stake the user's balance cannot cover now."""
    balance = selectors.get_balance(user=user) or 0
    if stake > balance:
        raise Refused("insufficient_chips", f"Your {balance:,} chips cannot cover a stake of {stake:,}.")


def check_stake(*, user_id: int, stake: int) -> None:
    """Refuse (`stake_limit`) a stake above what the user may stake on a game (`accounts.limits`), their
    finished Durak games counted. A stake every account may make reads nothing."""
    if limits.within_every_limit(stake):
        return
    user = get_user_model().objects.get(pk=user_id)
    played = DurakGame.objects.filter(participants=user_id, finished=True).count
    limit = limits.stake_limit(user=user, games_played=played)
    if limit is not None and stake > limit:
        raise Refused(
            "stake_limit",
            f"{user.public_name} cannot stake {stake:,} chips: {limits.limit_reason()}.",
        )


#: Durak tables the lobby lists (the newest).
LOBBY_TABLES = 50


def lobby_section(page: int) -> dict:
    """Durak's part of the lobby message: the open tables, newest first (at most `LOBBY_TABLES`, on every
    page of the lobby), with variant, stake, seats taken and status."""
    return {"durak_tables": _lobby_rows()}


def _lobby_rows() -> list[dict]:
    public = DurakTable.objects.filter(is_private=False).exclude(status=Status.CLOSED)
    tables = public.order_by("-created_at")[:LOBBY_TABLES]
    taken: dict[int, int] = {}
    for table_id in (
        DurakSeat.objects.filter(table__in=tables)
        .exclude(user=None, is_bot=False)
        .values_list("table_id", flat=True)
    ):
        taken[table_id] = taken.get(table_id, 0) + 1
    return [
        {
            "id": t.pk,
            "name": t.name,
            # In the language of the page or socket the section is rendered for (a section is never shared).
            "variant": str(t.get_variant_display()),
            "attack": str(t.get_attack_display()),
            "stake": t.stake,
            "rated": t.rated,
            "bot_level": str(t.get_bot_level_display()),
            "seats": t.seats,
            "taken": taken.get(t.pk, 0),
            "status": str(t.get_status_display()),
            "status_code": t.status,
        }
        for t in tables
    ]


def leaderboard(variant: str, limit: int = 50) -> list[DurakRating]:
    """The best rated players of `variant` (one of `VARIANTS`), with their record in it: only those who have
    played rated games of it against at least DURAK_LEADERBOARD_MIN_OPPONENTS different players, so that a
    rating fed by a few accounts of one's own stays off the board."""
    if variant not in VARIANTS:
        raise ValueError(f"not a Durak variant: {variant!r}")
    rows = DurakRating.objects.filter(
        variant=variant,
        games__gt=0,
        user__suspended=False,
        user_id__in=_met_players(variant, settings.DURAK_LEADERBOARD_MIN_OPPONENTS),
    )
    return list(rows.select_related("user").order_by("-rating", "pk")[:limit])


def _met_players(variant: str, opponents: int) -> QuerySet:
    """The ids of the users who played finished rated games of `variant` against at least `opponents`
    different players, as one grouped subquery over the games' participants (bots are none): each seat's
    game joined to its participants, counted distinct per user, the user among them."""
    seats = DurakGame.participants.through.objects.filter(
        durakgame__rated=True, durakgame__finished=True, durakgame__table__variant=variant
    )
    met = seats.values("user_id").annotate(met=Count("durakgame__participants", distinct=True))
    return met.filter(met__gt=opponents).values("user_id")


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """A finished game as one player played it (a row of their history): `result` is "won" (they went
    out), "fool", "draw" or "voided" (stopped by quarantine: every stake refunded, nobody rated); `left`:
    they had left and the bot played their seat out; `opponents` the other seats' names; `rating` their
    rating before and after it (None: unrated, or rated before the change was kept)."""

    game: DurakGame
    result: str
    left: bool
    opponents: tuple[str, ...]
    stake: int
    payout: int
    rating: tuple[float, float] | None

    @property
    def net(self) -> int:
        return self.payout - self.stake

    @property
    def rating_change(self) -> float | None:
        return None if self.rating is None else self.rating[1] - self.rating[0]


def played_games(user, limit: int = 50) -> list[PlayedGame]:
    """The finished games `user` played, newest first, each as they played it (two queries: the games and
    the names of the other players)."""
    games = list(
        user.durak_games.filter(finished=True).select_related("table").order_by("-finished_at")[:limit]
    )
    ids = {player for game in games for player in game.players if player is not None}
    rows = get_user_model().objects.filter(pk__in=ids).values_list("pk", "display_name", "username")
    names = {pk: display or username for pk, display, username in rows}  # `public_name`, read as values
    return [_played(game, user.pk, names) for game in games]


def _played(game: DurakGame, user_id: int, names: dict[int, str]) -> PlayedGame:
    seat = game.players.index(user_id)
    if game.voided:
        result = "voided"
    elif game.fool is None:
        result = "draw"
    else:
        result = "fool" if game.fool == seat else "won"
    payout = game.stake if game.voided else (game.payouts[seat] if seat < len(game.payouts) else 0)
    rating = game.ratings[seat] if seat < len(game.ratings) else None
    opponents = tuple(
        names.get(player, "?") if player is not None else bot_name(other)
        for other, player in enumerate(game.players)
        if other != seat
    )
    return PlayedGame(
        game=game,
        result=result,
        left=seat in game.left,
        opponents=opponents,
        stake=game.stake,
        payout=payout,
        rating=(rating[0], rating[1]) if rating else None,
    )


def rate(
    players: tuple[int | None, ...], fool: int | None, *, variant: str, game_id: int | None = None
) -> list[list[float] | None]:
    """Glicko-2 update, in `variant`, of every player of a finished rated game, scored against the other
    players only: bots carry no rating and are no opponents (a fixed-rated bot beaten forever would lift a
    rating without end), so a game with fewer than two players rates nobody. The game `game_id` keeps each
    player's rating before and after it (`DurakGame.ratings`, for the history page and the table's result);
    returns those per seat (empty: nobody rated). In the caller's transaction."""
    humans = {seat: user for seat, user in enumerate(players) if user is not None}
    if len(humans) < 2:
        return []
    for user_id in humans.values():
        DurakRating.objects.get_or_create(user_id=user_id, variant=variant)
    rows = {
        row.user_id: row
        for row in DurakRating.objects.select_for_update().filter(
            user_id__in=list(humans.values()), variant=variant
        )
    }
    before = {
        seat: glicko.Rating(rows[user].rating, rows[user].deviation, rows[user].volatility)
        for seat, user in humans.items()
    }
    changes: list[list[float] | None] = [None] * len(players)
    for seat, results in glicko.game_results(len(players), fool).items():
        if seat not in humans:
            continue
        against = [(before[other], score) for other, score in results if other in humans]
        new = glicko.update(before[seat], against)
        row = rows[humans[seat]]
        row.rating, row.deviation, row.volatility = new.rating, new.deviation, new.volatility
        row.games += 1
        row.fools += seat == fool
        row.draws += fool is None
        row.streak = 0 if seat == fool else row.streak + 1
        row.best_streak = max(row.best_streak, row.streak)
        row.save()
        changes[seat] = [before[seat].rating, new.rating]
    if game_id is not None:
        DurakGame.objects.filter(pk=game_id).update(ratings=changes)
    return changes


def chips_in_play(user_id: int) -> int:
    """The stakes the player has in Durak games still in play (each human player's stake is in the pot until
    the game ends, whoever plays their seat by then)."""
    games = DurakGame.objects.filter(finished=False, participants__pk=user_id, stake__gt=0)
    return games.aggregate(staked=Sum("stake"))["staked"] or 0


@dataclass(frozen=True, slots=True)
class ChipFlow:
    """The staked games two players finished together and the chips the pots moved between them: `taker`
    won `taken` chips from `giver` and lost `given` back to them (user ids)."""

    taker: int
    giver: int
    games: int
    taken: int
    given: int
    last_played: datetime

    @property
    def net(self) -> int:
        return self.taken - self.given

    @property
    def one_way(self) -> float:
        """The share of the chips between the two that went to the taker (0 to 1; 0 when none moved)."""
        moved = self.taken + self.given
        return self.taken / moved if moved else 0.0


def one_sided_flows(*, since: datetime, min_games: int, min_share: float, min_net: int) -> list[ChipFlow]:
    """The pairs of players whose chips went one way in the staked Durak games they finished together since
    `since` (accounts made to lose to one player, or to each other in turn): at least `min_games` games,
    at least `min_share` of the chips between them to one side and a net of `min_net` chips or more;
    the largest net first, then the latest. One pass over those games: a game's pot pays the fool's stake to
    the players who went out (`durak.table.settle`), so each of them took `payout - stake` from the fool."""
    pairs: dict[tuple[int, int], list] = {}  # (lower id, higher id) -> [games, to higher, to lower, last]
    games = DurakGame.objects.filter(finished=True, stake__gt=0, finished_at__gte=since)
    rows = games.values_list("players", "payouts", "stake", "fool", "finished_at")
    for players, payouts, stake, fool, finished_at in rows.iterator(chunk_size=2000):
        for pair in combinations(sorted({user for user in players if user is not None}), 2):
            tally = pairs.setdefault(pair, [0, 0, 0, finished_at])
            tally[0] += 1
            tally[3] = max(tally[3], finished_at)
        giver = players[fool] if fool is not None else None
        if giver is None:
            continue  # a draw or a bot's loss: every stake went back
        for taker, payout in zip(players, payouts, strict=True):
            if taker is not None and taker != giver and payout > stake:
                tally = pairs[(min(giver, taker), max(giver, taker))]
                tally[1 if taker > giver else 2] += payout - stake
    flows = []
    for (low, high), (played, to_high, to_low, last) in pairs.items():
        taker, giver, taken, given = (
            (high, low, to_high, to_low) if to_high >= to_low else (low, high, to_low, to_high)
        )
        flow = ChipFlow(taker, giver, played, taken, given, last)
        if played >= min_games and flow.net >= max(1, min_net) and flow.one_way >= min_share:
            flows.append(flow)
    return sorted(flows, key=lambda flow: (-flow.net, -flow.last_played.timestamp()))


def ratings_of(user) -> list[DurakRating]:
    """A player's rating and record in each Durak variant they have played rated games of, in the variants'
    order."""
    found = {rating.variant: rating for rating in DurakRating.objects.filter(user=user, games__gt=0)}
    return [found[variant] for variant in VARIANTS if variant in found]
