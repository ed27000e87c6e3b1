"""Bounds for the tables players open from the lobby: one row staff edit in the admin, read by
`blackjack.services.open_table` and the lobby's form."""

import pytest
from django.urls import reverse

from blackjack import services
from blackjack.forms import OpenTableForm
from blackjack.models import OpenTableBounds, Table
from cards.errors import Refused
from tests.blackjack.conftest import preset_row

pytestmark = pytest.mark.django_db


def open_one(user, min_bet, max_bet):
    return services.open_table(
        user=user, name="Mine", preset=preset_row(), min_bet=min_bet, max_bet=max_bet, private=False
    )


def test_staff_widen_the_bounds_players_open_tables_within(admin_client, alice, settings):
    settings.TABLE_MAX_BET_CAP = 100_000
    with pytest.raises(Refused):
        open_one(alice, 10, 20_000)  # above the default 10,000
    listing = admin_client.get(reverse("admin:tables_opentablebounds_changelist"))
    bounds = OpenTableBounds.objects.get()
    assert listing.url == reverse("admin:tables_opentablebounds_change", args=[bounds.pk])
    assert (bounds.min_bet, bounds.max_bet) == (1, 10_000)

    url = reverse("admin:tables_opentablebounds_change", args=[bounds.pk])
    assert admin_client.post(url, {"min_bet": 5, "max_bet": 50_000}).status_code == 302
    assert services.open_table_bounds() == (5, 50_000)
    assert open_one(alice, 10, 20_000).max_bet == 20_000
    with pytest.raises(Refused) as refused:
        open_one(alice, 2, 100)
    assert "5 <= minimum" in refused.value.message

    form = OpenTableForm({"name": "x", "preset": preset_row().pk, "min_bet": 10, "max_bet": 40_000})
    assert form.is_valid(), form.errors
    assert 'max="50000"' in str(form["max_bet"])
    too_high = OpenTableForm({"name": "x", "preset": preset_row().pk, "min_bet": 10, "max_bet": 60_000})
    assert "max_bet" in too_high.errors


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"min_bet": 0, "max_bet": 10}, "min_bet"),
        ({"min_bet": 10, "max_bet": 5}, "max_bet"),
        ({"min_bet": 1, "max_bet": 200_000}, "max_bet"),
    ],
)
def test_bad_bounds_are_refused(admin_client, settings, data, field):
    settings.TABLE_MAX_BET_CAP = 100_000
    admin_client.get(reverse("admin:tables_opentablebounds_changelist"))
    bounds = OpenTableBounds.objects.get()
    response = admin_client.post(reverse("admin:tables_opentablebounds_change", args=[bounds.pk]), data)
    assert field in response.context["adminform"].form.errors
    assert services.open_table_bounds() == (1, 10_000)


def test_table_managers_edit_the_bounds(manager_client):
    response = manager_client.get(reverse("admin:tables_opentablebounds_changelist"), follow=True)
    assert response.status_code == 200
    assert 'name="max_bet"' in response.text
    assert not Table.objects.exists()
