"""`{% durak_live %}`: every region of the live Durak table (`durak.rendering`) for the page's `view`, as the
websocket's messages render them."""

from django import template
from markupsafe import Markup

from durak import rendering

register = template.Library()


@register.simple_tag(takes_context=True)
def durak_live(context) -> Markup:
    return rendering.region("page", {"view": context["view"]})
