"""High card's rows: its tables (the runtime's `LiveTable`: lease, version, privacy) and its rounds."""

from django.conf import settings
from django.db import models

from live.models import LiveTable

SEATS = 4


def empty_seats() -> list:
    return [None] * SEATS


class HighCardTable(LiveTable):
    name = models.CharField(max_length=60)
    stake = models.PositiveIntegerField(default=10)
    #: Each seat's player as [user id, name], or None.
    seats = models.JSONField(default=empty_seats)
    #: The runtime's sweep reads every game's deadline; high card has none.
    deadline = models.DateTimeField(null=True, blank=True)
    closed = models.BooleanField(default=False)

    class Meta:
        app_label = "highcard"

    def __str__(self) -> str:
        return self.name


class HighCardRound(models.Model):
    table = models.ForeignKey(HighCardTable, on_delete=models.CASCADE, related_name="rounds")
    version = models.PositiveBigIntegerField()
    server_seed = models.CharField(max_length=64)
    #: Each player's card, as [user id, name, card] in seat order.
    draws = models.JSONField()
    winner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    pot = models.PositiveIntegerField()

    class Meta:
        app_label = "highcard"
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"round {self.pk} of table {self.table_id}"
