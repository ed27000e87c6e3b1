"""What every live table's row carries, whatever the game: a lease with an epoch (the fencing token), the
version its owner's writes are fenced by, the quarantine staff see, who opened it and whether it is private
(`live.private`); and every table's chat lines."""

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone


class Leased(models.Model):
    """A row owned, while its lease runs, by one process (`owner`). Taking the row over bumps `epoch`, and
    every write of an owner carries the epoch it holds, so an owner that lost its lease can never commit."""

    owner = models.CharField(max_length=120, blank=True, default="", editable=False)
    epoch = models.PositiveBigIntegerField(default=0, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        abstract = True


def new_private_token() -> str:
    return secrets.token_urlsafe(18)


class LiveTable(Leased):
    """A live table of any game (`live.table.TableActor` owns it): its version, which every change moves on
    and every write of its owner is fenced by; the quarantine of a table whose commands kept failing
    (`live.quarantine`): when and why, for staff; who opened it; and its privacy: a private table is in no
    lobby and is watched only through its invitation link (`private_token`, `live.private`)."""

    version = models.PositiveBigIntegerField(default=0, editable=False)
    quarantined_at = models.DateTimeField(null=True, blank=True, editable=False)
    quarantine_reason = models.TextField(blank=True, editable=False)
    is_private = models.BooleanField(default=False)
    private_token = models.CharField(max_length=32, unique=True, default=new_private_token, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        abstract = True


class ChatLine(models.Model):
    """A chat line at a table of any game (`live.chat`): the table is named by its game and its id there."""

    game = models.CharField(max_length=16)
    table_ref = models.BigIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    text = models.CharField(max_length=300)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["game", "table_ref", "-id"], name="chatline_recent")]

    def __str__(self) -> str:
        return self.text[:40]
