"""Live Durak tables: the table (options, status, version, the lease), its seats, its games (the match state
as the engine's JSON and the deck's seeds) and the append-only action log; each player's Glicko-2 rating.

Only the table's actor (`durak.actor`) writes tables, seats, games and actions; staff change options in the
admin. A game's deck is never stored: it is recomputed from the seeds (`durak.engine.shuffled_deck`), and the
server seed is shown only once the game is over.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from cards.fairness import new_server_seed
from durak.bot import DEFAULT_LEVEL, LEVELS
from durak.engine.rules import ATTACK_TYPES, LIMITS, MAX_PLAYERS, MIN_PLAYERS, VARIANTS
from live.models import LiveTable

#: The game's name on the site: its tables' floats and ledger rows carry it (`live.games`).
GAME = "durak"

MAX_STAKE = 100_000
MIN_TURN_SECONDS, MAX_TURN_SECONDS = 10, 300


#: The names of the table's options (`durak.engine.rules`, `durak.bot.LEVELS`) in the viewer's language.
OPTION_LABELS = {
    "podkidnoy": _("Podkidnoy"),
    "perevodnoy": _("Perevodnoy"),
    "passport": _("Passport"),
    "one_side": _("One side"),
    "neighbours": _("Neighbours"),
    "all_sides": _("All sides"),
    "six": _("Six"),
    "five_first_bout": _("Five first bout"),
    "no_limit": _("No limit"),
    "easy": _("Easy"),
    "normal": _("Normal"),
    "hard": _("Hard"),
}


def _choices(values) -> list[tuple[str, str]]:
    return [(value, OPTION_LABELS[value]) for value in values]


class Status(models.TextChoices):
    WAITING = "waiting", _("Waiting for players")
    PLAYING = "playing", _("Playing")
    CLOSED = "closed", _("Closed")


class DurakTable(LiveTable):
    name = models.CharField(max_length=60)
    variant = models.CharField(max_length=12, choices=_choices(VARIANTS), default=VARIANTS[0])
    attack = models.CharField(max_length=12, choices=_choices(ATTACK_TYPES), default="all_sides")
    limit = models.CharField(max_length=16, choices=_choices(LIMITS), default="six")
    seats = models.PositiveSmallIntegerField(default=2, help_text=f"{MIN_PLAYERS} to {MAX_PLAYERS}.")
    stake = models.PositiveIntegerField(default=0, help_text="Chips each human player antes; 0: casual.")
    rated = models.BooleanField(default=True)
    turn_seconds = models.PositiveSmallIntegerField(default=30)
    #: How well the table's bots play (`durak.bot.LEVELS`).
    bot_level = models.CharField(max_length=8, choices=_choices(LEVELS), default=DEFAULT_LEVEL)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    # Live state, written by the table's actor only.
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.WAITING, editable=False)
    deadline = models.DateTimeField(null=True, blank=True, editable=False)
    #: When the seat to act is moved for (`deadline` is the earliest of it and the players' graces).
    turn_deadline = models.DateTimeField(null=True, blank=True, editable=False)
    #: Between games, once a seat is ready: when the unready seated players stand up.
    ready_deadline = models.DateTimeField(null=True, blank=True, editable=False)
    #: Staff closed the table during a game: it closes when the game ends.
    closing = models.BooleanField(default=False, editable=False)
    current_game = models.ForeignKey(
        "DurakGame", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    #: The match (`durak.engine.Match.to_dict()`): the games' fools (the player left of the last one leads
    #: the next game) and the passports; None before the first game.
    match = models.JSONField(null=True, blank=True, editable=False)
    #: The next game's server seed, committed (its hash shown) before the players give their seeds.
    next_server_seed = models.CharField(max_length=64, default=new_server_seed, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(seats__gte=MIN_PLAYERS, seats__lte=MAX_PLAYERS), name="durak_table_seats"
            ),
            models.CheckConstraint(condition=models.Q(stake__lte=MAX_STAKE), name="durak_table_stake"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.variant})"


class DurakSeat(models.Model):
    """A seat: a player's (`user`), a bot's (`is_bot`), or empty (neither)."""

    table = models.ForeignKey(DurakTable, on_delete=models.CASCADE, related_name="seat_rows")
    number = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    is_bot = models.BooleanField(default=False)
    #: A player who left during a game: the bot plays their seat until the game ends.
    away = models.BooleanField(default=False)
    #: Ready for the next game (the waiting room's check).
    ready = models.BooleanField(default=False)
    #: The seed the player gave with their ready: the next deck mixes every playing player's.
    seed = models.CharField(max_length=64, blank=True, default="")
    #: Since when the player's connection has been gone (their grace in a game runs from here).
    gone = models.DateTimeField(null=True, blank=True)
    #: Staff stood the player up during a game (`durak.table.Release`): the bot plays the seat out and the
    #: player may not act in it. (A suspended or closed account is barred whatever this says.)
    barred = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "number"], name="durak_seat_unique")]

    def __str__(self) -> str:
        return f"seat {self.number} of Durak table #{self.table_id}"


class DurakGame(models.Model):
    """One game at a table. `state` is the engine's `GameState.to_dict()` as of the table's version in
    `version`; `players` is, per seat, the user id playing it (None: a bot), fixed at the deal. The game is
    `start_game(match, shuffled_deck(seeds))` followed by its action log."""

    table = models.ForeignKey(DurakTable, on_delete=models.PROTECT, related_name="games")
    number = models.PositiveIntegerField()
    players = models.JSONField()
    #: The users among `players` (for a player's history).
    participants = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="durak_games", blank=True)
    state = models.JSONField()
    first_version = models.PositiveBigIntegerField()
    version = models.PositiveBigIntegerField()
    #: The match as it stood at this game's deal (its leader and passports follow from it).
    match = models.JSONField()
    server_seed = models.CharField(max_length=64)
    server_seed_hash = models.CharField(max_length=64)
    client_seed = models.CharField(max_length=64)
    #: The SHA-256 digests of the players' seeds, sorted: the client seed is made of them.
    seed_digests = models.JSONField(default=list)
    nonce = models.PositiveIntegerField(default=0)
    stake = models.PositiveIntegerField(default=0)
    pot = models.PositiveIntegerField(default=0)
    rated = models.BooleanField(default=False)
    finished = models.BooleanField(default=False)
    #: Stopped by quarantine (`live.quarantine`): every stake was refunded, nobody was rated.
    voided = models.BooleanField(default=False)
    fool = models.PositiveSmallIntegerField(null=True, blank=True)
    #: Per seat, the chips the seat received at the end (0 for the fool and for bots).
    payouts = models.JSONField(default=list)
    #: Per seat, a rated game's player's rating before and after it (`[before, after]`; None for a bot's
    #: seat); empty for an unrated game (and for games rated before the change was kept).
    ratings = models.JSONField(default=list)
    #: The seats whose player had left (or was stood up) by the end: the bot played them out.
    left = models.JSONField(default=list)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "number"], name="durak_game_unique")]

    def __str__(self) -> str:
        return f"game {self.number} of Durak table #{self.table_id}"


class DurakAction(models.Model):
    """The append-only action log: the engine action that moved the table to `version` (unique per game, so
    an action is recorded once)."""

    game = models.ForeignKey(DurakGame, on_delete=models.PROTECT, related_name="actions")
    version = models.PositiveBigIntegerField()
    seat = models.PositiveSmallIntegerField()
    action = models.JSONField()
    by_bot = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "version"], name="durak_action_once")]
        ordering = ["game", "version"]

    def __str__(self) -> str:
        return f"game #{self.game_id} v{self.version}: {self.action}"


class DurakRating(models.Model):
    """A player's Glicko-2 rating in one Durak variant (`durak.glicko`), and their record in it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="durak_ratings")
    variant = models.CharField(max_length=12, choices=_choices(VARIANTS), default=VARIANTS[0])
    rating = models.FloatField(default=1500.0)
    deviation = models.FloatField(default=350.0)
    volatility = models.FloatField(default=0.06)
    games = models.PositiveIntegerField(default=0)
    fools = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    streak = models.PositiveIntegerField(default=0, help_text="Games in a row not the fool.")
    best_streak = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "variant"], name="durak_rating_per_variant")]
        indexes = [models.Index(fields=["variant", "-rating"], name="durak_rating_board")]

    def __str__(self) -> str:
        return f"Durak {self.variant} rating of user #{self.user_id}: {self.rating:.0f}"
