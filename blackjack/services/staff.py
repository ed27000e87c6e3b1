"""Opening tables (staff, seed data, players from the lobby) and writing a staff's settings change in the
table owner's process (`change_settings`); staff's edits reach that owner through `blackjack.operations`."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from blackjack import flow
from blackjack.models import MAX_SEATS, MAX_WINDOW_SECONDS, OpenTableBounds, RulePreset, Seat, Table
from blackjack.services import floats, load, store
from cards.errors import Refused
from live import fanout

# Limits a player may choose when opening a table from the lobby (staff set any limits in the admin).
OPEN_TABLE_MIN_BET = getattr(settings, "TABLES_OPEN_MIN_BET", 1)
OPEN_TABLE_MAX_BET = getattr(settings, "TABLES_OPEN_MAX_BET", 10_000)

#: The decision windows' lengths (1 to MAX_WINDOW_SECONDS), and the table settings staff may change with
#: `update_table`.
WINDOW_SETTINGS = ("betting_seconds", "insurance_seconds", "turn_seconds", "ready_seconds")
TABLE_SETTINGS = (
    "name",
    "preset",
    "min_bet",
    "max_bet",
    "seats",
    "seats_per_player",
    *WINDOW_SETTINGS,
    "is_private",
)


def create_table(
    *, name: str, preset: RulePreset, min_bet: int, max_bet: int, created_by=None, **options
) -> Table:
    """Create a table with all its seats (staff, seed data, `open_table`); `options` are Table fields."""
    with transaction.atomic():
        table = Table.objects.create(
            name=name, preset=preset, min_bet=min_bet, max_bet=max_bet, created_by=created_by, **options
        )
        Seat.objects.bulk_create(Seat(table=table, number=n) for n in range(1, table.seats + 1))
        floats.fund(table)
        if not table.is_private:
            fanout.lobby_changed_on_commit()
    return table


#: Open tables a player (not staff) may have opened at once: every table is a lobby row for everyone.
MAX_OPEN_TABLES_PER_PLAYER = 3


def open_table_bounds() -> tuple[int, int]:
    """(lowest minimum, highest maximum) bet for tables players open: the `OpenTableBounds` row staff edit
    in the admin, else `OPEN_TABLE_MIN_BET` / `OPEN_TABLE_MAX_BET` (settings)."""
    row = OpenTableBounds.objects.values_list("min_bet", "max_bet").first()
    return row if row is not None else (OPEN_TABLE_MIN_BET, OPEN_TABLE_MAX_BET)


def open_table(*, user, name: str, preset, min_bet: int, max_bet: int, private: bool) -> Table:
    """A player opens a table from the lobby: a preset (instance, id or name), limits within
    `open_table_bounds()`, public or private (joined by its token link)."""
    if user is None or not user.is_authenticated:
        raise Refused("not_authenticated", "Log in to open a table.")
    if user.barred:
        raise Refused("suspended", "Your account is suspended or closed: you cannot open a table.")
    name = name.strip() if isinstance(name, str) else ""
    if not 1 <= len(name) <= Table._meta.get_field("name").max_length:
        raise Refused("bad_message", "Give the table a name of 1 to 60 characters.")
    preset_row = _find_preset(preset)
    if preset_row is None:
        raise Refused("bad_message", f"Unknown rule preset {preset!r}.")
    for value in (min_bet, max_bet):
        if isinstance(value, bool) or not isinstance(value, int):
            raise Refused("bad_amount", "Bet limits are whole numbers of chips.")
    lowest, highest = open_table_bounds()
    if not lowest <= min_bet <= max_bet <= highest:
        raise Refused("bad_amount", f"Limits must satisfy {lowest} <= minimum <= maximum <= {highest:,}.")
    with transaction.atomic():
        _check_open_tables_cap(user)
        return create_table(
            name=name,
            preset=preset_row,
            min_bet=min_bet,
            max_bet=max_bet,
            created_by=user,
            is_private=bool(private),
        )


def _check_open_tables_cap(user) -> None:
    """Refuse a player who already has `MAX_OPEN_TABLES_PER_PLAYER` open tables (staff open any number). The
    user's row is locked first (PostgreSQL; SQLite's writers queue anyway), so two requests at once cannot
    both pass the count."""
    if user.is_staff:
        return
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    if Table.objects.filter(created_by=user, is_open=True).count() >= MAX_OPEN_TABLES_PER_PLAYER:
        raise Refused(
            "too_many_tables",
            f"You already have {MAX_OPEN_TABLES_PER_PLAYER} open tables, the most a player may open. "
            "Play at one of them, or ask staff to close one.",
        )


def table_max_bet_cap() -> int:
    """The site-wide ceiling of every table's maximum bet (`TABLE_MAX_BET_CAP`, default 100,000)."""
    return int(getattr(settings, "TABLE_MAX_BET_CAP", 100_000))


def change_settings(*, table_id: int, values: dict) -> int:
    """Write a settings change (`update_table`'s, in the owner's process); `preset` by id, instance or
    name."""
    unknown = sorted(set(values) - set(TABLE_SETTINGS))
    if unknown:
        raise Refused("bad_message", f"Not a table setting: {', '.join(unknown)}.")
    with transaction.atomic():
        loaded = load.begin(table_id, engine=False)
        table = loaded.table
        for name, value in values.items():
            if name == "preset":
                value = _find_preset(value)
                if value is None:
                    raise Refused("bad_message", "Unknown rule preset.")
            setattr(table, name, value)
        _check_table_settings(table)
        command = flow.ChangeSettings(settings=load.settings_of(table))
        return store.apply(loaded, store.decide(loaded, command))


def _check_table_settings(table: Table) -> None:
    cap = table_max_bet_cap()
    if not 1 <= table.min_bet <= table.max_bet <= cap:
        raise Refused("bad_amount", f"Limits must satisfy 1 <= minimum <= maximum <= {cap:,}.")
    if not 1 <= table.seats <= MAX_SEATS:
        raise Refused("bad_message", f"A table has 1 to {MAX_SEATS} seats.")
    if not 1 <= table.seats_per_player <= table.seats:
        raise Refused("bad_message", "Seats per player must be 1 to the number of seats.")
    for name in WINDOW_SETTINGS:
        if not 1 <= getattr(table, name) <= MAX_WINDOW_SECONDS:
            raise Refused("bad_message", f"A decision window lasts 1 to {MAX_WINDOW_SECONDS} seconds.")


def _find_preset(preset) -> RulePreset | None:
    if isinstance(preset, RulePreset):
        return preset
    if isinstance(preset, int) and not isinstance(preset, bool):
        return RulePreset.objects.filter(pk=preset).first()
    if isinstance(preset, str):
        return RulePreset.objects.filter(name=preset).first()
    return None
