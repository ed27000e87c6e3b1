"""The lobby's sections: one a registered game (`live.games.Game.lobby`), each rendered by the game's own
template, for the page and for every live update alike (`lobby.consumers`)."""

from typing import Any

from django.template.loader import render_to_string

from live import games


def chosen(value: str | None) -> str | None:
    """The game a lobby query asks for (`?game=<name>`); None (every game) otherwise."""
    names = {game.name for game in games.all_games()}
    return value if value in names else None


def shown(game: str | None) -> list[games.Game]:
    """The games the lobby shows: the one chosen, or every game."""
    return [found for found in games.all_games() if game is None or found.name == game]


def html(*, game: str | None, page: int, user) -> str:
    """Every shown game's section, each one out-of-band element of the game's own template."""
    parts = []
    for found in shown(game):
        context = {"section": found.lobby.rows(page), "user": user}
        parts.append(render_to_string(found.lobby.template, context))
    return "".join(parts)


def data(*, game: str | None, page: int) -> dict[str, Any]:
    """The JSON lobby message, `type` "lobby": every shown game's part of it (`Lobby.rows`)."""
    message: dict[str, Any] = {"type": "lobby"}
    for found in shown(game):
        message.update(found.lobby.rows(page))
    return message
