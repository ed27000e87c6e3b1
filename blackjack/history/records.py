"""The history rows, written once per settled round by `blackjack.history.recording`.

`PlayerRound` is one player's part in one round (all their seats together), `Mistake` one decision that
differed from basic strategy. `PlayerStats` (all time, one row per player) and `PeriodStats` (one row per
player per UTC day, ISO week and calendar month) are running totals updated in the same transaction, so a
leaderboard is a top-N read on an index and a rank is one count.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class RoundResult(models.TextChoices):
    WIN = "win", _("Win")
    LOSE = "lose", _("Loss")
    PUSH = "push", _("Push")


class PlayerRound(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    round = models.ForeignKey("tables.Round", on_delete=models.CASCADE, related_name="player_records")
    table = models.ForeignKey("tables.Table", on_delete=models.CASCADE, related_name="+")
    settled_at = models.DateTimeField()
    seats = models.JSONField(default=list, help_text="The player's seat numbers in the round.")
    stake = models.BigIntegerField(help_text="Every chip put on the table: bets, doubles, splits, insurance.")
    returned = models.BigIntegerField(help_text="Every chip handed back at settlement.")
    net = models.BigIntegerField()
    result = models.CharField(max_length=4, choices=RoundResult.choices)
    hands = models.PositiveSmallIntegerField()
    wins = models.PositiveSmallIntegerField(default=0)
    pushes = models.PositiveSmallIntegerField(default=0)
    losses = models.PositiveSmallIntegerField(default=0)
    blackjacks = models.PositiveSmallIntegerField(default=0)
    doubles_won = models.PositiveSmallIntegerField(default=0)
    splits_won = models.PositiveSmallIntegerField(default=0, help_text="Hands from a split that won.")
    summary = models.CharField(max_length=200, help_text="Hand results, e.g. 'blackjack' or 'win, bust'.")
    decisions = models.PositiveSmallIntegerField(default=0)
    deviations = models.PositiveSmallIntegerField(default=0, help_text="Decisions unlike basic strategy.")
    ev_cost = models.FloatField(default=0.0, help_text="Expected chips given up by those decisions.")

    class Meta:
        ordering = ["-settled_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "round"], name="playerround_once_per_round")]
        indexes = [
            models.Index(fields=["user", "-settled_at", "-id"], name="playerround_user_recent"),
            models.Index(fields=["user", "table", "-settled_at"], name="playerround_user_table"),
        ]

    def __str__(self) -> str:
        return f"user #{self.user_id} in round #{self.round_id}: {self.net:+d}"


class Mistake(models.Model):
    """A decision that differed from basic strategy, with its expected cost."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    round = models.ForeignKey("tables.Round", on_delete=models.CASCADE, related_name="+")
    settled_at = models.DateTimeField()
    seat = models.PositiveSmallIntegerField()
    hand = models.PositiveSmallIntegerField()
    cards = models.CharField(max_length=60, help_text="The hand's cards when deciding, e.g. 'Ts6h'.")
    dealer_up = models.CharField(max_length=2)
    action = models.CharField(max_length=12)
    best = models.CharField(max_length=12)
    bet = models.PositiveIntegerField(help_text="The hand's initial bet (EVs are per initial bet).")
    ev_cost = models.FloatField(help_text="Chips: (EV of the best action - EV of the action) x bet.")

    class Meta:
        ordering = ["-ev_cost", "-id"]
        indexes = [models.Index(fields=["user", "-ev_cost"], name="mistake_user_costliest")]

    def __str__(self) -> str:
        return f"{self.action} instead of {self.best} ({self.ev_cost:.2f} chips)"

    @property
    def card_list(self) -> list[str]:
        return [self.cards[i : i + 2] for i in range(0, len(self.cards), 2)]


class PlayerStats(models.Model):
    """All-time totals of one player, kept up to date at every settlement."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    rounds = models.PositiveIntegerField(default=0)
    hands = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    pushes = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    blackjacks = models.PositiveIntegerField(default=0)
    doubles_won = models.PositiveIntegerField(default=0)
    splits_won = models.PositiveIntegerField(default=0)
    wagered = models.BigIntegerField(default=0)
    net = models.BigIntegerField(default=0)
    biggest_win = models.BigIntegerField(default=0)
    biggest_win_round = models.ForeignKey(
        "tables.Round", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    current_streak = models.PositiveIntegerField(default=0, help_text="Rounds won in a row (pushes pass).")
    longest_streak = models.PositiveIntegerField(default=0)
    decisions = models.PositiveIntegerField(default=0)
    deviations = models.PositiveIntegerField(default=0)
    ev_cost = models.FloatField(default=0.0)
    last_played_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "player stats"
        indexes = [
            models.Index(fields=["-net", "user"], name="playerstats_net"),
            models.Index(fields=["-biggest_win", "user"], name="playerstats_biggest_win"),
            models.Index(fields=["-hands", "user"], name="playerstats_hands"),
            models.Index(fields=["-longest_streak", "user"], name="playerstats_streak"),
        ]

    def __str__(self) -> str:
        return f"stats of user #{self.user_id}"

    @property
    def win_rate(self) -> float | None:
        decided = self.wins + self.losses + self.pushes
        return self.wins / decided if decided else None

    @property
    def deviation_rate(self) -> float | None:
        return self.deviations / self.decisions if self.decisions else None


class Period(models.TextChoices):
    DAY = "day", "Today"
    WEEK = "week", "This week"
    MONTH = "month", "This month"


class PeriodStats(models.Model):
    """One player's net result in one UTC day, ISO week (from Monday) or calendar month."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    period = models.CharField(max_length=5, choices=Period.choices)
    start = models.DateField(help_text="First day of the period (UTC).")
    rounds = models.PositiveIntegerField(default=0)
    hands = models.PositiveIntegerField(default=0)
    net = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "period stats"
        constraints = [
            models.UniqueConstraint(fields=["period", "start", "user"], name="periodstats_unique"),
            models.CheckConstraint(condition=Q(period__in=["day", "week", "month"]), name="periodstats_kind"),
        ]
        indexes = [models.Index(fields=["period", "start", "-net", "user"], name="periodstats_board")]

    def __str__(self) -> str:
        return f"user #{self.user_id} {self.period} {self.start}: {self.net:+d}"
