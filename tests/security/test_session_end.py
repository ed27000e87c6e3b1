"""An open websocket does not outlive the session that opened it: a password change, a log-out or a
suspension closes the user's sockets (`accounts.sockets`), and the sockets of other users and other sessions
stay open."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from accounts import services as accounts_services
from accounts.sockets import SESSION_ENDED
from tests.blackjack.wsclient import CommunicatorClient

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in(user) -> tuple[Client, str]:
    browser = Client()
    browser.force_login(user)
    return browser, browser.cookies["sessionid"].value


async def open_socket(name, path, cookie) -> CommunicatorClient:
    client = CommunicatorClient(name, path, cookie=cookie)
    assert await client.connect()
    await client.receive()
    return client


async def still_open(client: CommunicatorClient) -> bool:
    return await client.communicator.receive_nothing(0.3)


@pytest.fixture
def paths(table):
    return [f"/ws/tables/{table.pk}/?format=json", f"/ws/tables/{table.pk}/", "/ws/lobby/"]


@pytest.mark.asyncio
async def test_a_password_change_closes_every_socket_of_the_user(paths, alice, bob):
    browser, cookie = await database_sync_to_async(logged_in)(alice)
    _, other_session = await database_sync_to_async(logged_in)(alice)
    _, bob_cookie = await database_sync_to_async(logged_in)(bob)
    mine = [await open_socket(f"alice{n}", path, cookie) for n, path in enumerate(paths)]
    mine.append(await open_socket("alice-other-device", paths[0], other_session))
    bobs = await open_socket("bob", paths[0], bob_cookie)

    new = "Another-long-secret-71"
    form = {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    response = await database_sync_to_async(browser.post)(reverse("password_change"), form)
    assert response.status_code == 302

    for client in mine:
        assert await client.closed_with() == SESSION_ENDED
    assert await still_open(bobs)
    await bobs.close()


@pytest.mark.asyncio
async def test_logging_out_closes_that_sessions_sockets(paths, alice):
    browser, cookie = await database_sync_to_async(logged_in)(alice)
    _, other_session = await database_sync_to_async(logged_in)(alice)
    mine = [await open_socket(f"alice{n}", path, cookie) for n, path in enumerate(paths)]
    elsewhere = await open_socket("alice-other-device", paths[0], other_session)

    response = await database_sync_to_async(browser.post)(reverse("logout"))
    assert response.status_code == 302

    for client in mine:
        assert await client.closed_with() == SESSION_ENDED
    assert await still_open(elsewhere)  # her other device is still logged in
    await elsewhere.close()


@pytest.mark.asyncio
async def test_a_suspension_closes_the_players_sockets(paths, alice, make_user):
    staff = await database_sync_to_async(make_user)("pitboss", is_staff=True)
    _, cookie = await database_sync_to_async(logged_in)(alice)
    mine = [await open_socket(f"alice{n}", path, cookie) for n, path in enumerate(paths)]

    await database_sync_to_async(accounts_services.suspend_user)(user=alice, staff=staff)

    for client in mine:
        assert await client.closed_with() == SESSION_ENDED


@pytest.mark.redis
def test_a_password_change_closes_a_socket_held_by_another_process(servers, alice):
    """The socket is on a Daphne process; the password changes in this one: the close crosses Redis."""
    server = servers()
    browser, cookie = logged_in(alice)
    new = "Another-long-secret-72"
    form = {"old_password": PASSWORD, "new_password1": new, "new_password2": new}

    async def scenario() -> int:
        socket = await connect(
            server.ws("/ws/lobby/"), additional_headers={"Cookie": f"sessionid={cookie}"}, origin=server.url
        )
        await socket.recv()
        response = await asyncio.to_thread(browser.post, reverse("password_change"), form)
        assert response.status_code == 302
        try:
            while True:
                await asyncio.wait_for(socket.recv(), 10)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd is not None else 1006

    assert asyncio.run(scenario()) == SESSION_ENDED
