"""Durak in the admin: staff see tables, seats, games, the action log and ratings. Read-only: only the
table's actor writes live tables (an edit here would not reach its memory), tables are opened from the site
(which makes their seats), and games, actions and ratings are records. The games' admin also has the report
of pairs of players whose chips went one way ("Chip flow between players", linked from the admin index)."""

from datetime import timedelta

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone

from durak import services
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
