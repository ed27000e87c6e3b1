"""Model rules the database enforces, preset validation, the shoe's secret, the append-only action log."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from blackjack.models import ActionLog, RulePreset, Seat, Shoe, Table
from storage.append_only import AppendOnlyError
from tests.blackjack.conftest import preset_row

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "fields",
    [
        {"min_bet": 0, "max_bet": 10},
        {"min_bet": 20, "max_bet": 10},
        {"seats": 0},
        {"seats": 8},
        {"seats": 3, "seats_per_player": 4},
        {"turn_seconds": 0},
    ],
)
def test_table_limits_are_database_constraints(fields):
    options = {"name": "t", "preset": preset_row(), "min_bet": 10, "max_bet": 500} | fields
    with pytest.raises(IntegrityError), transaction.atomic():
        Table.objects.create(**options)


def test_seat_numbers_are_unique_per_table(table):
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(table=table, number=1)


def test_preset_rules_are_validated_by_the_engine():
    preset = RulePreset(name="odd", rules={"decks": 9})
    with pytest.raises(ValidationError) as error:
        preset.full_clean()
    assert "rules" in error.value.message_dict
    preset = RulePreset(name="partial", rules={"decks": 2})
    preset.full_clean()
    assert preset.rules["decks"] == 2
    assert preset.rules["blackjack_payout"] == "3:2"  # completed with the defaults


def test_the_server_seed_is_revealed_only_once_the_shoe_is_retired(table):
    from django.utils import timezone

    shoe = Shoe.objects.create(
        table=table, server_seed="ab" * 32, seed_hash="cd" * 32, client_seed="x", decks=6
    )
    assert shoe.revealed_seed is None
    shoe.retired_at = timezone.now()
    assert shoe.revealed_seed == "ab" * 32


def test_the_action_log_is_append_only(table, alice, act):
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=10)
    entry = ActionLog.objects.first()
    assert entry.action == {"action": "bet", "seat": 1, "amount": 10}
    entry.action = {"action": "bet", "seat": 1, "amount": 500}
    with pytest.raises(AppendOnlyError):
        entry.save()
    with pytest.raises(AppendOnlyError):
        ActionLog.objects.update(seat=2)
    with pytest.raises(AppendOnlyError):
        ActionLog.objects.filter(pk=entry.pk).delete()
    with pytest.raises(AppendOnlyError):
        entry.delete()
    assert ActionLog.objects.filter(pk=entry.pk).exists()


def test_each_table_gets_a_distinct_private_token(make_table):
    first, second = make_table(), make_table()
    assert first.private_token != second.private_token
