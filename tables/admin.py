"""Minimal admin registrations: staff can edit presets and table settings; the live records are read-only.
(A later issue builds the full staff admin.) Round rules and limits are snapshotted when a round opens, so
editing a table's limits or preset affects the next round, never a placed bet."""

from django.contrib import admin

from tables.models import ActionLog, ChatMessage, Round, RulePreset, Shoe, Table, TableEvent


@admin.register(RulePreset)
class RulePresetAdmin(admin.ModelAdmin):
    list_display = ["name", "house_edge", "house_edge_rounds"]


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "preset",
        "min_bet",
        "max_bet",
        "seats",
        "is_open",
        "is_private",
        "phase",
        "version",
    ]
    list_filter = ["is_open", "is_private", "phase"]
    readonly_fields = ["private_token", "phase", "version", "deadline", "current_round", "created_at"]


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    list_display = ["table", "number", "phase", "started_at", "settled_at", "voided"]
    list_filter = ["voided", "phase"]
    # The engine state holds the hole card of a round in play; staff see results instead.
    exclude = ["state"]


@admin.register(Shoe)
class ShoeAdmin(ReadOnlyAdmin):
    list_display = ["table", "seed_hash", "decks", "position", "created_at", "retired_at"]
    # The server seed stays secret while the shoe is in play; `revealed_seed` shows it once retired.
    exclude = ["server_seed"]
    readonly_fields = ["revealed_seed"]


@admin.register(ActionLog)
class ActionLogAdmin(ReadOnlyAdmin):
    list_display = ["round", "seq", "user", "seat", "action", "version_after", "created_at"]


@admin.register(TableEvent)
class TableEventAdmin(ReadOnlyAdmin):
    list_display = ["table", "created_at", "kind", "text"]


@admin.register(ChatMessage)
class ChatMessageAdmin(ReadOnlyAdmin):
    list_display = ["table", "user", "created_at", "text"]
