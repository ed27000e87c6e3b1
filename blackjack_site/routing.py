"""Websocket routes. The table and lobby consumers register here."""

websocket_urlpatterns: list = []
