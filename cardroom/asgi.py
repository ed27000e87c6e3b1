"""ASGI entry point: the load balancer's health check (`GET /healthz`, answered before Django: `HealthCheck`),
HTTP through Django, at most `PAGE_CONCURRENCY` requests at once (`PageShare`: the rest of the database pool
is the live tables'), websockets through Channels (same origin only: scheme, host and port;
`cardroom.middleware.same_origin`)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardroom.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from cardroom.middleware import HealthCheck, PageShare, SameOriginValidator  # noqa: E402
from cardroom.routing import websocket_urlpatterns  # noqa: E402
from cardroom.serve import quiet_gc  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": HealthCheck(PageShare(django_asgi_app)),
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

from live import clock  # noqa: E402

clock.start()  # deadline enforcement in this server process (LIVE_TIMERS: off in the tests' own process)

# The cyclic garbage collector: what is loaded by now left out of its passes, and its passes rarer
# (`serve.quiet_gc`).
quiet_gc()
