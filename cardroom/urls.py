"""The site's URLs: the admin, accounts, the lobby, and each registered game's own (`live.games.Game.urls`,
under its `url_prefix`)."""

from django.contrib import admin
from django.urls import include, path

from accounts import language
from live import games

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    # Django's language switch (`django.conf.urls.i18n`), which also stores the choice on the account.
    path("i18n/setlang/", language.set_language, name="set_language"),
    path("", include("lobby.urls")),
    *(path(game.url_prefix, include(game.urls)) for game in games.all_games()),
]
