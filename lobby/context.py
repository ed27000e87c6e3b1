"""The registered games, for every page's menu and the tabs between the games' pages (`_game_tabs.html`)."""

from live import games


def site_games(request) -> dict:
    return {"site_games": list(games.all_games())}
