"""The avatars a player can pick: SVG files drawn for this site, served from static/avatars/<key>.svg."""

AVATAR_CHOICES = [
    ("spade", "Spade"),
    ("heart", "Heart"),
    ("diamond", "Diamond"),
    ("club", "Club"),
    ("crown", "Crown"),
    ("star", "Star"),
    ("moon", "Moon"),
    ("chip", "Chip"),
]
DEFAULT_AVATAR = "spade"


def avatar_static_path(key: str) -> str:
    return f"avatars/{key}.svg"
