"""Users, chip wallets and the append-only ledger.

Money rules (see shared/GUIDE.md section 3): chips are integers; a player's balance can never go below zero (a
database constraint, not only Python); every change is a pair of ledger rows written in one transaction, so
the sum of all wallet balances is always exactly zero. Only `accounts.services` writes wallets and ledger
rows.

Wallets: one per player, the house (the bank), the issuer (the source of granted chips), and one float per
table (`table_ref`): the house's chips at that table, so that every table's bets and payouts move against a
row of its own. A float is funded from the house and swept back to it (ledger kind "float").
"""

import unicodedata

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.avatars import AVATAR_CHOICES, DEFAULT_AVATAR, avatar_static_path
from storage.append_only import AppendOnlyModel

DISPLAY_NAME_MAX_LENGTH = 40
# Besides letters, combining marks and digits of any script: a space and a few harmless punctuation marks. No
# markup, symbols, control or invisible formatting characters (zero-width spaces, bidi overrides).
_DISPLAY_NAME_PUNCTUATION = frozenset(" .'-_")


def validate_display_name(value: str) -> None:
    if value != value.strip():
        raise ValidationError(_("Remove the spaces at the start and end."), code="display_name_spaces")
    if "  " in value:
        raise ValidationError(_("Use single spaces between words."), code="display_name_spaces")
    categories = [unicodedata.category(char)[0] for char in value]
    allowed = all(
        kind in "LMN" or char in _DISPLAY_NAME_PUNCTUATION
        for char, kind in zip(value, categories, strict=True)
    )
    if value and not (allowed and categories[0] in "LN" and categories[-1] in "LMN"):
        raise ValidationError(
            _("Use letters, digits, spaces and . ' - _ only, starting and ending with a letter or digit."),
            code="display_name_characters",
        )


class User(AbstractUser):
    display_name = models.CharField(
        max_length=DISPLAY_NAME_MAX_LENGTH,
        blank=True,
        validators=[validate_display_name],
        help_text=_("Shown at the tables instead of your username. Optional."),
    )
    avatar = models.CharField(max_length=16, choices=AVATAR_CHOICES, default=DEFAULT_AVATAR)
    suspended = models.BooleanField(
        default=False, help_text="A suspended player cannot sit or act at a table (staff admin)."
    )
    show_mistakes = models.BooleanField(
        _("show my coach notes"),
        default=False,
        help_text=_(
            "Let other players see the coach's notes on your play (your decisions unlike basic "
            "strategy) on your public profile. Off: only you see them."
        ),
    )
    #: The table page's choices that follow the player from browser to browser (`accounts.preferences`).
    preferences = models.JSONField(default=dict, blank=True)
    #: The site's language this player chose with the header's switch (`accounts.language`); blank: never
    #: chosen (the browser's language cookie or Accept-Language decides).
    language = models.CharField(max_length=8, blank=True, default="", choices=settings.LANGUAGES)

    @property
    def barred(self) -> bool:
        """Whether the account may not play: suspended by staff, or closed (deactivated)."""
        return self.suspended or not self.is_active

    @property
    def public_name(self) -> str:
        """The name other players see."""
        return self.display_name or self.username

    @property
    def avatar_path(self) -> str:
        """Static path of the avatar image, for `{% static user.avatar_path %}`."""
        return avatar_static_path(self.avatar)


class Wallet(models.Model):
    class Kind(models.TextChoices):
        PLAYER = "player", "Player"
        HOUSE = "house", "House"
        ISSUER = "issuer", "Issuer (granted chips)"
        FLOAT = "float", "Table float"

    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.PLAYER)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="wallet"
    )
    #: The longest game name (`live.games`) a float or a ledger row carries.
    GAME_MAX_LENGTH = 16

    balance = models.BigIntegerField(default=0)
    # The table of a float wallet: its game and its id in that game (not a foreign key: the wallets know
    # nothing of tables, and each game numbers its tables from 1).
    game = models.CharField(max_length=GAME_MAX_LENGTH, blank=True, default="")
    table_ref = models.BigIntegerField(null=True, blank=True)
    last_daily_grant_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~Q(kind__in=["player", "float"]) | Q(balance__gte=0),
                name="wallet_balance_non_negative",
                violation_error_message="A player's or a table float's balance cannot go below zero.",
            ),
            models.CheckConstraint(
                condition=Q(kind="player", user__isnull=False, game="", table_ref__isnull=True)
                | Q(kind__in=["house", "issuer"], user__isnull=True, game="", table_ref__isnull=True)
                | (Q(kind="float", user__isnull=True, table_ref__isnull=False) & ~Q(game="")),
                name="wallet_owner_matches_kind",
            ),
            models.UniqueConstraint(
                fields=["kind"], condition=Q(kind__in=["house", "issuer"]), name="wallet_one_house_one_issuer"
            ),
            models.UniqueConstraint(
                fields=["game", "table_ref"], condition=Q(kind="float"), name="wallet_one_float_per_table"
            ),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.PLAYER:
            return f"wallet of user #{self.user_id}"
        if self.kind == self.Kind.FLOAT:
            return f"float of {self.game} table #{self.table_ref}"
        return f"{self.kind} wallet"


class LedgerEntry(AppendOnlyModel):
    class Kind(models.TextChoices):
        GRANT = "grant", _("Grant")
        BET = "bet", _("Bet")
        PAYOUT = "payout", _("Payout")
        REFUND = "refund", _("Refund")
        ADJUSTMENT = "adjustment", _("Adjustment")
        FLOAT = "float", _("Float (house <-> table)")

    MEMO_MAX_LENGTH = 200

    wallet = models.ForeignKey(Wallet, on_delete=models.PROTECT, related_name="entries")
    # Both rows of one movement share a transfer id; their amounts sum to zero.
    transfer = models.UUIDField(db_index=True, editable=False)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    amount = models.BigIntegerField(help_text="Signed: positive adds chips to this wallet.")
    balance_after = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True, editable=False)
    round_ref = models.BigIntegerField(null=True, blank=True, db_index=True)
    #: The table the chips moved at: its game and its id there (empty and None away from a table).
    game = models.CharField(max_length=Wallet.GAME_MAX_LENGTH, blank=True, default="")
    table_ref = models.BigIntegerField(null=True, blank=True)
    memo = models.CharField(max_length=MEMO_MAX_LENGTH, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        verbose_name_plural = "ledger entries"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["wallet", "id"], name="ledger_wallet_id"),
            models.Index(fields=["game", "table_ref"], name="ledger_table"),
        ]
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="ledger_amount_non_zero"),
            models.CheckConstraint(
                condition=Q(kind__in=["grant", "bet", "payout", "refund", "adjustment", "float"]),
                name="ledger_kind_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount:+d} -> {self.balance_after} (wallet {self.wallet_id})"
