"""Websocket routes: the live table (HTML fragments, or JSON with `?format=json`) and the lobby. Any other
path is refused at the handshake (HTTP 403), not answered with a server error."""

from channels.security.websocket import WebsocketDenier
from django.urls import path, re_path

from blackjack.consumers import BlackjackConsumer, LobbyConsumer
from durak.consumers import DurakConsumer

websocket_urlpatterns = [
    path("ws/tables/<int:table_id>/", BlackjackConsumer.as_asgi()),
    path("ws/lobby/", LobbyConsumer.as_asgi()),
    path("ws/durak/<int:table_id>/", DurakConsumer.as_asgi()),
    re_path(r"", WebsocketDenier.as_asgi()),
]
