"""The staff admin of the live tables: rule presets (every engine rule a form field, house edge estimated in
the background), tables (created, edited, opened and closed through `blackjack.services`, so the lobby and the
table's viewers see every change live), and read-only rounds, shoes, action log, events and chat.

Round rules and limits are snapshotted when a round opens, so editing a table's limits or preset affects the
next round, never a placed bet.
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, OuterRef, Q, Subquery
from django.http import HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from accounts.models import Wallet
from blackjack import house_edge, operations, services
from blackjack.engine.rules import CHARLIE, DOUBLE_ON, MAX_DECKS, MIN_DECKS, PAYOUTS, SURRENDER, RuleSet
from blackjack.models import (
    GAME,
    MAX_SEATS,
    MAX_WINDOW_SECONDS,
    ActionLog,
    OpenTableBounds,
    Round,
    RulePreset,
    Shoe,
    Table,
    TableEvent,
)
from cards.errors import Refused
from live import fanout
from live.admin import OwnedTableAdmin, QuarantinedFilter, SecretsAdmin

# --- rule presets -------------------------------------------------------------------------------------------


def _choices(values) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


class RulePresetForm(forms.ModelForm):
    """One form field per `RuleSet` field; the engine validates the combination and its message is shown."""

    decks = forms.IntegerField(min_value=MIN_DECKS, max_value=MAX_DECKS, initial=6)
    dealer_hits_soft_17 = forms.BooleanField(required=False, label="Dealer hits soft 17")
    blackjack_payout = forms.ChoiceField(choices=_choices(PAYOUTS), initial="3:2")
    double_on = forms.ChoiceField(choices=_choices(DOUBLE_ON), initial="any", label="Double on")
    double_after_split = forms.BooleanField(required=False, initial=True, label="Double after split")
    max_split_hands = forms.TypedChoiceField(
        choices=[(n, str(n)) for n in range(1, 5)], coerce=int, initial=4, help_text="1: no splitting."
    )
    resplit_aces = forms.BooleanField(required=False)
    hit_split_aces = forms.BooleanField(required=False)
    surrender = forms.ChoiceField(choices=_choices(SURRENDER), initial="late")
    dealer_peek = forms.BooleanField(
        required=False, initial=True, help_text="Off: the no-hole-card (European) game."
    )
    original_bets_only = forms.BooleanField(
        required=False, help_text="No-hole-card game: a dealer blackjack takes only the original bets."
    )
    penetration = forms.FloatField(
        initial=0.75, help_text="Share of the shoe dealt before the reshuffle (0.5 to 0.9), or 0."
    )
    charlie = forms.TypedChoiceField(
        choices=[("", "none"), *((n, f"{n}-card charlie") for n in CHARLIE if n is not None)],
        coerce=int,
        empty_value=None,
        required=False,
    )
    suited_678_bonus = forms.CharField(
        required=False, max_length=7, label="Suited 6-7-8 bonus", help_text="A ratio like 2:1, or empty."
    )

    class Meta:
        model = RulePreset
        fields = ["name", "description"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and isinstance(self.instance.rules, dict):
            for name, value in self.instance.ruleset().to_dict().items():
                self.initial[name] = "" if value is None else value

    def clean(self):
        cleaned = super().clean()
        data = {name: cleaned.get(name) for name in RULE_FIELDS}
        if any(name in self._errors for name in RULE_FIELDS):
            return cleaned
        data["suited_678_bonus"] = data["suited_678_bonus"] or None
        try:
            self.ruleset = RuleSet.from_dict(data)
        except Refused as exc:
            raise forms.ValidationError(exc.message, code=exc.code) from None
        return cleaned

    def _post_clean(self):
        # The model's own check (`RulePreset.clean`) reads `rules`: give it the engine's valid rules. Without
        # them the form already shows the engine's message, and the model would repeat it on a hidden field.
        if hasattr(self, "ruleset"):
            self.instance.rules = self.ruleset.to_dict()
            super()._post_clean()


RULE_FIELDS = [name for name in RulePresetForm.base_fields if name not in ("name", "description")]


@admin.register(RulePreset)
class RulePresetAdmin(admin.ModelAdmin):
    form = RulePresetForm
    list_display = ["name", "summary", "edge", "tables_using"]
    search_fields = ["name", "description"]
    readonly_fields = ["edge", "house_edge_updated_at"]
    actions = ["estimate_again"]
    fieldsets = [
        (None, {"fields": ["name", "description", "edge", "house_edge_updated_at"]}),
        ("Deck and dealer", {"fields": ["decks", "penetration", "dealer_hits_soft_17", "dealer_peek"]}),
        ("Payouts", {"fields": ["blackjack_payout", "charlie", "suited_678_bonus"]}),
        (
            "Player options",
            {
                "fields": [
                    "double_on",
                    "double_after_split",
                    "max_split_hands",
                    "resplit_aces",
                    "hit_split_aces",
                    "surrender",
                    "original_bets_only",
                ]
            },
        ),
    ]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(table_count=Count("tables"))

    @admin.display(description="rules")
    def summary(self, preset):
        return preset.ruleset().summary()

    @admin.display(description="house edge", ordering="house_edge")
    def edge(self, preset):
        if preset.pk and house_edge.is_estimating(preset.pk):
            return "estimating…"
        if preset.house_edge is None:
            return "not estimated"
        return (
            f"{preset.house_edge:+.2f}% ± {preset.house_edge_stderr:.2f}% "
            f"({preset.house_edge_rounds:,} rounds)"
        )

    @admin.display(description="tables", ordering="table_count")
    def tables_using(self, preset):
        return preset.table_count

    def save_model(self, request, obj, form, change):
        before = RulePreset.objects.filter(pk=obj.pk).values_list("rules", flat=True).first()
        super().save_model(request, obj, form, change)
        if before is None or RuleSet.from_dict(before) != obj.ruleset():
            house_edge.refresh_on_commit(obj.pk)
        fanout.lobby_changed_on_commit()  # the lobby shows each table's rules

    @admin.action(description="Estimate the house edge again")
    def estimate_again(self, request, queryset):
        for preset_id in queryset.values_list("pk", flat=True):
            house_edge.refresh_on_commit(preset_id)
        self.message_user(request, "The house edge is being estimated in the background.")


# --- tables -------------------------------------------------------------------------------------------------


class TableForm(forms.ModelForm):
    """Table settings, checked here field by field; `blackjack.services` checks them again when saving."""

    class Meta:
        model = Table
        fields = [
            "name",
            "preset",
            "is_private",
            "min_bet",
            "max_bet",
            "seats",
            "seats_per_player",
            "betting_seconds",
            "insurance_seconds",
            "turn_seconds",
            "ready_seconds",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cap = services.table_max_bet_cap()
        self.fields["max_bet"].help_text = f"At most {cap:,} (the site-wide cap, TABLE_MAX_BET_CAP)."
        self.fields["seats"].help_text = f"1 to {MAX_SEATS}."

    def clean_min_bet(self):
        value = self.cleaned_data["min_bet"]
        if value < 1:
            raise forms.ValidationError("The minimum bet is at least 1 chip.")
        return value

    def clean_max_bet(self):
        value = self.cleaned_data["max_bet"]
        cap = services.table_max_bet_cap()
        if value > cap:
            raise forms.ValidationError(f"The maximum bet cannot exceed the site-wide cap of {cap:,} chips.")
        return value

    def clean_seats(self):
        value = self.cleaned_data["seats"]
        if not 1 <= value <= MAX_SEATS:
            raise forms.ValidationError(f"A table has 1 to {MAX_SEATS} seats.")
        return value

    def clean(self):
        cleaned = super().clean()
        low, high = cleaned.get("min_bet"), cleaned.get("max_bet")
        if low is not None and high is not None and low > high:
            self.add_error("max_bet", "The maximum bet must be at least the minimum bet.")
        seats, per_player = cleaned.get("seats"), cleaned.get("seats_per_player")
        if seats is not None and per_player is not None and not 1 <= per_player <= seats:
            self.add_error("seats_per_player", "Seats per player must be 1 to the number of seats.")
        for name in services.WINDOW_SETTINGS:
            if cleaned.get(name) is not None and not 1 <= cleaned[name] <= MAX_WINDOW_SECONDS:
                self.add_error(name, f"From 1 to {MAX_WINDOW_SECONDS} seconds.")
        if self.instance.pk and seats is not None:
            taken = self.instance.seat_set.filter(user__isnull=False, number__gt=seats).order_by("number")
            first = taken.values_list("number", flat=True).first()
            if first is not None:
                self.add_error("seats", f"Seat {first} is occupied: it stays until its player leaves.")
        return cleaned


@admin.register(Table)
class TableAdmin(OwnedTableAdmin, SecretsAdmin):
    secret_fields = ("next_server_seed",)
    form = TableForm
    list_display = [
        "name",
        "preset",
        "limits",
        "seats",
        "is_open",
        "is_private",
        "phase",
        "players_seated",
        "rounds_played",
        "house_float",
        "quarantined",
    ]
    list_filter = [QuarantinedFilter, "is_open", "is_private", "phase", "preset"]
    search_fields = ["name"]
    list_select_related = ["preset"]
    readonly_fields = [
        "quarantined_at",
        "quarantine_reason",
        "is_open",
        "phase",
        "version",
        "current_round",
        "house_float",
        "private_token",
        "created_at",
    ]
    actions = ["close_tables", "reopen_tables"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                seated=Count("seat_set", filter=Q(seat_set__user__isnull=False), distinct=True),
                played=Count(
                    "rounds", filter=Q(rounds__settled_at__isnull=False, rounds__voided=False), distinct=True
                ),
                float_chips=Subquery(
                    Wallet.objects.filter(kind=Wallet.Kind.FLOAT, game=GAME, table_ref=OuterRef("pk")).values(
                        "balance"
                    )[:1]
                ),
            )
        )

    @admin.display(description="bets")
    def limits(self, table):
        return f"{table.min_bet:,}\u2013{table.max_bet:,}"

    @admin.display(description="players seated", ordering="seated")
    def players_seated(self, table):
        return f"{table.seated} of {table.seats}"

    @admin.display(description="rounds played", ordering="played")
    def rounds_played(self, table):
        return table.played

    @admin.display(description="quarantined", ordering="quarantined_at")
    def quarantined(self, table):
        """When and why the table was stopped, if it was."""
        if table.quarantined_at is None:
            return ""
        return f"{table.quarantined_at:%Y-%m-%d %H:%M}: {table.quarantine_reason[:80]}"

    @admin.display(description="house float", ordering="float_chips")
    def house_float(self, table):
        """The chips of the table's float, linked to the table's ledger rows."""
        if table.float_chips is None:
            return "\u2014"
        url = reverse("admin:accounts_ledgerentry_changelist") + f"?game={GAME}&table={table.pk}"
        return format_html('<a href="{}">{}</a>', url, f"{table.float_chips:,}")

    def has_delete_permission(self, request, obj=None):
        # Rounds and their history belong to the table: close it instead.
        return False

    def save_model(self, request, obj, form, change):
        values = {name: form.cleaned_data[name] for name in services.TABLE_SETTINGS}
        if change:
            operations.update_table(table_id=obj.pk, **values)
        else:
            name, preset = values.pop("name"), values.pop("preset")
            min_bet, max_bet = values.pop("min_bet"), values.pop("max_bet")
            created = services.create_table(
                name=name, preset=preset, min_bet=min_bet, max_bet=max_bet, created_by=request.user, **values
            )
            obj.pk = created.pk
        obj.refresh_from_db()

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except Refused as refusal:
            # The service has the last word (e.g. a player sat down in a seat being removed meanwhile).
            self.message_user(request, f"Not saved: {refusal.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    @admin.action(description="Close the selected tables (after the current round)", permissions=["change"])
    def close_tables(self, request, queryset):
        for table_id in queryset.values_list("pk", flat=True):
            operations.close_table(table_id=table_id)
        self.message_user(request, "Closed: players stand up when their round is over.")

    @admin.action(description="Open the selected tables (quarantined ones too)", permissions=["change"])
    def reopen_tables(self, request, queryset):
        for table_id in queryset.filter(is_open=False).values_list("pk", flat=True):
            operations.reopen_table(table_id=table_id)
        self.message_user(request, "Opened.")


class OpenTableBoundsForm(forms.ModelForm):
    class Meta:
        model = OpenTableBounds
        fields = ["min_bet", "max_bet"]

    def clean(self):
        cleaned = super().clean()
        low, high = cleaned.get("min_bet"), cleaned.get("max_bet")
        cap = services.table_max_bet_cap()
        if low is not None and low < 1:
            self.add_error("min_bet", "At least 1 chip.")
        if high is not None and high > cap:
            self.add_error("max_bet", f"The site-wide cap is {cap:,} chips.")
        if low is not None and high is not None and low > high:
            self.add_error("max_bet", "The highest maximum must be at least the lowest minimum.")
        return cleaned


@admin.register(OpenTableBounds)
class OpenTableBoundsAdmin(admin.ModelAdmin):
    """One row: the list page opens it (creating it from the settings' bounds the first time)."""

    form = OpenTableBoundsForm

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        low, high = services.open_table_bounds()
        bounds, _ = OpenTableBounds.objects.get_or_create(defaults={"min_bet": low, "max_bet": high})
        return redirect("admin:tables_opentablebounds_change", bounds.pk)


# --- read-only records --------------------------------------------------------------------------------------


class ReadOnlyAdmin(SecretsAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def replay_link(rnd: Round) -> str:
    """Link to the round's replay page (the history app's `round_replay`), if that page exists."""
    try:
        url = reverse("round_replay", args=[rnd.pk])
    except NoReverseMatch:
        return "—"
    return format_html('<a href="{}">replay</a>', url)


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "table", "number", "phase", "min_bet", "max_bet", "started_at", "settled_at"]
    list_display += ["voided", "replay"]
    list_filter = ["table", "voided", "phase", ("started_at", admin.DateFieldListFilter)]
    search_fields = ["table__name", "=number", "=id"]
    date_hierarchy = "started_at"
    list_select_related = ["table"]
    # The engine state holds the hole card of a round in play; staff see results instead.
    exclude = ["state"]
    secret_fields = ("state",)

    @admin.display(description="replay")
    def replay(self, rnd):
        return replay_link(rnd) if rnd.is_over else "—"


@admin.register(Shoe)
class ShoeAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "table", "seed_hash", "decks", "position", "created_at", "retired_at"]
    list_filter = ["table", ("retired_at", admin.EmptyFieldListFilter), "decks"]
    search_fields = ["seed_hash", "table__name"]
    date_hierarchy = "created_at"
    list_select_related = ["table"]
    # The server seed stays secret while the shoe is in play; `revealed_seed` shows it once retired.
    exclude = ["server_seed"]
    secret_fields = ("server_seed",)
    readonly_fields = ["revealed_seed"]


@admin.register(ActionLog)
class ActionLogAdmin(ReadOnlyAdmin):
    list_display = ["round", "seq", "user", "seat", "action", "version_after", "created_at"]
    list_filter = ["table"]
    search_fields = ["user__username", "=round__id"]


@admin.register(TableEvent)
class TableEventAdmin(ReadOnlyAdmin):
    list_display = ["table", "created_at", "kind", "text"]
    list_filter = ["kind", "table"]
    search_fields = ["text"]
    date_hierarchy = "created_at"
