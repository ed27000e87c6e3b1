"""History tests reuse the live-tables fixtures (users, tables, scripted shoes, `act`); adds `play_round`."""

import pytest

from tests.tables.conftest import *  # noqa: F403  (the live-tables fixtures)
from tests.tables.conftest import _fast_password_hashing  # noqa: F401


@pytest.fixture
def play_round(act):
    """`play_round(table, [(user, seat, bet), ...], moves)`: seat whoever is not seated yet, bet, then play
    `moves` [(user, action, args), ...] in order, and let the clock decide whatever is left (insurance
    declined, hands standing); returns the settled round."""
    from datetime import timedelta

    from django.utils import timezone

    from tables import services
    from tables.models import Phase, Seat, Table

    def play(table, bets, moves=()):
        for user, seat, _ in bets:
            if not Seat.objects.filter(table=table, number=seat, user=user).exists():
                act(table, user, "sit", seat=seat)
        current = Table.objects.get(pk=table.pk)
        if current.phase == Phase.SETTLED:
            for user in {user for user, _, _ in bets}:
                act(table, user, "ready")
        for user, seat, amount in bets:
            act(table, user, "bet", amount=amount, seat=seat)
        for user, name, args in moves:
            act(table, user, name, **args)
        for step in range(1, 30):
            current = Table.objects.get(pk=table.pk)
            if current.current_round.settled_at is not None:
                return current.current_round
            # Each window's deadline is set from the previous expiry's time: move the clock on every time.
            services.expire_due(now=timezone.now() + timedelta(hours=step))
        raise AssertionError("the round did not settle")

    return play
