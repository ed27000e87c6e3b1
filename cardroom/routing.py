"""Websocket routes: the lobby and each registered game's table socket (`live.games.Game.socket`: HTML
fragments, or JSON with `?format=json`). Any other path is refused at the handshake (HTTP 403), not answered
with a server error."""

from channels.security.websocket import WebsocketDenier
from django.urls import path, re_path

from live import games
from lobby.consumers import LobbyConsumer

websocket_urlpatterns = [
    path("ws/lobby/", LobbyConsumer.as_asgi()),
    *(path(game.socket, game.consumer.as_asgi()) for game in games.all_games()),
    re_path(r"", WebsocketDenier.as_asgi()),
]
