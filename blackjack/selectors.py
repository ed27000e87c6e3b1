"""Shared reads of the live tables (views, consumers, admin, tests). Nothing here writes.

The per-viewer view of a table is built by `blackjack.viewmodel`; these are the other reads several places
need. `replay_round` recomputes a shoe's order from its secret seed: its result is for server-side checks only
and must never be sent to a client while the shoe is in play."""

from django.db.models import QuerySet, Sum

from accounts.models import LedgerEntry
from blackjack import services
from blackjack.engine import round as engine
from blackjack.engine.round import RoundState
from blackjack.engine.rules import RuleSet
from blackjack.models import ActionLog, Round, Shoe, Table


def lobby_tables() -> QuerySet[Table]:
    """Public open tables, with their preset, in id order."""
    return Table.objects.filter(is_open=True, is_private=False).select_related("preset").order_by("id")


def table_by_token(token: str) -> Table | None:
    """The private table a `/tables/join/<token>/` link points to."""
    if not isinstance(token, str) or not token:
        return None
    return Table.objects.filter(private_token=token).first()


def recent_rounds(*, table_id: int, limit: int = 20) -> QuerySet[Round]:
    """The table's finished rounds, newest first (results, voided flag, times)."""
    return Round.objects.filter(table_id=table_id, settled_at__isnull=False).order_by("-number")[:limit]


def retired_shoes(*, table_id: int, limit: int = 20) -> QuerySet[Shoe]:
    """Retired shoes, newest first: their seeds are revealed, so players can verify every shuffle."""
    return Shoe.objects.filter(table_id=table_id, retired_at__isnull=False).order_by("-id")[:limit]


def round_actions(*, round_id: int) -> list[dict]:
    """The engine actions of a round, in the order they were applied."""
    return list(ActionLog.objects.filter(round_id=round_id).order_by("seq").values_list("action", flat=True))


def replay_round(*, round_id: int) -> RoundState:
    """Rebuild a round from its shoe, its rules snapshot and its action log (server-side only)."""
    rnd = Round.objects.select_related("shoe").get(pk=round_id)
    return engine.replay(
        RuleSet.from_dict(rnd.rules),
        services.round_order(rnd.shoe, rnd.start_position),
        rnd.start_position,
        rnd.seats,
        rnd.min_bet,
        rnd.max_bet,
        round_actions(round_id=round_id),
    )


def chips_in_play(user_id: int) -> int:
    """The chips the player has staked in rounds still under way: the ledger's net for the current rounds of
    the tables where they hold a seat (a seat is kept until its round is over)."""
    rounds = Table.objects.filter(
        seat_set__user_id=user_id, current_round__settled_at__isnull=True, current_round__voided=False
    ).values("current_round_id")
    net = LedgerEntry.objects.filter(wallet__user_id=user_id, round_ref__in=rounds).aggregate(
        net=Sum("amount")
    )
    return max(0, -(net["net"] or 0))
