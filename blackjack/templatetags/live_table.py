"""`{% live_region "seats" %}`: a region of the live table (`blackjack.rendering`) where the table page puts
it, rendered from the page's `view` as the websocket's first message renders it."""

from django import template
from markupsafe import Markup

from blackjack import rendering

register = template.Library()


@register.simple_tag(takes_context=True)
def live_region(context, name: str) -> Markup:
    return rendering.region(name, {"view": context.get("view"), "user": context.get("user"), "error": None})
