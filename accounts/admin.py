"""Staff admin of users and money: balances are shown, never edited; chips move only through
`accounts.services.adjust` (an `adjustment` ledger entry naming the staff member and the reason); the
ledger and wallets are read-only, with no delete of any kind (not even the bulk action)."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db import transaction
from django.template.response import TemplateResponse

from accounts import services
from accounts.forms import AdminLoginForm
from accounts.models import LedgerEntry, User, Wallet
from cards.errors import Refused
from live import games

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


class AdjustBalanceForm(forms.Form):
    amount = forms.IntegerField(
        help_text="Chips to grant (positive) or take (negative); a balance cannot go below zero."
    )
    reason = forms.CharField(
        max_length=LedgerEntry.MEMO_MAX_LENGTH,
        help_text="Written on the ledger entry with your name.",
        widget=forms.TextInput(attrs={"size": 60}),
    )

    def clean_amount(self):
        amount = self.cleaned_data["amount"]
        if amount == 0:
            raise forms.ValidationError("Enter a non-zero amount.")
        if abs(amount) > services.MAX_AMOUNT:
            raise forms.ValidationError(f"At most {services.MAX_AMOUNT:,} chips at once.")
        return amount


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = (
        "username",
        "display_name",
        "email",
        "balance",
        "suspended",
        "is_staff",
        "is_active",
        "date_joined",
    )
    list_filter = ("suspended", *DjangoUserAdmin.list_filter)
    list_select_related = ("wallet",)
    readonly_fields = ("balance", "suspended")
    fieldsets = (
        *DjangoUserAdmin.fieldsets,
        ("Player", {"fields": ("display_name", "avatar", "balance", "suspended")}),
    )
    actions = ("adjust_balance", "suspend", "unsuspend")

    @admin.display(description="chips", ordering="wallet__balance")
    def balance(self, user):
        wallet = getattr(user, "wallet", None)
        return None if wallet is None else wallet.balance

    def has_delete_permission(self, request, obj=None):
        # A player's ledger must stay complete: deactivate accounts instead of deleting them.
        return False

    def save_model(self, request, obj, form, change):
        """Deactivating an account frees its seats as a suspension does (after the round where its chips are
        in play); its open websockets can no longer sit or play."""
        super().save_model(request, obj, form, change)
        if change and "is_active" in form.changed_data and not obj.is_active:
            # The admin saves in a transaction: the tables' owners write in theirs once it is committed.
            transaction.on_commit(lambda: self._release_seats(request, obj))

    def _release_seats(self, request, user) -> None:
        """Stand the user up at every table, once their account's change is committed (each table's owner
        applies it in a transaction of its own; the account row alone already bars them from playing)."""
        for game in games.all_games():
            try:
                game.release_user(user)
            except Refused as refusal:
                self.message_user(request, f"{user.username}: {refusal.message}", messages.WARNING)

    def has_adjust_permission(self, request):
        """Moving chips needs the "change wallet" permission (superusers; never the table managers)."""
        return request.user.has_perm("accounts.change_wallet")

    @admin.action(description="Grant or take chips", permissions=["adjust"])
    def adjust_balance(self, request, queryset):
        form = AdjustBalanceForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            amount, reason = form.cleaned_data["amount"], form.cleaned_data["reason"]
            for user in queryset.order_by("pk"):
                try:
                    services.adjust(user=user, amount=amount, staff=request.user, reason=reason)
                except services.WalletError as refusal:
                    self.message_user(request, f"{user.username}: {refusal.message}", messages.ERROR)
                else:
                    self.message_user(request, f"{user.username}: {amount:+,} chips ({reason}).")
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Grant or take chips",
            "opts": self.model._meta,
            "users": queryset.select_related("wallet").order_by("pk"),
            "form": form,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/accounts/user/adjust_balance.html", context)

    @admin.action(
        description="Suspend (cannot sit or play; seats freed after the round)", permissions=["change"]
    )
    def suspend(self, request, queryset):
        for user in queryset.order_by("pk"):
            try:
                services.suspend_user(user=user, staff=request.user)
            except services.WalletError as refusal:
                self.message_user(request, f"{user.username}: {refusal.message}", messages.ERROR)
                continue
            self._release_seats(request, user)
            self.message_user(request, f"{user.username} is suspended.")

    @admin.action(description="Lift the suspension", permissions=["change"])
    def unsuspend(self, request, queryset):
        for user in queryset.filter(suspended=True).order_by("pk"):
            services.unsuspend_user(user=user, staff=request.user)
            self.message_user(request, f"{user.username} may play again.")


@admin.register(Wallet)
class WalletAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "user", "game", "table_ref", "balance", "last_daily_grant_at", "created_at")
    list_filter = ("kind",)
    search_fields = ("user__username", "user__display_name")
    list_select_related = ("user",)


class GameFilter(admin.SimpleListFilter):
    """Ledger rows by the game they were played at (`game`; with `table`, one of its tables)."""

    title = "game"
    parameter_name = "game"

    def __init__(self, request, params, model, model_admin):
        table = params.pop("table", [""])
        self.table = table[-1] if isinstance(table, list) else table
        super().__init__(request, params, model, model_admin)

    def lookups(self, request, model_admin):
        return [(game.name, game.label) for game in games.all_games()]

    def queryset(self, request, queryset):
        if self.value():
            queryset = queryset.filter(game=self.value())
            if self.table.isascii() and self.table.isdigit():
                queryset = queryset.filter(table_ref=int(self.table))
        return queryset


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "created_at",
        "wallet",
        "player",
        "kind",
        "amount",
        "balance_after",
        "round_ref",
        "game",
        "table_ref",
        "memo",
        "created_by",
    )
    list_filter = ("kind", "wallet__kind", GameFilter, ("created_at", admin.DateFieldListFilter))
    search_fields = (
        "wallet__user__username",
        "wallet__user__display_name",
        "memo",
        "=round_ref",
        "=transfer",
    )
    list_select_related = ("wallet__user", "created_by")
    date_hierarchy = "created_at"

    @admin.display(description="player", ordering="wallet__user__username")
    def player(self, entry):
        return entry.wallet.user.username if entry.wallet.user_id else "—"
