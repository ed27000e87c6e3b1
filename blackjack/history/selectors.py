"""Reads shared by the history pages: leaderboards, a player's rounds, and profile statistics.

Every function issues a fixed number of queries whatever the data (the page tests assert the counts). Staff,
superusers, suspended (`User.suspended`) and deactivated (`is_active` false) accounts never appear on a
leaderboard.
"""

import datetime
from dataclasses import dataclass
from typing import Any

from django.db.models import F, FloatField, Q, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from accounts.models import LedgerEntry, Wallet
from blackjack.history.recording import period_starts
from blackjack.history.records import Mistake, Period, PeriodStats, PlayerRound, PlayerStats

TOP = 50
#: A win rate only counts after this many hands (a lucky first hand is not a 100% player).
MIN_HANDS_FOR_WIN_RATE = 100


@dataclass(frozen=True)
class Board:
    key: str
    title: str
    value_label: str
    description: str
    fmt: str = "count"  # how values read: "count", "signed" (net chips) or "percent"


BOARDS = {
    board.key: board
    for board in (
        Board("chips", _("Most chips"), _("Chips"), _("Balance right now.")),
        Board("day", _("Today"), _("Net"), _("Net winnings since midnight UTC."), "signed"),
        Board("week", _("This week"), _("Net"), _("Net winnings since Monday 00:00 UTC."), "signed"),
        Board("month", _("This month"), _("Net"), _("Net winnings since the 1st, 00:00 UTC."), "signed"),
        Board("all", _("All time"), _("Net"), _("Net winnings since the first hand."), "signed"),
        Board("biggest", _("Biggest win"), _("Chips"), _("Most won in a single round.")),
        Board("hands", _("Most hands"), _("Hands"), _("Hands played, split hands included.")),
        Board(
            "streak",
            _("Winning streak"),
            _("Rounds"),
            _("Most rounds won in a row (a push does not end it)."),
        ),
        Board(
            "win_rate",
            _("Win rate"),
            _("Hands won"),
            format_lazy(
                _("Share of hands won, among players with at least {hands} hands."),
                hands=MIN_HANDS_FOR_WIN_RATE,
            ),
            "percent",
        ),
    )
}


@dataclass
class Entry:
    rank: int
    user_id: int
    name: str
    username: str
    avatar_path: str
    value: Any


@dataclass
class Leaderboard:
    board: Board
    entries: list[Entry]
    own: Entry | None = None  # the viewer's own line (None: not on this board)
    own_in_top: bool = False
    period_start: datetime.date | None = None


def _ranked_users(prefix: str) -> Q:
    return Q(
        **{
            f"{prefix}is_active": True,
            f"{prefix}suspended": False,
            f"{prefix}is_staff": False,
            f"{prefix}is_superuser": False,
        }
    )


def _board_source(key: str, now: datetime.datetime) -> tuple[QuerySet, Any, datetime.date | None]:
    """The queryset of rows (each with a `user`), and the expression or field ranked, biggest first."""
    if key == "chips":
        rows = Wallet.objects.filter(_ranked_users("user__"), kind=Wallet.Kind.PLAYER)
        return rows, F("balance"), None
    if key in (Period.DAY, Period.WEEK, Period.MONTH):
        start = period_starts(now)[key]
        return PeriodStats.objects.filter(_ranked_users("user__"), period=key, start=start), F("net"), start
    stats = PlayerStats.objects.filter(_ranked_users("user__"), rounds__gt=0)
    if key == "all":
        return stats, F("net"), None
    if key == "biggest":
        return stats.filter(biggest_win__gt=0), F("biggest_win"), None
    if key == "hands":
        return stats, F("hands"), None
    if key == "streak":
        return stats.filter(longest_streak__gt=0), F("longest_streak"), None
    if key == "win_rate":
        rate = Cast("wins", FloatField()) / Cast("hands", FloatField())
        return stats.filter(hands__gte=MIN_HANDS_FOR_WIN_RATE), rate, None
    raise KeyError(key)


