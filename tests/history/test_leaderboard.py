"""Leaderboards: ranking order and ties, UTC period boundaries, who qualifies, and the viewer's own rank."""

import datetime

import pytest
from django.urls import reverse

from accounts.models import Wallet
from blackjack.history import selectors
from blackjack.history.recording import add_to_totals, period_starts
from blackjack.history.records import PeriodStats, PlayerRound
from tests.blackjack.conftest import PASSWORD

pytestmark = pytest.mark.django_db
UTC = datetime.UTC


def played(user, net: int, at: datetime.datetime, hands: int = 1, wins: int | None = None) -> None:
    """Add one round with this result to the player's totals (as recording does at settlement)."""
    wins = (hands if net > 0 else 0) if wins is None else wins
    row = PlayerRound(
        user_id=user.pk,
        settled_at=at,
        stake=abs(net) or 10,
        returned=abs(net) + net if net else 10,
        net=net,
        hands=hands,
        wins=wins,
        losses=hands - wins,
        pushes=0,
    )
    add_to_totals([row])


def names(board) -> list[str]:
    return [entry.username for entry in board.entries]


def test_period_starts_are_utc_day_monday_and_first_of_month():
    moment = datetime.datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC)  # a Sunday, first of the month
    assert period_starts(moment) == {
        "day": datetime.date(2026, 3, 1),
        "week": datetime.date(2026, 2, 23),
        "month": datetime.date(2026, 3, 1),
    }
    # 23:30 on 1 March in New York is already 2 March UTC: the boundaries are UTC ones.
    new_york = datetime.timezone(datetime.timedelta(hours=-5))
    late = datetime.datetime(2026, 3, 1, 23, 30, tzinfo=new_york)
    assert period_starts(late)["day"] == datetime.date(2026, 3, 2)
    assert period_starts(late)["week"] == datetime.date(2026, 3, 2)  # that Monday starts a new week


def test_day_week_and_month_boards_cut_at_utc_midnight(make_user):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sunday_night = datetime.datetime(2026, 3, 29, 23, 59, 59, tzinfo=UTC)
    monday = datetime.datetime(2026, 3, 30, 0, 0, 0, tzinfo=UTC)
    april = datetime.datetime(2026, 4, 1, 0, 0, 1, tzinfo=UTC)
    played(alice, 500, sunday_night)  # last week, March
    played(bob, 300, monday)  # this week, March
    played(carol, 100, april)  # this week, April
    now = datetime.datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
    assert names(selectors.leaderboard(key="day", now=now)) == ["carol"]
    assert names(selectors.leaderboard(key="week", now=now)) == ["bob", "carol"]
    assert names(selectors.leaderboard(key="month", now=now)) == ["carol"]
    assert names(selectors.leaderboard(key="month", now=monday)) == ["alice", "bob"]
    assert names(selectors.leaderboard(key="all", now=now)) == ["alice", "bob", "carol"]


def test_period_totals_add_up_and_losses_rank_last(make_user):
    alice, bob = make_user("alice"), make_user("bob")
    at = datetime.datetime(2026, 5, 5, 10, tzinfo=UTC)
    played(alice, 200, at)
    played(alice, -150, at + datetime.timedelta(hours=1))
    played(bob, -20, at)
    board = selectors.leaderboard(key="day", now=at)
    assert [(e.username, e.value) for e in board.entries] == [("alice", 50), ("bob", -20)]


def test_equal_values_share_a_rank(make_user):
    at = datetime.datetime(2026, 5, 5, 10, tzinfo=UTC)
    for name, net in (("a", 100), ("b", 300), ("c", 100), ("d", 50)):
        played(make_user(name), net, at)
    board = selectors.leaderboard(key="all", now=at)
    assert [(e.rank, e.username) for e in board.entries] == [(1, "b"), (2, "a"), (2, "c"), (4, "d")]


def test_staff_superusers_and_suspended_players_are_left_out(make_user):
    at = datetime.datetime(2026, 5, 5, 10, tzinfo=UTC)
    players = {
        "player": make_user("player"),
        "staff": make_user("staff", is_staff=True),
        "root": make_user("root", is_superuser=True),
        "banned": make_user("banned", suspended=True),
        "closed": make_user("closed", is_active=False),
    }
    for user in players.values():
        played(user, 100, at)
    Wallet.objects.filter(user__in=players.values()).update(balance=50_000)
    for key in selectors.BOARDS:
        if key == "win_rate":
            continue
        assert names(selectors.leaderboard(key=key, now=at)) == ["player"], key


