"""Shared reads about wallets and the ledger."""

from datetime import timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import LedgerEntry, Wallet
from live import games


def get_balance(*, user) -> int | None:
    """The player's balance, or None when the user has no wallet (or is anonymous). One query at most."""
    if not getattr(user, "is_authenticated", False):
        return None
    return Wallet.objects.filter(user_id=user.pk).values_list("balance", flat=True).first()


def recent_entries(*, user, limit: int = 20) -> QuerySet[LedgerEntry]:
    """The player's latest ledger entries, newest first."""
    return LedgerEntry.objects.filter(wallet__user_id=user.pk).order_by("-id")[:limit]


def chips_in_play(*, user_id: int) -> int:
    """The chips the player has staked at every game's tables and that are not settled yet (each game says
    how many of its own: `live.games`)."""
    return sum(game.chips_in_play(user_id) for game in games.all_games())


def daily_grant_status(*, wallet: Wallet, now=None) -> dict:
    """Whether the daily grant could be claimed now, and when it can next be claimed (None if not limited by
    time).

    Only for display: `services.claim_daily_grant` decides, under a lock.
    """
    now = now or timezone.now()
    next_claim_at = None
    if wallet.last_daily_grant_at:
        next_claim_at = wallet.last_daily_grant_at + timedelta(hours=settings.DAILY_GRANT_INTERVAL_HOURS)
        if next_claim_at <= now:
            next_claim_at = None
    in_play = chips_in_play(user_id=wallet.user_id)
    below_floor = wallet.balance + in_play < settings.DAILY_GRANT_FLOOR
    return {
        "floor": settings.DAILY_GRANT_FLOOR,
        "in_play": in_play,
        "below_floor": below_floor,
        "next_claim_at": next_claim_at,
        "available": below_floor and next_claim_at is None,
    }
