"""What every game's admin shares: `SecretsAdmin` (fields no list may filter on), `OwnedTableAdmin` (a live
table's change form, saved by its owner), and the tables' chat, read-only (staff read it, filtered by game;
lines are never edited)."""

from django.contrib import admin
from django.contrib.admin.options import csrf_protect_m
from django.db.models.constants import LOOKUP_SEP

from live.models import ChatLine


class SecretsAdmin(admin.ModelAdmin):
    #: Fields never shown (a game's hands and deck in play, an unrevealed server seed).
    secret_fields: tuple[str, ...] = ()

    def lookup_allowed(self, lookup, value, request):
        """A secret field cannot be filtered on either: Django's lists accept a filter on any field of their
        own model in the address, and a list that shows a row only when a guessed value is right would give
        the secret away."""
        if lookup.split(LOOKUP_SEP, 1)[0] in self.secret_fields:
            return False
        return super().lookup_allowed(lookup, value, request)


class OwnedTableAdmin(admin.ModelAdmin):
    """The admin of a game's live tables, whose change form hands the change to the table's owner
    (`live.route.Route.from_sync`): the form is saved outside a transaction (Django's admin saves in one),
    since the owner commits the change in a transaction of its own and answers, which a transaction of the
    request would hold up (`live.route.outside_transactions`). What the form writes itself (the admin's log)
    is committed on its own."""

    @csrf_protect_m
    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        return self._changeform_view(request, object_id, form_url, extra_context)


class QuarantinedFilter(admin.SimpleListFilter):
    """The tables stopped after repeated failures (`live.quarantine`); reopening clears them."""

    title = "quarantined"
    parameter_name = "quarantined"

    def lookups(self, request, model_admin):
        return [("yes", "Quarantined"), ("no", "Not quarantined")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(quarantined_at__isnull=self.value() == "no")
        return queryset


@admin.register(ChatLine)
class ChatLineAdmin(admin.ModelAdmin):
    list_display = ("created_at", "game", "table_ref", "user", "text")
    list_filter = ("game",)
    search_fields = ("user__username", "text", "=table_ref")
    list_select_related = ("user",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
