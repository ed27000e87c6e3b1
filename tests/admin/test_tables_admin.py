"""Tables in the staff admin: validated limits, edits through `blackjack.services` (live lobby, next round
only), closing mid-round, and the list's live columns."""

import pytest
from django.urls import reverse

from accounts.audit import audit_ledger
from blackjack import operations
from blackjack.models import Phase, Round, Seat, Table
from cards.errors import Refused
from tests.blackjack.conftest import deal_cards, preset_row

pytestmark = pytest.mark.django_db


def settings_of(table: Table, **changes) -> dict:
    """The admin change form's POST data for `table`, with `changes`."""
    data = {
        "name": table.name,
        "preset": table.preset_id,
        "min_bet": table.min_bet,
        "max_bet": table.max_bet,
        "seats": table.seats,
        "seats_per_player": table.seats_per_player,
        "betting_seconds": table.betting_seconds,
        "insurance_seconds": table.insurance_seconds,
        "turn_seconds": table.turn_seconds,
        "ready_seconds": table.ready_seconds,
    }
    if table.is_private:
        data["is_private"] = "on"
    return data | changes


def change_url(table: Table) -> str:
    return reverse("admin:tables_table_change", args=[table.pk])


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"min_bet": 0}, "min_bet", "at least 1"),
        ({"min_bet": 600, "max_bet": 500}, "max_bet", "at least the minimum"),
        ({"max_bet": 2_000}, "max_bet", "site-wide cap of 1,000"),
        ({"seats": 8}, "seats", "1 to 7"),
        ({"seats": 0}, "seats", "1 to 7"),
        ({"seats": 3, "seats_per_player": 4}, "seats_per_player", "1 to the number of seats"),
        ({"turn_seconds": 0}, "turn_seconds", "From 1 to 600 seconds"),
        ({"turn_seconds": 601}, "turn_seconds", "From 1 to 600 seconds"),
        ({"ready_seconds": 10**12}, "ready_seconds", "From 1 to 600 seconds"),
    ],
)
def test_bad_settings_are_refused_with_a_message(admin_client, table, settings, changes, field, message):
    settings.TABLE_MAX_BET_CAP = 1_000
    response = admin_client.post(change_url(table), settings_of(table, **changes))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert message in " ".join(errors[field]), errors
    fresh = Table.objects.get(pk=table.pk)
    assert (fresh.min_bet, fresh.max_bet, fresh.seats, fresh.version) == (10, 500, 7, table.version)


def test_the_service_refuses_limits_above_the_cap(table, settings):
    settings.TABLE_MAX_BET_CAP = 1_000
    with pytest.raises(Refused) as refused:
        operations.update_table(table_id=table.pk, max_bet=1_001)
    assert refused.value.code == "bad_amount"
    with pytest.raises(Refused):
        operations.update_table(table_id=table.pk, min_bet=0)
    assert Table.objects.get(pk=table.pk).max_bet == 500


@pytest.mark.parametrize("name", ["betting_seconds", "insurance_seconds", "turn_seconds", "ready_seconds"])
def test_the_service_refuses_a_window_the_clock_could_not_keep(table, name):
    for seconds in (0, 601, 10**12):
        with pytest.raises(Refused) as refused:
            operations.update_table(table_id=table.pk, **{name: seconds})
        assert refused.value.code == "bad_message"
    assert getattr(Table.objects.get(pk=table.pk), name) == getattr(table, name)
    operations.update_table(table_id=table.pk, **{name: 600})
    assert getattr(Table.objects.get(pk=table.pk), name) == 600


