"""`{% profile_sections player owner %}`: every game's section of a player's profile (`Game.profile`)."""

from django import template
from django.utils.safestring import mark_safe

from live import games

register = template.Library()


@register.simple_tag
def profile_sections(player, owner: bool = False) -> str:
    # Each section is rendered (and escaped) by its game's own template.
    return mark_safe("".join(game.profile(player, owner) for game in games.all_games() if game.profile))


@register.filter
def page_of(game: games.Game, kind: str) -> str | None:
    """The URL name of a game's page of this kind ("history", "leaderboard", "guide"; `Game.pages`)."""
    return getattr(game.pages, kind)
