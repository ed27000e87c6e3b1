"""Live tables: rule presets, tables and seats, shoes, rounds, the append-only action log, the table's
event log (the casino notification box) and chat. Who is connected is not stored: the table's owner counts
its sockets (`blackjack.actors`); a seat keeps only when its player was marked gone (`Seat.disconnected_at`).

Only `blackjack.services` writes these rows (and the admin for staff settings of presets and tables). The
round's engine state lives in `Round.state` as the engine's own JSON; the shoe's card order is never stored
anywhere: it is recomputed from the shoe's secret server seed when a round needs it, and the seed itself is
only readable through `Shoe.revealed_seed` once the shoe is retired.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from blackjack.engine.rules import RuleSet
from cards.errors import Refused
from cards.fairness import new_server_seed
from live.models import LiveTable
from storage.append_only import AppendOnlyModel

#: The game's name on the site: its tables' floats and ledger rows carry it (`live.games`).
GAME = "blackjack"
MAX_SEATS = 7
#: The longest decision window staff may set (betting, insurance, turn, ready check), in seconds: long enough
#: for any player, short enough that a silent one cannot hold a table for long.
MAX_WINDOW_SECONDS = 600


class Phase(models.TextChoices):
    """A table's phase, named as shared/PROTOCOL.md names them."""

    WAITING = "waiting", "Waiting for players"
    BETTING = "betting", "Betting"
    INSURANCE = "insurance", "Insurance"
    PLAYING = "playing", "Playing"
    DEALER = "dealer", "Dealer plays"
    SETTLED = "settled", "Results"


class RulePreset(models.Model):
    name = models.CharField(max_length=60, unique=True)
    rules = models.JSONField(help_text="RuleSet.to_dict() of the engine: every field of the rule set.")
    description = models.TextField(blank=True)
    # Filled by a simulator run (staff admin); empty until then.
    house_edge = models.FloatField(
        null=True, blank=True, help_text="Percent of the initial bet, basic strategy."
    )
    house_edge_stderr = models.FloatField(null=True, blank=True)
    house_edge_rounds = models.BigIntegerField(null=True, blank=True)
    house_edge_updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        try:
            self.rules = RuleSet.from_dict(self.rules).to_dict()
        except Refused as exc:
            raise ValidationError({"rules": exc.message}) from None

    def ruleset(self) -> RuleSet:
        return RuleSet.from_dict(self.rules)


class OpenTableBounds(models.Model):
    """The one row of bounds for the limits players choose when they open a table from the lobby (staff edit
    it in the admin). Without the row, the settings `TABLES_OPEN_MIN_BET` / `TABLES_OPEN_MAX_BET` apply."""

    min_bet = models.PositiveIntegerField(default=1, help_text="Lowest minimum bet a player may choose.")
    max_bet = models.PositiveIntegerField(default=10_000, help_text="Highest maximum bet a player may pick.")

    class Meta:
        verbose_name = "bounds for player-opened tables"
        verbose_name_plural = "bounds for player-opened tables"
        constraints = [
            models.CheckConstraint(
                condition=Q(min_bet__gte=1, min_bet__lte=F("max_bet")), name="open_bounds_min_le_max"
            ),
        ]

    def __str__(self) -> str:
        return f"player-opened tables: bets {self.min_bet}-{self.max_bet}"


class Table(LiveTable):
    name = models.CharField(max_length=60)
    preset = models.ForeignKey(RulePreset, on_delete=models.PROTECT, related_name="tables")
    min_bet = models.PositiveIntegerField(default=10)
    max_bet = models.PositiveIntegerField(default=500)
    seats = models.PositiveSmallIntegerField(default=MAX_SEATS, help_text="Number of seats, 1 to 7.")
    seats_per_player = models.PositiveSmallIntegerField(default=2, help_text="Seats one player may hold.")
    betting_seconds = models.PositiveSmallIntegerField(default=20)
    insurance_seconds = models.PositiveSmallIntegerField(default=10)
    turn_seconds = models.PositiveSmallIntegerField(default=20)
    ready_seconds = models.PositiveSmallIntegerField(default=10)
    is_open = models.BooleanField(default=True, help_text="A closed table takes no new players.")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    # Live state, written by tables.services only.
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.WAITING, editable=False)
    deadline = models.DateTimeField(null=True, blank=True, editable=False, db_index=True)
    # The decision window (a phase: betting, insurance, ...) began at `window_version`; `window_actors` maps a
    # user id to the version their last action in this window produced. Players deciding at the same time may
    # send a version that only *others* made stale (see services.version_accepted).
    window_version = models.PositiveBigIntegerField(default=0, editable=False)
    window_actors = models.JSONField(default=dict, editable=False)
    current_round = models.ForeignKey(
        "Round", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    # The server seed of the table's next shoe, drawn ahead: only its hash is shown (the view's
    # `next_shoe_hash`), so it is fixed before the players choose the seeds the shoe's client seed is made of.
    # Secret until that shoe is retired, like `Shoe.server_seed`.
    next_server_seed = models.CharField(max_length=64, default=new_server_seed, editable=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(min_bet__gte=1), name="table_min_bet_positive"),
            models.CheckConstraint(condition=Q(min_bet__lte=F("max_bet")), name="table_min_bet_le_max_bet"),
            models.CheckConstraint(
                condition=Q(seats__gte=1, seats__lte=MAX_SEATS), name="table_seats_1_to_7"
            ),
            models.CheckConstraint(
                condition=Q(seats_per_player__gte=1, seats_per_player__lte=F("seats")),
                name="table_seats_per_player_in_range",
            ),
            models.CheckConstraint(
                condition=Q(betting_seconds__gte=1, insurance_seconds__gte=1, turn_seconds__gte=1)
                & Q(ready_seconds__gte=1),
                name="table_windows_at_least_one_second",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def ruleset(self) -> RuleSet:
        return self.preset.ruleset()

    @property
    def deadline_seconds(self) -> int | None:
        """Length of the current decision window in seconds (for a countdown bar), None without a deadline."""
        if self.deadline is None:
            return None
        return {
            Phase.BETTING: self.betting_seconds,
            Phase.INSURANCE: self.insurance_seconds,
            Phase.PLAYING: self.turn_seconds,
            Phase.SETTLED: self.ready_seconds,
        }.get(self.phase)


class Seat(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seat_set")
    number = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="seats"
    )
    sat_down_at = models.DateTimeField(null=True, blank=True)
    missed_rounds = models.PositiveSmallIntegerField(
        default=0, help_text="Consecutive betting windows missed."
    )
    sitting_out = models.BooleanField(default=False, help_text="The table does not wait for this seat's bet.")
    ready = models.BooleanField(default=False, help_text="Ready for the next round (ready check).")
    leaving_after_round = models.BooleanField(default=False)
    client_seed = models.CharField(max_length=64, blank=True)
    disconnected_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Since when the player has had no socket here, as the owner counts (the grace period).",
    )

    class Meta:
        ordering = ["table", "number"]
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="seat_unique_number"),
            models.CheckConstraint(
                condition=Q(number__gte=1, number__lte=MAX_SEATS), name="seat_number_1_to_7"
            ),
        ]

    def __str__(self) -> str:
        return f"seat {self.number} at table #{self.table_id}"


