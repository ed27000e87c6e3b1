"""Durak in the admin: staff see tables, seats, games, the action log and ratings. Read-only: only the
table's actor writes live tables (an edit here would not reach its memory), tables are opened from the site
(which makes their seats), and games, actions and ratings are records."""

from django.contrib import admin

from durak.models import DurakAction, DurakGame, DurakRating, DurakSeat, DurakTable


class ReadOnly:
    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class SeatInline(ReadOnly, admin.TabularInline):
    model = DurakSeat
    fields = ["number", "user", "is_bot", "away"]


@admin.register(DurakTable)
class DurakTableAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["name", "variant", "attack", "seats", "stake", "status", "version"]
    list_filter = ["variant", "status"]
    inlines = [SeatInline]


@admin.register(DurakGame)
class DurakGameAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["table", "number", "finished", "fool", "pot", "started_at"]


@admin.register(DurakAction)
class DurakActionAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["game", "version", "seat", "action", "by_bot"]


@admin.register(DurakRating)
class DurakRatingAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["user", "rating", "deviation", "games", "fools"]
