"""A NUL character in a request's path or query string is a bad request (400), not a server error: PostgreSQL
text cannot hold one, so a view looking such a value up failed there (SQLite let it through: "not found")."""

import pytest
from django.test import AsyncClient, Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/players/%00/",
        "/players/alice%00/",
        "/tables/join/%00/",
        "/history/?date_to=%00",
        "/?%00=1",
        "/admin/tables/table/?phase__exact=%00",
        "/admin/accounts/ledgerentry/?kind__exact=%00",
    ],
)
def test_a_nul_in_the_address_is_a_bad_request(django_user_model, url):
    staff = django_user_model.objects.create_user("root", is_staff=True, is_superuser=True)
    client = Client(raise_request_exception=False)
    client.force_login(staff)
    assert client.get(url).status_code == 400


def test_an_address_without_nul_is_served_as_before(django_user_model):
    django_user_model.objects.create_user("alice", display_name="Alice")
    client = Client(raise_request_exception=False)
    assert client.get("/players/alice/").status_code == 200
    assert client.get("/players/nobody/").status_code == 404
    assert client.get("/?page=2").status_code == 200


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_asynchronous_path_refuses_it_too():
    client = AsyncClient(raise_request_exception=False)
    assert (await client.get("/tables/join/%00/")).status_code == 400
    assert (await client.get("/tables/join/nothing/")).status_code == 404
