"""The tables' chat in the admin: read-only (staff read it, filtered by game; lines are never edited)."""

from django.contrib import admin

from live.models import ChatLine


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
