"""The site's URLs: the admin, accounts, the lobby, and each registered game's own (`live.games.Game.urls`,
under its `url_prefix`)."""

from django.contrib import admin
from django.urls import include, path

from live import games

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("", include("lobby.urls")),
    *(path(game.url_prefix, include(game.urls)) for game in games.all_games()),
]
