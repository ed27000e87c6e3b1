"""High card, played end to end on the site by protocol clients: its lobby section, its socket, fenced
commits with chips staked and paid, a take-over of its owner by another server, and its history page. The
servers run the site's settings with this app added (`tests.highcard.settings`); nothing outside this folder
knows the game."""

import asyncio
import time
import urllib.request

import pytest
from django.db import connection

from accounts.audit import audit_ledger
from accounts.models import Wallet
from cards.fairness import shuffled_cards
from live.forward import REPLY_SECONDS
from tests.blackjack.wsclient import SocketClient, session_cookie
from tests.highcard.flow import DECK, strength
from tests.highcard.models import HighCardRound, HighCardTable

pytestmark = pytest.mark.slow

SETTINGS = {"DJANGO_SETTINGS_MODULE": "tests.highcard.settings"}
#: Longer than a lease (`live.lease.LEASE_SECONDS`) and the owner's reply window together.
TAKE_OVER_SECONDS = 30


@pytest.fixture
def highcard_rows(transactional_db):
    """High card's tables in the test database (the test process has the site's settings, without the app)."""
    models = (HighCardTable, HighCardRound)
    with connection.schema_editor() as editor:
        for model in models:
            editor.create_model(model)
    yield
    with connection.schema_editor() as editor:
        for model in reversed(models):
            editor.delete_model(model)


def balance(user) -> int:
    return Wallet.objects.get(user=user).balance


async def dealt(dealer: SocketClient, watcher: SocketClient) -> dict:
    await dealer.act("deal")
    # An owner that does not answer is given up after `REPLY_SECONDS`: the refusal comes after that.
    state = await dealer.until_version(dealer.version + 1, timeout=3 * REPLY_SECONDS)
    await watcher.until_version(state["v"])
    return state


async def play_on(server, table_id: int, cookies: list[str], *, sit: bool) -> list[dict]:
    """Two players (logged in as `cookies` say) connect to `server`, sit if asked, and deal twice."""
    clients = []
    for number, cookie in enumerate(cookies):
        path = f"/ws/highcard/{table_id}/?format=json"
        client = SocketClient(f"player {number}", server.ws(path), cookie=cookie, origin=server.url)
        await client.connect()
        await client.next_of("state")
        clients.append(client)
    first, second = clients
    if sit:
        for client in clients:
            await client.until_version(max(other.version for other in clients))
            await client.act("sit")
            await client.until_version(client.version + 1)
        await first.until_version(second.version)
    rounds = [await dealt(first, second), await dealt(second, first)]
    for client in clients:
        await client.close()
    return rounds


def unless_unavailable(playing):
    """The rounds played, or None if the table's owner could not be reached."""
    try:
        return asyncio.run(playing)
    except AssertionError as refused:
        if "'unavailable'" not in str(refused):
            raise
        return None


async def lobby_rows(server) -> list[dict]:
    client = SocketClient("lobby", server.ws("/ws/lobby/?format=json"), origin=server.url)
    await client.connect()
    message = await client.next_of("lobby")
    await client.close()
    return message["highcard_tables"]


def test_high_card_plays_end_to_end_and_survives_its_owners_death(servers, highcard_rows, alice, bob):
    table = HighCardTable.objects.create(name="Proof", stake=25)
    chips = balance(alice) + balance(bob)
    cookies = [session_cookie(alice), session_cookie(bob)]
    first = servers(**SETTINGS)

    assert asyncio.run(lobby_rows(first)) == [{"id": table.pk, "name": "Proof", "stake": 25, "taken": 0}]
    with urllib.request.urlopen(first.url + "/") as page:
        assert 'id="highcard-tables"' in page.read().decode()

    before = asyncio.run(play_on(first, table.pk, cookies, sit=True))
    owner, epoch = HighCardTable.objects.values_list("owner", "epoch").get(pk=table.pk)
    assert f".{first.process.pid}." in owner
    assert asyncio.run(lobby_rows(first))[0]["taken"] == 2

    first.kill()  # no shutdown: its lease is left to run out
    second = servers(**SETTINGS)
    ends = time.monotonic() + TAKE_OVER_SECONDS
    # Its owner gone, the table is unreachable (nothing applied) until its lease lapses.
    while (after := unless_unavailable(play_on(second, table.pk, cookies, sit=False))) is None:
        assert time.monotonic() < ends, "the table was not taken over"
    taken = HighCardTable.objects.get(pk=table.pk)
    assert f".{second.process.pid}." in taken.owner
    assert taken.epoch > epoch  # the new owner's writes are fenced by its own epoch

    rounds = list(HighCardRound.objects.filter(table=table).order_by("id"))
    assert [r.version for r in rounds] == [state["v"] for state in before + after]
    for row, state in zip(rounds, before + after, strict=True):
        cards = shuffled_cards(DECK, server_seed=row.server_seed, client_seed=str(row.version - 1))
        assert [draw[2] for draw in row.draws] == cards[:2]  # the deal is the seed's
        best = max(row.draws, key=lambda draw: strength(draw[2]))
        assert row.winner_id == best[0] == state["table"]["winner"]
    assert balance(alice) + balance(bob) == chips  # what one lost the other won
    assert balance(alice) - 10_000 == 25 * sum(1 if r.winner_id == alice.pk else -1 for r in rounds)
    assert audit_ledger().ok

    with urllib.request.urlopen(f"{second.url}/highcard/history/{table.pk}/") as page:
        history = page.read().decode()
    assert all(row.server_seed in history for row in rounds)
    assert "Traceback" not in first.output() + second.output()
