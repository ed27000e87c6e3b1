from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from accounts.forms import AdminLoginForm
from accounts.models import LedgerEntry, User, Wallet

# The admin log-in is throttled like the site's.
admin.site.login_form = AdminLoginForm


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewable, never written through the admin: money only moves through accounts.services."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = ("username", "display_name", "email", "balance", "is_staff", "is_active", "date_joined")
    list_select_related = ("wallet",)
    readonly_fields = ("balance",)
    fieldsets = (
        *DjangoUserAdmin.fieldsets,
        ("Player", {"fields": ("display_name", "avatar", "balance")}),
    )

    @admin.display(description="chips", ordering="wallet__balance")
    def balance(self, user):
        wallet = getattr(user, "wallet", None)
        return None if wallet is None else wallet.balance

    def has_delete_permission(self, request, obj=None):
        # A player's ledger must stay complete: deactivate accounts instead of deleting them.
        return False


@admin.register(Wallet)
class WalletAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "user", "balance", "last_daily_grant_at", "created_at")
    list_filter = ("kind",)
    search_fields = ("user__username", "user__display_name")
    list_select_related = ("user",)


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "created_at",
        "wallet",
        "kind",
        "amount",
        "balance_after",
        "round_ref",
        "table_ref",
        "memo",
    )
    list_filter = ("kind", "wallet__kind")
    search_fields = ("wallet__user__username", "memo", "=round_ref", "=transfer")
    list_select_related = ("wallet",)
    date_hierarchy = "created_at"