class Shoe(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="shoes")
    # Secret while the shoe is in play: never rendered, never sent; see `revealed_seed`.
    server_seed = models.CharField(max_length=64, editable=False)
    seed_hash = models.CharField(max_length=64, editable=False)
    client_seed = models.CharField(max_length=128, editable=False)
    # The sorted SHA-256 digests of the players' seeds the client seed was made of (engine.shoe, step 2).
    seat_seeds = models.JSONField(default=list, editable=False)
    decks = models.PositiveSmallIntegerField()
    nonce = models.PositiveIntegerField(default=0)
    cut_index = models.PositiveIntegerField(
        null=True, blank=True, help_text="None: a fresh shuffle every round."
    )
    position = models.PositiveIntegerField(default=0, help_text="Index of the next card to deal.")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"shoe #{self.pk} ({self.seed_hash[:12]}...)"

    @property
    def total_cards(self) -> int:
        return 52 * self.decks

    @property
    def cards_left(self) -> int:
        return max(0, self.total_cards - self.position)

    @property
    def revealed_seed(self) -> str | None:
        """The server seed, only once the shoe is retired (for players to verify the shuffle)."""
        return self.server_seed if self.retired_at is not None else None


class Round(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveIntegerField()
    shoe = models.ForeignKey(Shoe, on_delete=models.PROTECT, related_name="rounds")
    start_position = models.PositiveIntegerField(help_text="Shoe index of the round's first card.")
    seats = models.JSONField(default=list, help_text="Seat numbers dealt into the round (for replay).")
    state = models.JSONField(help_text="The engine's RoundState.to_dict().")
    rules = models.JSONField(help_text="Snapshot of the rules when the round opened.")
    min_bet = models.PositiveIntegerField()
    max_bet = models.PositiveIntegerField()
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.BETTING)
    version = models.PositiveBigIntegerField(
        default=0, help_text="Table version after the round's last change."
    )
    deadline = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    settled_at = models.DateTimeField(null=True, blank=True)
    voided = models.BooleanField(default=False)
    results = models.JSONField(null=True, blank=True, help_text="Per seat results, written at settlement.")
    logged = models.PositiveIntegerField(
        default=0, help_text="Actions logged so far: the next one's sequence number is this plus one."
    )

    class Meta:
        ordering = ["-id"]
        constraints = [models.UniqueConstraint(fields=["table", "number"], name="round_unique_number")]

    def __str__(self) -> str:
        return f"round {self.number} at table #{self.table_id}"

    @property
    def is_over(self) -> bool:
        return self.voided or self.settled_at is not None


class ActionLog(AppendOnlyModel):
    """Every engine action applied to a round, in order: with the shoe and the round's rules, enough to
    replay it."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="actions")
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    seat = models.PositiveSmallIntegerField(null=True, blank=True)
    action = models.JSONField()
    version_after = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["round", "seq"]
        constraints = [models.UniqueConstraint(fields=["round", "seq"], name="actionlog_unique_seq")]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action}"


class TableEvent(models.Model):
    class Kind(models.TextChoices):
        SEAT = "seat", "Seat"
        BET = "bet", "Bet"
        DEAL = "deal", "Deal"
        ACTION = "action", "Player action"
        DEALER = "dealer", "Dealer"
        RESULT = "result", "Result"
        TIMEOUT = "timeout", "Timeout"
        SHOE = "shoe", "Shoe"
        ROUND = "round", "Round"

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="events")
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.SET_NULL, related_name="events")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    text = models.CharField(max_length=200)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["table", "-id"], name="tableevent_table_recent")]

    def __str__(self) -> str:
        return self.text


from blackjack.history.records import Mistake, PeriodStats, PlayerRound, PlayerStats  # noqa: E402, F401