def test_creating_a_table_makes_its_seats_and_tells_the_lobby(
    admin_client, root, sent, django_capture_on_commit_callbacks
):
    preset = preset_row("European")
    data = settings_of(Table(name="Pit 4", preset=preset, min_bet=25, max_bet=2_500, seats=5))
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("admin:tables_table_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    created = Table.objects.get(name="Pit 4")
    assert (created.min_bet, created.max_bet, created.preset, created.created_by) == (25, 2_500, preset, root)
    assert list(created.seat_set.values_list("number", flat=True)) == [1, 2, 3, 4, 5]
    assert ("lobby", {"type": "lobby.changed"}) in sent


def test_an_edit_goes_through_the_service_and_is_broadcast(
    admin_client, table, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        data = settings_of(table, min_bet=50, max_bet=5_000, seats=4)
        response = admin_client.post(change_url(table), data)
    assert response.status_code == 302
    fresh = Table.objects.get(pk=table.pk)
    assert (fresh.min_bet, fresh.max_bet, fresh.seats) == (50, 5_000, 4)
    assert fresh.version == table.version + 1
    assert list(fresh.seat_set.values_list("number", flat=True)) == [1, 2, 3, 4]
    notice = {"type": "live.changed", "game": "blackjack", "table": table.pk, "v": fresh.version}
    assert (f"blackjack-{table.pk}", notice) in sent
    assert ("lobby", {"type": "lobby.changed"}) in sent


def test_an_occupied_seat_cannot_be_removed(admin_client, table, alice, act):
    act(table, alice, "sit", seat=6)
    response = admin_client.post(change_url(table), settings_of(table, seats=5))
    assert "Seat 6 is occupied" in " ".join(response.context["adminform"].form.errors["seats"])
    with pytest.raises(Refused) as refused:
        operations.update_table(table_id=table.pk, seats=5)
    assert refused.value.code == "seat_taken"
    assert Table.objects.get(pk=table.pk).seats == 7


def _play_to_settlement(table, user, act, amount):
    act(table, user, "bet", amount=amount)
    act(table, user, "stand")
    assert Table.objects.get(pk=table.pk).phase == Phase.SETTLED


def test_new_limits_and_rules_apply_from_the_next_round(admin_client, table, alice, act, scripted_shoe):
    # alice 10+9 stands on 19, the dealer's 10+7 stands: every round ends after one decision.
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    first = Round.objects.get(table=table)
    assert (first.min_bet, first.max_bet) == (10, 500)

    # Mid-round (betting open), staff raise the limits and switch the table to the European preset.
    european = preset_row("European")
    response = admin_client.post(
        change_url(table), settings_of(table, min_bet=100, max_bet=1_000, preset=european.pk)
    )
    assert response.status_code == 302
    _play_to_settlement(table, alice, act, amount=50)  # below the new minimum: the round's own limits hold
    first.refresh_from_db()
    assert (first.min_bet, first.max_bet, first.rules["dealer_peek"]) == (10, 500, True)
    assert first.results["seats"][0]["stake"] == 50

    act(table, alice, "ready")
    second = Round.objects.get(table=table, number=2)
    assert (second.min_bet, second.max_bet, second.rules["dealer_peek"]) == (100, 1_000, False)
    with pytest.raises(Refused) as refused:
        act(table, alice, "bet", amount=50)
    assert refused.value.code == "bad_amount"
    act(table, alice, "bet", amount=100)
    assert audit_ledger().ok


def test_closing_mid_round_lets_the_round_finish_then_stands_everyone_up(
    admin_client, table, alice, bob, act, balance, scripted_shoe, sent, django_capture_on_commit_callbacks
):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)  # bob has not bet yet
    changelist = reverse("admin:tables_table_changelist")
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(changelist, {"action": "close_tables", "_selected_action": [table.pk]})
    assert response.status_code == 302
    assert ("lobby", {"type": "lobby.changed"}) in sent

    closed = Table.objects.get(pk=table.pk)
    assert not closed.is_open
    # bob had nothing in play: up at once; that closed the betting, so alice's hand was dealt.
    assert Seat.objects.get(table=table, number=2).user is None
    alice_seat = Seat.objects.get(table=table, number=1)
    assert (alice_seat.user, alice_seat.leaving_after_round) == (alice, True)
    assert closed.phase == Phase.PLAYING
    with pytest.raises(Refused) as refused:
        act(table, bob, "sit", seat=3)
    assert refused.value.code == "table_closed"

    act(table, alice, "stand")  # 19 against 17: the round is paid, then alice stands up
    closed.refresh_from_db()
    assert closed.phase == Phase.WAITING
    assert not Seat.objects.filter(table=table, user__isnull=False).exists()
    assert balance(alice) == 10_100
    assert Round.objects.get(table=table).results["seats"][0]["net"] == 100
    assert audit_ledger().ok

    admin_client.post(changelist, {"action": "reopen_tables", "_selected_action": [table.pk]})
    assert Table.objects.get(pk=table.pk).is_open
    act(table, bob, "sit", seat=3)


def test_the_list_shows_phase_players_and_rounds_played(admin_client, table, alice, act, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["Td", "7c"]))
    act(table, alice, "sit", seat=1)
    _play_to_settlement(table, alice, act, amount=20)
    act(table, alice, "ready")
    page = admin_client.get(reverse("admin:tables_table_changelist"))
    row = page.context["cl"].result_list.get(pk=table.pk)
    assert (row.seated, row.played, row.phase) == (1, 1, Phase.BETTING)
    assert "1 of 7" in page.text
    assert "Betting" in page.text


def test_tables_cannot_be_deleted_in_the_admin(admin_client, table):
    response = admin_client.post(reverse("admin:tables_table_delete", args=[table.pk]), {"post": "yes"})
    assert response.status_code == 403
    assert Table.objects.filter(pk=table.pk).exists()


def test_a_refusal_by_the_service_is_shown_and_nothing_is_saved(admin_client, table, alice, monkeypatch):
    # The form saw seat 6 free; a player sat there before the service locked the row.
    def sit_first(**values):
        Seat.objects.filter(table=table, number=6).update(user=alice)
        return real(**values)

    real = operations.update_table
    monkeypatch.setattr(operations, "update_table", sit_first)
    response = admin_client.post(change_url(table), settings_of(table, seats=5), follow=True)
    assert "Not saved: Seat 6 is occupied" in response.text
    assert Table.objects.get(pk=table.pk).seats == 7
