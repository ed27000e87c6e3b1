from django.apps import AppConfig


class LobbyConfig(AppConfig):
    """The site's pages over every registered game: the lobby, the player's history across games, demo
    data."""

    name = "lobby"
    verbose_name = "Lobby"
