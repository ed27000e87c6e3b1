"""What every live object's row carries for its owner: a lease with an epoch (the fencing token)."""

from django.db import models


class Leased(models.Model):
    """A row owned, while its lease runs, by one process (`owner`). Taking the row over bumps `epoch`, and
    every write of an owner carries the epoch it holds, so an owner that lost its lease can never commit."""

    owner = models.CharField(max_length=120, blank=True, default="", editable=False)
    epoch = models.PositiveBigIntegerField(default=0, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        abstract = True
