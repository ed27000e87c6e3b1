"""Durak in the admin: staff see tables, seats, games, the action log and ratings, and act on live tables
through their owner (`durak.operations`): close a table, open it again, stand a player up. No field is edited
here: only the table's actor writes live tables (an edit would not reach its memory), tables are opened from
the site (which makes their seats), and games, actions and ratings are records. What is secret while a game
is in play (the hands and the talon, the server seeds not yet revealed) is never shown nor filtered on. The
games' admin also has the report of pairs of players whose chips went one way ("Chip flow between players",
linked from the admin index)."""

from datetime import timedelta

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone

from cards.errors import Refused
from durak import operations, services
from durak.models import DurakAction, DurakGame, DurakRating, DurakSeat, DurakTable
from live.admin import QuarantinedFilter, SecretsAdmin


class ReadOnly:
    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class SeatInline(ReadOnly, admin.TabularInline):
    model = DurakSeat
    fields = ["number", "user", "is_bot", "away", "ready", "gone"]


class StaffActions:
    """Runs a staff operation for each selected row, saying what happened (a table whose owner did not
    answer is named, the others are done)."""

    def run_each(self, request, rows, operation, done: str) -> None:
        failed = []
        for row in rows:
            try:
                operation(row)
            except Refused as refusal:
                failed.append(f"{row}: {refusal.message}")
        if failed:
            self.message_user(request, "Not done: " + "; ".join(failed), messages.ERROR)
        else:
            self.message_user(request, done)


@admin.register(DurakTable)
class DurakTableAdmin(StaffActions, ReadOnly, SecretsAdmin):
    secret_fields = ("next_server_seed", "private_token")
    exclude = ["next_server_seed", "private_token"]
    list_display = [
        "name",
        "variant",
        "attack",
        "seats",
        "stake",
        "status",
        "is_private",
        "version",
        "quarantined",
    ]
    list_filter = [QuarantinedFilter, "variant", "status", "is_private"]
    search_fields = ["name"]
    inlines = [SeatInline]
    actions = ["close_tables", "reopen_tables"]

    def has_change_permission(self, request, obj=None) -> bool:
        # The list's actions need it; a table's own page stays read-only (the actor writes the row).
        return obj is None and request.user.has_perm("durak.change_duraktable")

    @admin.display(description="quarantined", ordering="quarantined_at")
    def quarantined(self, table):
        if table.quarantined_at is None:
            return ""
        return f"{table.quarantined_at:%Y-%m-%d %H:%M}: {table.quarantine_reason[:80]}"

    @admin.action(description="Close the selected tables (after the game in play)", permissions=["change"])
    def close_tables(self, request, queryset):
        close = lambda table: operations.close_table(table_id=table.pk)  # noqa: E731
        self.run_each(request, queryset, close, "Closed: players stand up now, or when their game ends.")

    @admin.action(description="Open the selected tables (quarantined ones too)", permissions=["change"])
    def reopen_tables(self, request, queryset):
        reopen = lambda table: operations.reopen_table(table_id=table.pk)  # noqa: E731
        self.run_each(request, queryset, reopen, "Opened.")


@admin.register(DurakSeat)
class DurakSeatAdmin(StaffActions, ReadOnly, admin.ModelAdmin):
    """The seats players hold (empty ones left out), to stand a player up."""

    list_display = ["table", "number", "user", "away", "ready", "gone"]
    list_select_related = ["table", "user"]
    search_fields = ["user__username", "table__name"]
    actions = ["stand_up"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(user__isnull=False)

    def has_change_permission(self, request, obj=None) -> bool:
        return obj is None and request.user.has_perm("durak.change_durakseat")

    @admin.action(
        description="Stand the selected players up (a bot finishes their game)", permissions=["change"]
    )
    def stand_up(self, request, queryset):
        stand = lambda seat: operations.stand_up(table_id=seat.table_id, user_id=seat.user_id)  # noqa: E731
        self.run_each(request, queryset, stand, "Stood up: the players were told at their tables.")


@admin.register(DurakGame)
class DurakGameAdmin(ReadOnly, SecretsAdmin):
    #: A game's state holds the hands and the talon; its server seed is revealed once the game is over.
    secret_fields = ("state", "server_seed")
    list_display = ["table", "number", "finished", "voided", "fool", "pot", "started_at"]

    def get_exclude(self, request, obj=None):
        return [] if obj is not None and obj.finished else list(self.secret_fields)

    def get_urls(self):
        chip_flow = self.admin_site.admin_view(self.chip_flow_view)
        return [path("chip-flow/", chip_flow, name="durak_chip_flow"), *super().get_urls()]

    def chip_flow_view(self, request):
        """The pairs of players whose chips in staked games went one way (`services.one_sided_flows`, with
        the CHIP_FLOW_* settings), each player linked to their account and ledger. Read-only; staff who may
        view games."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        flows = services.one_sided_flows(
            since=timezone.now() - timedelta(days=settings.CHIP_FLOW_DAYS),
            min_games=settings.CHIP_FLOW_MIN_GAMES,
            min_share=settings.CHIP_FLOW_MIN_SHARE_PERCENT / 100,
            min_net=settings.CHIP_FLOW_MIN_NET,
        )
        users = get_user_model().objects.in_bulk(
            {flow.taker for flow in flows} | {flow.giver for flow in flows}
        )
        context = {
            **self.admin_site.each_context(request),
            "title": "Chip flow between players",
            "opts": self.model._meta,
            "rows": [
                {"flow": flow, "taker": users[flow.taker], "giver": users[flow.giver]} for flow in flows
            ],
            "days": settings.CHIP_FLOW_DAYS,
            "min_games": settings.CHIP_FLOW_MIN_GAMES,
            "min_share": settings.CHIP_FLOW_MIN_SHARE_PERCENT,
            "min_net": settings.CHIP_FLOW_MIN_NET,
        }
        return TemplateResponse(request, "admin/durak/chip_flow.html", context)


@admin.register(DurakAction)
class DurakActionAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["game", "version", "seat", "action", "by_bot"]


@admin.register(DurakRating)
class DurakRatingAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["user", "rating", "deviation", "games", "fools"]