def test_win_rate_needs_the_minimum_number_of_hands(make_user):
    at = datetime.datetime(2026, 5, 5, 10, tzinfo=UTC)
    lucky, steady = make_user("lucky"), make_user("steady")
    played(lucky, 10, at, hands=selectors.MIN_HANDS_FOR_WIN_RATE - 1)  # won every hand, not enough of them
    played(steady, 10, at, hands=selectors.MIN_HANDS_FOR_WIN_RATE, wins=45)
    board = selectors.leaderboard(key="win_rate", now=at)
    assert [(e.username, round(e.value, 2)) for e in board.entries] == [("steady", 0.45)]


def test_biggest_win_hands_and_streak_boards(make_user):
    at = datetime.datetime(2026, 5, 5, 10, tzinfo=UTC)
    alice, bob = make_user("alice"), make_user("bob")
    for net in (100, 100, 0, 100, -10, 100):  # a push does not break a streak: 3 in a row, then 1
        played(alice, net, at)
    played(bob, 900, at, hands=3)
    played(bob, -10, at)
    assert [(e.username, e.value) for e in selectors.leaderboard(key="biggest").entries] == [
        ("bob", 900),
        ("alice", 100),
    ]
    assert [(e.username, e.value) for e in selectors.leaderboard(key="hands").entries] == [
        ("alice", 6),
        ("bob", 4),
    ]
    assert [(e.username, e.value) for e in selectors.leaderboard(key="streak").entries] == [
        ("alice", 3),
        ("bob", 1),
    ]


def test_most_chips_ranks_wallets(make_user):
    rich, poor = make_user("rich"), make_user("poor")
    Wallet.objects.filter(user=rich).update(balance=99_000)
    Wallet.objects.filter(user=poor).update(balance=3)
    assert [(e.username, e.value) for e in selectors.leaderboard(key="chips").entries] == [
        ("rich", 99_000),
        ("poor", 3),
    ]


def test_a_player_outside_the_top_sees_their_own_rank(client, make_user):
    at = datetime.datetime.now(UTC)
    for n in range(selectors.TOP + 5):
        played(make_user(f"p{n:02d}"), 1000 - n, at)
    me = make_user("me")
    played(me, 1, at)  # below all 55 others
    board = selectors.leaderboard(key="all", viewer=me)
    assert len(board.entries) == selectors.TOP
    assert (board.own.rank, board.own.value, board.own_in_top) == (56, 1, False)
    assert client.login(username="me", password=PASSWORD)
    page = client.get(reverse("blackjack_leaderboard") + "?board=all").content.decode()
    assert "Your rank: <strong>#56</strong>" in page
    top = selectors.leaderboard(key="all", viewer=make_user("nobody"))
    assert top.own is None


def test_a_new_month_inside_a_week_keeps_the_week_and_starts_the_day_and_month(make_user):
    """The period rows are bumped in one statement; the ones missing (a new day and month, the same week)
    are created, and none is counted twice."""
    dana = make_user("dana")
    played(dana, 40, datetime.datetime(2026, 3, 31, 20, tzinfo=UTC), hands=2)  # Tuesday, March
    played(dana, -15, datetime.datetime(2026, 4, 1, 9, tzinfo=UTC))  # Wednesday, April, same week
    played(dana, 5, datetime.datetime(2026, 4, 1, 10, tzinfo=UTC))  # the same day again
    rows = {
        (row.period, row.start): (row.rounds, row.hands, row.net)
        for row in PeriodStats.objects.filter(user=dana)
    }
    assert rows == {
        ("day", datetime.date(2026, 3, 31)): (1, 2, 40),
        ("month", datetime.date(2026, 3, 1)): (1, 2, 40),
        ("week", datetime.date(2026, 3, 30)): (3, 4, 30),
        ("day", datetime.date(2026, 4, 1)): (2, 2, -10),
        ("month", datetime.date(2026, 4, 1)): (2, 2, -10),
    }
