"""Site-wide request checks that run before any view, the answer to a request that found the database's
connections all busy, the load balancer's health check, and the websocket handshake's Origin check."""

import asyncio
import logging
from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import BadRequest
from django.http import HttpResponse
from django.http.request import split_domain_port, validate_host
from django.template import loader
from django.utils.decorators import sync_and_async_middleware
from django.utils.deprecation import MiddlewareMixin
from psycopg_pool import PoolTimeout, TooManyRequests

logger = logging.getLogger(__name__)


def _check_no_nul(request) -> None:
    """A NUL character in the path or the query string is refused (400): PostgreSQL text cannot hold one,
    and a view that looked such a value up would fail with a server error. Forms refuse NUL in their fields
    themselves."""
    if "\x00" in request.path or any(
        "\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists()
    ):
        raise BadRequest("NUL characters are not allowed in a request's address.")


@sync_and_async_middleware
def refuse_nul(get_response):
    if iscoroutinefunction(get_response):

        async def middleware(request):
            _check_no_nul(request)
            return await get_response(request)

    else:

        def middleware(request):
            _check_no_nul(request)
            return get_response(request)

    return middleware


#: How long a client told the database is busy (503) is asked to wait before it tries again, in seconds.
BUSY_RETRY_AFTER_SECONDS = 5


def pool_exhausted(error: BaseException | None) -> bool:
    """Whether `error` is this process's database pool running out of connections: psycopg_pool's
    PoolTimeout (none came free within DB_POOL_TIMEOUT) or TooManyRequests (too many waiting), raised as it
    is or as the OperationalError Django's database wrapper raises from it (`DatabaseErrorWrapper`:
    `raise OperationalError(...) from error`)."""
    while error is not None:
        if isinstance(error, PoolTimeout | TooManyRequests):
            return True
        error = error.__cause__
    return False


class BusyDatabaseMiddleware(MiddlewareMixin):
    """A request that found every database connection of this process busy is answered 503 Service
    Unavailable with `Retry-After` and a short page, not a 500 with a traceback in the log: the server is
    overloaded, not broken, and a client or a load balancer may try again (a burst of 100 concurrent GETs on a
    process owning live Durak tables gave 20 such 500s). Views and their templates are covered (Django hands
    their exceptions to `process_exception`); the page is rendered without the request's context, which
    would read the database again."""

    def process_exception(self, request, exception):
        if not pool_exhausted(exception):
            return None
        logger.warning("no database connection free: %s %s answered 503", request.method, request.path)
        response = HttpResponse(loader.render_to_string("503.html"), status=503)
        response["Retry-After"] = str(BUSY_RETRY_AFTER_SECONDS)
        return response


class PageShare:
    """ASGI middleware: at most `PAGE_CONCURRENCY` HTTP requests of this process are served at once; the
    others wait their turn here, on the event loop, holding no thread and no database connection, for up to
    `DB_POOL_TIMEOUT` seconds, then get the busy page (503, Retry-After). The rest of the pool
    (`DB_POOL_RUNTIME_SHARE`) is left to the live tables, whose commands a burst of pages then never makes
    wait for a connection (a burst of 100 GETs had every connection busy and the tables' commands queued
    behind them). Websockets and the lifespan pass through."""

    def __init__(self, application, *, limit: int | None = None, wait: float | None = None) -> None:
        self.application = application
        self.limit = limit if limit is not None else settings.PAGE_CONCURRENCY
        self.wait = wait if wait is not None else settings.DB_POOL_TIMEOUT
        self._permits: asyncio.Semaphore | None = None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self.limit is None:
            return await self.application(scope, receive, send)
        if self._permits is None:  # made on the server's loop
            self._permits = asyncio.Semaphore(self.limit)
        try:
            await asyncio.wait_for(self._permits.acquire(), self.wait)
        except TimeoutError:
            logger.warning("%s pages at once: %s %s answered 503", self.limit, scope["method"], scope["path"])
            return await _busy(send)
        try:
            return await self.application(scope, receive, send)
        finally:
            self._permits.release()


#: The path the load balancer's health check asks (`HealthCheck`).
HEALTH_PATH = "/healthz"


class HealthCheck:
    """ASGI middleware: `GET /healthz` is answered 200 here, before Django, `PageShare` and the database. It
    tells a load balancer that this process is up and its event loop turns: a killed process refuses the
    connection and a paused or stuck one does not answer, and either is taken out of rotation. It says nothing
    about the database on purpose: an outage there is every process's alike, and the pages and sockets answer
    it themselves (503, `unavailable`); a balancer that took every process out would answer nothing at all.
    Nor does the check wait for a page permit: under a burst of pages `GET /` waited its turn, and a busy
    process would have been taken out."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != HEALTH_PATH:
            return await self.application(scope, receive, send)
        headers = [(b"content-type", b"text/plain"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"ok\n"})


async def _busy(send) -> None:
    body = loader.render_to_string("503.html").encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"retry-after", str(BUSY_RETRY_AFTER_SECONDS).encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(scheme: str, netloc: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a web origin, the port made explicit; None if it is not one."""
    if scheme not in _DEFAULT_PORTS or not netloc or "@" in netloc:
        return None
    host, port = split_domain_port(netloc)
    if not host or (port and not port.isdigit()):
        return None
    return scheme, host, int(port) if port else _DEFAULT_PORTS[scheme]


def _expected_scheme(scope, headers: dict[bytes, bytes]) -> str:
    """The scheme of the page that may open this websocket: the proxy's `X-Forwarded-Proto` behind a proxy
    (`BEHIND_PROXY`: Django's `SECURE_PROXY_SSL_HEADER`), else the socket's own (wss: https)."""
    if settings.SECURE_PROXY_SSL_HEADER:
        forwarded = headers.get(b"x-forwarded-proto", b"").decode("latin-1").strip().lower()
        if forwarded in _DEFAULT_PORTS:
            return forwarded
    return "https" if scope.get("scheme") == "wss" else "http"


def same_origin(scope) -> bool:
    """Whether a websocket handshake comes from a page of this site: its `Origin` has the scheme, host and
    port the request itself was made to (its `Host`, a host in `ALLOWED_HOSTS`), or is listed in
    `CSRF_TRUSTED_ORIGINS`. Channels' AllowedHostsOriginValidator compared the host alone, so a page on
    another port or over plain HTTP of an allowed host could open the site's sockets."""
    headers = dict(scope.get("headers", []))
    raw_origin = headers.get(b"origin", b"").decode("latin-1")
    parts = urlsplit(raw_origin)
    if parts.path or parts.query or parts.fragment:
        return False
    origin = _origin(parts.scheme.lower(), parts.netloc.lower())
    if origin is None:
        return False
    if raw_origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    requested = _origin(_expected_scheme(scope, headers), headers.get(b"host", b"").decode("latin-1").lower())
    return origin == requested and validate_host(origin[1], settings.ALLOWED_HOSTS)


class SameOriginValidator:
    """ASGI middleware: a websocket handshake from another origin (`same_origin`) is refused (HTTP 403)."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not same_origin(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
