"""Append-only rows (the chip ledger, the table action log): written once, never changed or removed
through the ORM. The ledger audit catches what raw SQL might still do."""

from django.db import models


class AppendOnlyError(RuntimeError):
    """An attempt to change or remove a row of an append-only table."""


def _refusal(model: type[models.Model], what: str) -> AppendOnlyError:
    name = str(model._meta.verbose_name_plural).capitalize()
    return AppendOnlyError(f"{name} are append-only: {what}.")


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise _refusal(self.model, "they cannot be updated")

    def delete(self):
        raise _refusal(self.model, "they cannot be deleted")


class AppendOnlyModel(models.Model):
    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise _refusal(type(self), "an existing row cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise _refusal(type(self), "they cannot be deleted")
