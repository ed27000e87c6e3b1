"""The avatars a player can pick: SVG files drawn for this site, served from static/avatars/<key>.svg."""

from django.utils.translation import gettext_lazy as _

AVATAR_CHOICES = [
    ("spade", _("Spade")),
    ("heart", _("Heart")),
    ("diamond", _("Diamond")),
    ("club", _("Club")),
    ("crown", _("Crown")),
    ("star", _("Star")),
    ("moon", _("Moon")),
    ("chip", _("Chip")),
]
DEFAULT_AVATAR = "spade"


def avatar_static_path(key: str) -> str:
    return f"avatars/{key}.svg"
