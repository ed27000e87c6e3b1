"""What an account may stake, whatever the game: the one policy every game asks where it commits a stake.

Every new account starts with STARTING_CHIPS, so accounts made only to lose their chips to one player at a
high-stake table would pass those chips on (issue 34: 30,000 chips in three games). A new account therefore
stakes at most NEW_ACCOUNT_STAKE_LIMIT chips a game until it is NEW_ACCOUNT_DAYS days old or has finished
NEW_ACCOUNT_GAMES games, whichever comes first. Each game counts its own finished games (the accounts app
knows no game) and refuses a stake above the limit with its own refusal.
"""

from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone


def stake_limit(*, user, games_played: Callable[[], int], now: datetime | None = None) -> int | None:
    """The most chips `user` may stake on one game; None for no limit. `games_played` counts the games the
    user has finished, asked only of an account young enough for it to matter."""
    now = now or timezone.now()
    if user.date_joined <= now - timedelta(days=settings.NEW_ACCOUNT_DAYS):
        return None
    if games_played() >= settings.NEW_ACCOUNT_GAMES:
        return None
    return settings.NEW_ACCOUNT_STAKE_LIMIT


def within_every_limit(amount: int) -> bool:
    """Whether every account may stake `amount` (no limit is lower than the new accounts'): the caller need
    not read the account."""
    return amount <= settings.NEW_ACCOUNT_STAKE_LIMIT


def limit_reason() -> str:
    """Why a new account's stake is limited, for a refusal's message."""
    return (
        f"a new account stakes at most {settings.NEW_ACCOUNT_STAKE_LIMIT:,} chips a game until it is "
        f"{settings.NEW_ACCOUNT_DAYS} days old or has finished {settings.NEW_ACCOUNT_GAMES} games"
    )
