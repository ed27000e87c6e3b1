"""The history page (newest first, paginated, filtered), its CSV and JSON exports, and what it refuses."""

import csv
import datetime
import io
import json

import pytest
from django.urls import reverse

from blackjack.history.records import PlayerRound
from blackjack.models import Round
from tests.blackjack.conftest import PASSWORD

pytestmark = pytest.mark.django_db
UTC = datetime.UTC


@pytest.fixture
def rounds(make_table, alice, bob):
    """Rows as recording writes them: alice 30 rounds at two tables over 30 days, bob 2."""
    first, second = make_table(name="First"), make_table(name="Second")
    start = datetime.datetime(2026, 1, 1, 12, tzinfo=UTC)
    rows = []
    for n in range(30):
        table = first if n % 3 else second
        at = start + datetime.timedelta(days=n)
        rows.append(_row(table, alice, n + 1, at, net=(-1) ** n * (n + 1) * 10 if n % 5 else 0))
    rows.append(_row(first, bob, 100, start, net=5000))
    rows.append(_row(second, bob, 101, start, net=-70))
    return rows


def _row(table, user, number: int, at, net: int) -> PlayerRound:
    rnd = Round.objects.create(
        table=table,
        number=number,
        shoe=table.shoes.first() or table.shoes.create(server_seed="a" * 64, seed_hash="b" * 64, decks=6),
        start_position=0,
        state={},
        rules={},
        min_bet=10,
        max_bet=500,
        settled_at=at,
    )
    stake = 100
    return PlayerRound.objects.create(
        user=user,
        round=rnd,
        table=table,
        settled_at=at,
        seats=[1],
        stake=stake,
        returned=stake + net,
        net=net,
        result="win" if net > 0 else "lose" if net < 0 else "push",
        hands=1,
        summary="win" if net > 0 else "lose" if net < 0 else "push",
    )


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)


def test_history_needs_a_login(client):
    response = client.get(reverse("blackjack_history"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert client.get(reverse("blackjack_history_export", args=["csv"])).status_code == 302


def test_newest_first_and_paginated(client, rounds, alice):
    login(client, alice)
    page = client.get(reverse("blackjack_history")).context["page"]
    assert page.paginator.count == 30
    numbers = [row.round.number for row in page.object_list]
    assert numbers == list(range(30, 5, -1))  # 25 a page, newest first
    second = client.get(reverse("blackjack_history") + "?page=2").context["page"]
    assert [row.round.number for row in second.object_list] == [5, 4, 3, 2, 1]


def test_filters_by_table_result_and_utc_dates(client, rounds, alice):
    login(client, alice)
    second = rounds[0].table_id
    by_table = client.get(reverse("blackjack_history"), {"table": second}).context["page"]
    assert {row.table_id for row in by_table.object_list} == {second}
    assert by_table.paginator.count == 10
    wins = client.get(reverse("blackjack_history"), {"result": "win"}).context["page"]
    assert wins.paginator.count == sum(1 for r in rounds if r.user_id == alice.pk and r.net > 0)
    assert all(row.net > 0 for row in wins.object_list)
    dated = client.get(
        reverse("blackjack_history"), {"date_from": "2026-01-05", "date_to": "2026-01-07"}
    ).context["page"]
    assert [row.settled_at.date().isoformat() for row in dated.object_list] == [
        "2026-01-07",
        "2026-01-06",
        "2026-01-05",
    ]


def test_a_reversed_date_range_is_an_error_not_a_silent_filter(client, rounds, alice):
    login(client, alice)
    response = client.get(reverse("blackjack_history"), {"date_from": "2026-01-09", "date_to": "2026-01-01"})
    assert response.context["form"].errors
    assert "The first day must come before the last." in response.content.decode()


@pytest.mark.parametrize("name", ["history", "csv", "json"])
def test_the_first_and_last_days_there_are_filter_every_round(client, rounds, alice, name):
    """Date fields take 0001-01-01 to 9999-12-31; the last day has no next day to end the range at."""
    login(client, alice)
    query = {"date_from": "0001-01-01", "date_to": "9999-12-31"}
    if name == "history":
        response = client.get(reverse("blackjack_history"), query)
        assert response.status_code == 200
        assert response.context["page"].paginator.count == sum(1 for r in rounds if r.user_id == alice.pk)
    else:
        response = client.get(reverse("blackjack_history_export", args=[name]), query)
        assert response.status_code == 200
        body = response.getvalue().decode()
        assert all(f"{r.round_id}" in body for r in rounds if r.user_id == alice.pk)


def test_only_your_own_rounds_whatever_the_query(client, rounds, alice, bob):
    login(client, alice)
    bobs_table = rounds[-1].table_id
    for query in ({}, {"user": bob.pk}, {"table": bobs_table}):
        page = client.get(reverse("blackjack_history"), query).context["page"]
        assert {row.user_id for row in page.object_list} == {alice.pk}
    body = (
        client.get(reverse("blackjack_history_export", args=["json"]), {"user": bob.pk}).getvalue().decode()
    )
    assert "5000" not in body


def test_csv_export_follows_the_filters(client, rounds, alice):
    login(client, alice)
    response = client.get(reverse("blackjack_history_export", args=["csv"]), {"result": "lose"})
    assert response["Content-Type"].startswith("text/csv")
    assert 'attachment; filename="blackjack-history-alice-' in response["Content-Disposition"]
    table = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    expected = sorted(
        (r for r in rounds if r.user_id == alice.pk and r.net < 0), key=lambda r: -r.round.number
    )
    assert [int(row["round_id"]) for row in table] == [r.round_id for r in expected]
    assert {row["result"] for row in table} == {"lose"}
    assert table[0]["table"] == expected[0].table.name
    assert int(table[0]["net"]) == expected[0].net


def test_json_export_is_one_document_with_every_row(client, rounds, alice):
    login(client, alice)
    response = client.get(reverse("blackjack_history_export", args=["json"]))
    data = json.loads(response.getvalue())
    assert data["player"] == "alice"
    assert len(data["rounds"]) == 30
    first = data["rounds"][0]
    assert first["round_number"] == 30
    assert datetime.datetime.fromisoformat(first["settled_at"]) == datetime.datetime(
        2026, 1, 30, 12, tzinfo=UTC
    )
    assert set(first) >= {"stake", "returned", "net", "result", "hands", "decisions", "deviations", "ev_cost"}


def test_unknown_export_format_is_not_found(client, alice):
    login(client, alice)
    assert client.get(reverse("blackjack_history_export", args=["xml"])).status_code == 404


def test_a_formula_like_table_name_is_defused_in_csv(client, make_table, alice):
    table = make_table(name="=HYPERLINK(1)")
    _row(table, alice, 1, datetime.datetime(2026, 1, 1, tzinfo=UTC), net=10)
    login(client, alice)
    body = client.get(reverse("blackjack_history_export", args=["csv"])).getvalue().decode()
    assert "'=HYPERLINK(1)" in body
