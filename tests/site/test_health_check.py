"""The load balancer's health check (`cardroom.middleware.HealthCheck`): `GET /healthz` is answered 200 by the
ASGI application itself, before Django, the pages' share of the pool and the database; every other request
passes through."""

import pytest

from cardroom.middleware import HealthCheck


async def call(app, path: str, scope_type: str = "http") -> list[dict]:
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    scope = {"type": scope_type, "method": "GET", "path": path, "headers": []}
    await app(scope, receive, send)
    return sent


class Refuses:
    """An application that must not be reached."""

    async def __call__(self, scope, receive, send):
        raise AssertionError(f"{scope['path']} reached the application")


class Answers:
    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send):
        self.paths.append(scope["path"])


@pytest.mark.asyncio
async def test_healthz_is_answered_without_the_application():
    start, body = await call(HealthCheck(Refuses()), "/healthz")
    assert start["status"] == 200
    assert body["body"] == b"ok\n"


@pytest.mark.asyncio
async def test_every_other_request_passes_through():
    inner = Answers()
    check = HealthCheck(inner)
    await call(check, "/")
    await call(check, "/healthz/")
    await call(check, "/healthz", "websocket")
    assert inner.paths == ["/", "/healthz/", "/healthz"]


@pytest.mark.asyncio
async def test_the_sites_application_answers_it_without_a_host_or_the_database():
    """No `Host` header (HAProxy's check sends none) and no database access: no `django_db` mark here, so a
    query would fail the test."""
    from cardroom.asgi import application  # loaded as the test servers load it, once Django is set up

    start, _ = await call(application, "/healthz")
    assert start["status"] == 200
