"""Private tables, for every game. A private table is in no lobby; it is watched, and sat at, by its players,
by whoever opened it, and by whoever has its invitation link (`/…/join/<token>/`, each game's URL). Following
the link remembers the token in the browser's session for that table, and the table's page hands it on to
its socket (`?token=`)."""

import secrets

from live.models import LiveTable

SESSION_KEY = "private_tables"


def remember(request, *, game: str, table_id: int, token: str) -> None:
    """This browser was invited to the table (its link was followed)."""
    request.session[SESSION_KEY] = {**request.session.get(SESSION_KEY, {}), f"{game}:{table_id}": token}


def token_of(request, *, game: str, table_id: int) -> str | None:
    """The invitation token this browser holds for the table, if any."""
    return request.session.get(SESSION_KEY, {}).get(f"{game}:{table_id}")


def admits(table: LiveTable, *, user, token: str | None, seated: bool) -> bool:
    """Whether `user` may see the table: any public table; a private one if they hold a seat there, opened
    it, or bring its token."""
    if not table.is_private or seated:
        return True
    if user.is_authenticated and table.created_by_id == user.pk:
        return True
    return isinstance(token, str) and secrets.compare_digest(token.encode(), table.private_token.encode())
