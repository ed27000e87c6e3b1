"""Site-wide request checks that run before any view, and the websocket handshake's Origin check."""

from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import BadRequest
from django.http.request import split_domain_port, validate_host
from django.utils.decorators import sync_and_async_middleware


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
