"""Shared reads about wallets and the ledger."""

from datetime import timedelta

from django.conf import settings
from django.db.models import QuerySet, Sum
from django.utils import timezone

from accounts.models import LedgerEntry, Wallet


def get_balance(*, user) -> int | None:
    """The player's balance, or None when the user has no wallet (or is anonymous). One query at most."""
    if not getattr(user, "is_authenticated", False):
        return None
    return Wallet.objects.filter(user_id=user.pk).values_list("balance", flat=True).first()


def recent_entries(*, user, limit: int = 20) -> QuerySet[LedgerEntry]:
    """The player's latest ledger entries, newest first."""
    return LedgerEntry.objects.filter(wallet__user_id=user.pk).order_by("-id")[:limit]


def chips_in_play(*, user_id: int) -> int:
    """The chips the player has staked in rounds still under way: the ledger's net for the current rounds of
    the tables where they hold a seat (a seat is kept until its round is over)."""
    from blackjack.models import Table  # the tables app builds on this one

    rounds = Table.objects.filter(
        seat_set__user_id=user_id, current_round__settled_at__isnull=True, current_round__voided=False
    ).values("current_round_id")
    net = LedgerEntry.objects.filter(wallet__user_id=user_id, round_ref__in=rounds).aggregate(
        net=Sum("amount")
    )
    return max(0, -(net["net"] or 0))


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
