"""A request that finds every database connection of its process busy is answered 503 with Retry-After and
a short page, not a 500 (issue 34, item 8: a burst of 100 concurrent GETs gave 20 HTTP 500s, PoolTimeout
after 10 s). The pool's timeout reaches a view as Django's OperationalError raised from the PoolTimeout."""

import asyncio
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from types import SimpleNamespace

import psycopg
import pytest
from django.db import OperationalError, connection, transaction
from django.db.utils import DatabaseErrorWrapper
from django.http import HttpResponse
from django.test import AsyncClient, Client
from django.urls import path
from psycopg_pool import PoolTimeout, TooManyRequests

from cardroom.middleware import PageShare


def as_django_raises_it(error: Exception) -> Exception:
    """`error` as Django's PostgreSQL backend hands it on: through its DatabaseErrorWrapper (psycopg's
    errors become Django's, raised from the original)."""
    backend = SimpleNamespace(Database=psycopg, errors_occurred=False)
    try:
        with DatabaseErrorWrapper(backend):
            raise error
    except Exception as wrapped:
        return wrapped
    raise AssertionError("not raised")


def raising(error: Exception):
    def view(request):
        raise error

    return view


urlpatterns = [
    path(
        "pool-timeout/",
        raising(as_django_raises_it(PoolTimeout("couldn't get a connection after 10.00 sec"))),
    ),
    path("pool-bare/", raising(PoolTimeout("couldn't get a connection after 10.00 sec"))),
    path(
        "pool-queue/",
        raising(as_django_raises_it(TooManyRequests("the pool has already 8 requests waiting"))),
    ),
    path("deadlock/", raising(OperationalError("deadlock detected"))),
    path("fine/", lambda request: HttpResponse("fine")),
]


@pytest.mark.urls(__name__)
@pytest.mark.parametrize("url", ["/pool-timeout/", "/pool-bare/", "/pool-queue/"])
def test_a_pool_that_has_no_connection_free_answers_503_with_retry_after(url):
    assert isinstance(as_django_raises_it(PoolTimeout("x")), OperationalError)  # what the backend raises
    response = Client().get(url)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "The server is busy" in response.content.decode()


@pytest.mark.urls(__name__)
@pytest.mark.asyncio
async def test_the_asynchronous_path_answers_503_too():
    response = await AsyncClient().get("/pool-timeout/")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"


@pytest.mark.urls(__name__)
def test_other_database_errors_are_still_server_errors():
    response = Client(raise_request_exception=False).get("/deadlock/")
    assert response.status_code == 500
    assert "Retry-After" not in response
    assert Client().get("/fine/").status_code == 200


@pytest.mark.postgres
def test_a_request_that_waits_past_the_pool_timeout_gets_503_from_a_real_server(servers):
    """One connection in the server's pool, held by a request blocked on a lock this test holds: the next
    request waits the pool's timeout (1 s) for its turn (the pages' share of the pool, `PageShare`) and is
    answered 503 without reaching a view; the first finishes once the lock goes."""
    server = servers(DB_POOL_MIN_SIZE="1", DB_POOL_MAX_SIZE="1", DB_POOL_TIMEOUT="1")
    url = f"{server.url}/durak/leaderboard/"

    def get() -> tuple[int, str | None]:
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return response.status, response.headers.get("Retry-After")
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Retry-After")

    locked, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("LOCK TABLE durak_durakrating IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(60)
        connection.close()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    assert locked.wait(30)
    try:
        with ThreadPoolExecutor(2) as threads:
            requests = [threads.submit(get)]  # takes the only connection and waits on the lock
            time.sleep(1.5)
            requests.append(threads.submit(get))
            done, _ = wait(requests, timeout=30, return_when=FIRST_COMPLETED)
            assert [future.result() for future in done] == [(503, "5")]  # the other still waits on the lock
            release.set()
            assert sorted(future.result(timeout=60) for future in requests) == [(200, None), (503, "5")]
    finally:
        release.set()
        holder.join()
    output = server.output()
    assert "1 pages at once: GET /durak/leaderboard/ answered 503" in output
    assert "Internal Server Error" not in output  # (the server's clock, short of connections too, may log)


# --- the pages' share of the pool (`cardroom.middleware.PageShare`) ---


class Held:
    """An ASGI app whose requests answer 200 once `go` is set; `inside` counts those being served."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.inside = 0

    async def __call__(self, scope, receive, send):
        self.inside += 1
        await self.go.wait()
        self.inside -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def request(app, scope_type: str = "http") -> dict:
    """Call `app` with a GET (or another scope) and return its response start (status, headers)."""
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    await app({"type": scope_type, "method": "GET", "path": "/"}, receive, send)
    return next((message for message in sent if message["type"] == "http.response.start"), {})


@pytest.mark.asyncio
async def test_pages_beyond_their_share_wait_then_get_503_and_never_reach_the_view():
    held = Held()
    share = PageShare(held, limit=2, wait=0.2)
    first = [asyncio.create_task(request(share)) for _ in range(2)]
    await asyncio.sleep(0.05)
    assert held.inside == 2
    late = await request(share)  # waited 0.2 s for a permit, then answered without the view
    assert late["status"] == 503
    assert (b"retry-after", b"5") in late["headers"]
    assert held.inside == 2
    held.go.set()
    assert [response["status"] for response in await asyncio.gather(*first)] == [200, 200]
    assert (await request(share))["status"] == 200  # the permits came back


@pytest.mark.asyncio
async def test_a_waiting_page_is_served_when_one_finishes():
    held = Held()
    share = PageShare(held, limit=1, wait=5)
    first = asyncio.create_task(request(share))
    waiting = asyncio.create_task(request(share))
    await asyncio.sleep(0.05)
    assert held.inside == 1
    held.go.set()
    assert [(await first)["status"], (await waiting)["status"]] == [200, 200]


@pytest.mark.asyncio
async def test_websockets_and_the_lifespan_are_not_counted():
    held = Held()
    share = PageShare(held, limit=1, wait=0.1)
    page = asyncio.create_task(request(share))
    await asyncio.sleep(0.05)
    socket = asyncio.create_task(request(share, "websocket"))
    await asyncio.sleep(0.2)
    assert held.inside == 2  # the socket went through while the only page permit was taken
    held.go.set()
    await asyncio.gather(page, socket)


def test_the_pages_share_is_the_pool_less_the_runtimes(settings):
    if connection.vendor == "postgresql":
        assert settings.PAGE_CONCURRENCY == settings.DB_POOL_MAX_SIZE - settings.DB_POOL_RUNTIME_SHARE >= 1
    else:
        assert settings.PAGE_CONCURRENCY is None  # SQLite: no pool to share
