"""ASGI entry point: HTTP through Django, websockets through Channels (same-origin only)."""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blackjack_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from blackjack_site.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

from tables import clock  # noqa: E402

clock.start()  # deadline enforcement in this server process (off under pytest and with TABLE_CLOCK=0)

# What is loaded by now lives as long as the process: the cyclic garbage collector's full passes skip it from
# here on. Such a pass stops the whole process, for as long as it takes to walk every object it tracks: with
# 100 tables x 5 players on two processes, 120-150 ms of CPU each, and 40-50 ms once Django, Channels and the
# rest are left out of it (measured with a `gc.callbacks` hook), and every action under way waits it out.
gc.collect()
gc.freeze()
