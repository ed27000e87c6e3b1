"""Private Durak tables (`live.private`, as blackjack's): in no lobby, seen by their players, their opener and
whoever follows the invitation link; the socket needs the same."""

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse

from durak.models import DurakTable
from lobby import sections
from tests.blackjack.wsclient import CommunicatorClient, session_cookie
from tests.durak.live.conftest import open_durak_table

pytestmark = pytest.mark.django_db


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def test_a_private_table_is_opened_from_the_form_and_is_in_no_lobby(alice, bob):
    form = {
        "name": "Friends only",
        "variant": "podkidnoy",
        "attack": "all_sides",
        "limit": "six",
        "seats": 3,
        "stake": 0,
        "rated": "",
        "turn_seconds": 30,
        "private": "on",
    }
    response = browser(alice).post(reverse("durak_open"), form)
    table = DurakTable.objects.get(name="Friends only")
    assert response.status_code == 302
    assert table.is_private
    public = open_durak_table(alice, name="Everyone")
    rows = sections.data(game=None, page=1)["durak_tables"]
    assert [row["id"] for row in rows] == [public.pk]
    assert f'data-durak-table="{table.pk}"' not in browser(bob).get(reverse("lobby")).content.decode()


def test_only_the_opener_players_and_the_invited_see_a_private_table(alice, bob, make_user):
    table = open_durak_table(alice, private=True)
    page = reverse("durak_table", args=[table.pk])
    opener = browser(alice).get(page)
    assert opener.status_code == 200
    invite = reverse("durak_join", args=[table.private_token])
    assert invite in opener.content.decode()  # the opener sees the link to hand out
    assert browser(bob).get(page).status_code == 404
    assert browser().get(page).status_code == 404
    assert browser(bob).get(reverse("durak_join", args=["not-the-token"])).status_code == 404

    invited = browser(bob)
    assert invited.get(invite).url == page
    shown = invited.get(page)
    assert shown.status_code == 200
    assert f"/ws/durak/{table.pk}/?token={table.private_token}" in shown.content.decode()
    assert (
        browser(make_user("carol")).get(page).status_code == 404
    )  # the link is the browser's, not the table's


def test_two_tables_have_different_tokens_and_a_public_table_is_seen_by_all(alice):
    first, second = open_durak_table(alice, private=True), open_durak_table(alice)
    assert first.private_token != second.private_token
    assert browser().get(reverse("durak_table", args=[second.pk])).status_code == 200


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_socket_of_a_private_table_needs_its_token(alice, bob):
    table = await database_sync_to_async(open_durak_table)(alice, private=True)
    cookie = await database_sync_to_async(session_cookie)(bob)
    refused = CommunicatorClient("bob", f"/ws/durak/{table.pk}/?format=json", cookie=cookie)
    assert not await refused.connect()
    wrong = CommunicatorClient("bob", f"/ws/durak/{table.pk}/?format=json&token=x", cookie=cookie)
    assert not await wrong.connect()
    path = f"/ws/durak/{table.pk}/?format=json&token={table.private_token}"
    invited = CommunicatorClient("bob", path, cookie=cookie)
    assert await invited.connect()
    assert (await invited.receive())["table"]["id"] == table.pk
    await invited.close()
    opener_cookie = await database_sync_to_async(session_cookie)(alice)
    opener = CommunicatorClient("alice", f"/ws/durak/{table.pk}/?format=json", cookie=opener_cookie)
    assert await opener.connect()
    await opener.close()


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_each_existing_table_its_own_token():
    before = [("durak", "0007_quarantine_and_voided_games")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("durak", "DurakTable")
    try:
        for name in ("one", "two", "three"):
            old.objects.create(name=name, seats=2)
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
        tokens = list(DurakTable.objects.values_list("private_token", flat=True))
        assert len(tokens) == 3
        assert len(set(tokens)) == 3
        assert all(len(token) >= 20 for token in tokens)
        assert not DurakTable.objects.filter(is_private=True).exists()
    finally:
        DurakTable.objects.all().delete()