def leaderboard(
    *, key: str, viewer=None, now: datetime.datetime | None = None, top: int = TOP
) -> Leaderboard:
    """The top `top` of board `key` (competition ranking: equal values share a rank), and the viewer's own
    rank wherever it is. One query for the top, two more for a logged-in viewer (their value, then how many
    are ahead)."""
    board = BOARDS[key]
    now = now or timezone.now()
    rows, value, start = _board_source(key, now)
    ranked = rows.annotate(board_value=value)
    top_rows = list(
        ranked.select_related("user")
        .order_by("-board_value", "user_id")
        .only("user", "user__username", "user__display_name", "user__avatar")[:top]
    )
    entries: list[Entry] = []
    for index, row in enumerate(top_rows):
        rank = entries[-1].rank if entries and entries[-1].value == row.board_value else index + 1
        entries.append(_entry(rank, row.user, row.board_value))
    result = Leaderboard(board=board, entries=entries, period_start=start)
    if viewer is not None and getattr(viewer, "is_authenticated", False):
        mine = ranked.filter(user_id=viewer.pk).values_list("board_value", flat=True).first()
        if mine is not None:
            ahead = ranked.filter(board_value__gt=mine).count()
            result.own = _entry(ahead + 1, viewer, mine)
            result.own_in_top = any(entry.user_id == viewer.pk for entry in entries)
    return result


def _entry(rank: int, user, value) -> Entry:
    return Entry(rank, user.pk, user.public_name, user.username, user.avatar_path, value)


# --- history ------------------------------------------------------------------------------------------------


def player_rounds(
    *,
    user,
    table_id: int | None = None,
    result: str | None = None,
    date_from: datetime.date | None = None,
    date_to: datetime.date | None = None,
) -> QuerySet[PlayerRound]:
    """The player's rounds, newest first, filtered (dates are UTC days, both ends included)."""
    rows = PlayerRound.objects.filter(user_id=user.pk)
    if table_id is not None:
        rows = rows.filter(table_id=table_id)
    if result:
        rows = rows.filter(result=result)
    if date_from is not None:
        rows = rows.filter(settled_at__gte=_day_start(date_from))
    if date_to is not None and date_to < datetime.date.max:  # the last day there is has no next day
        rows = rows.filter(settled_at__lt=_day_start(date_to + datetime.timedelta(days=1)))
    return rows.select_related("table", "round").order_by("-settled_at", "-id")


def _day_start(day: datetime.date) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time.min, tzinfo=datetime.UTC)


def tables_played(*, user) -> list[tuple[int, str]]:
    """(table id, name) of every table the player has a recorded round at, for the history filter."""
    from blackjack.models import Table

    played = PlayerRound.objects.filter(user_id=user.pk).values("table_id")
    return list(Table.objects.filter(pk__in=played).order_by("name", "pk").values_list("pk", "name"))


# --- statistics ---------------------------------------------------------------------------------------------

CHART_POINTS = 400
COSTLIEST = 5


def player_stats(*, user) -> PlayerStats | None:
    return PlayerStats.objects.filter(user_id=user.pk).select_related("biggest_win_round").first()


def costliest_mistakes(*, user, limit: int = COSTLIEST) -> list[Mistake]:
    return list(Mistake.objects.filter(user_id=user.pk, ev_cost__gt=0).order_by("-ev_cost", "-id")[:limit])


def balance_points(*, user, limit: int = CHART_POINTS) -> list[tuple[datetime.datetime, int]]:
    """The player's balance after each of their latest `limit` ledger entries, oldest first (private: for
    the owner's own profile)."""
    rows = LedgerEntry.objects.filter(wallet__user_id=user.pk).order_by("-id")[:limit]
    return [(at, balance) for at, balance in reversed(rows.values_list("created_at", "balance_after"))]


def net_points(
    *, user, stats: PlayerStats | None, limit: int = CHART_POINTS
) -> list[tuple[datetime.datetime, int]]:
    """Cumulative net result of play over the player's latest `limit` rounds (public: no balance in it),
    anchored so that the last point is the all-time net."""
    rows = list(
        PlayerRound.objects.filter(user_id=user.pk)
        .order_by("-settled_at", "-id")[:limit]
        .values_list("settled_at", "net")
    )
    total = stats.net if stats is not None else sum(net for _, net in rows)
    points = []
    for at, net in rows:  # newest first: walk back from the all-time total
        points.append((at, total))
        total -= net
    points.reverse()
    return points
