"""The table page's choices that follow a player from browser to browser (the hint checkbox, auto-rebet,
sound): stored on the account (`User.preferences`), given to the page when it renders, changed with
`POST /accounts/preferences/` (a JSON object of the changed names, e.g. `{"sound": true}`). Visitors
without an account keep them in their browser only."""

from django.contrib.auth import get_user_model
from django.db import transaction

#: Every preference and its value for an account that never chose.
DEFAULTS = {"hint": False, "auto_rebet": False, "sound": False}


class PreferenceError(ValueError):
    """A change that names an unknown preference or gives a value that is not true or false."""


def preferences_of(user) -> dict[str, bool]:
    """The user's preferences, every name present (defaults filled in)."""
    stored = user.preferences if isinstance(user.preferences, dict) else {}
    return {name: stored.get(name, default) is True for name, default in DEFAULTS.items()}


def update_preferences(*, user, changes: object) -> dict[str, bool]:
    """Apply `changes` (name -> bool) to the user's stored preferences; all or nothing. Returns them all."""
    if not isinstance(changes, dict) or not changes:
        raise PreferenceError(f"Send a JSON object of preferences to change: {', '.join(DEFAULTS)}.")
    unknown = sorted(name for name in changes if name not in DEFAULTS)
    if unknown:
        raise PreferenceError(f"Unknown preference(s): {', '.join(unknown)}; known: {', '.join(DEFAULTS)}.")
    wrong = sorted(name for name, value in changes.items() if not isinstance(value, bool))
    if wrong:
        raise PreferenceError(f"{', '.join(wrong)}: the value must be true or false.")
    users = get_user_model().objects
    with transaction.atomic():
        stored = users.select_for_update().values_list("preferences", flat=True).get(pk=user.pk)
        merged = {**(stored if isinstance(stored, dict) else {}), **changes}
        users.filter(pk=user.pk).update(preferences=merged)
    user.preferences = merged
    return preferences_of(user)
