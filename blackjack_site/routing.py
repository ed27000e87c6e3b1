"""Websocket routes: the live table (HTML fragments, or JSON with `?format=json`) and the lobby."""

from django.urls import path

from tables.consumers import LobbyConsumer, TableConsumer

websocket_urlpatterns = [
    path("ws/tables/<int:table_id>/", TableConsumer.as_asgi()),
    path("ws/lobby/", LobbyConsumer.as_asgi()),
]
