"""History tests reuse the live-tables fixtures (users, tables, scripted shoes, `act`); adds `play_round`."""

import pytest

from tests.blackjack.conftest import *  # noqa: F403  (the live-tables fixtures)


@pytest.fixture
def play_round(act, django_capture_on_commit_callbacks):
    """`play_round(table, [(user, seat, bet), ...], moves)`: seat whoever is not seated yet, bet, then play
    `moves` [(user, action, args), ...] in order, and let the clock decide whatever is left (insurance
    declined, hands standing); returns the settled round."""
    from datetime import timedelta

    from django.utils import timezone

    from blackjack.models import Phase, Seat, Table
    from live import clock

    moment = [timezone.now()]

    def tick() -> None:
        """Run the table clock one hour later than its last run: every deadline set so far is due."""
        moment[0] = max(moment[0], timezone.now()) + timedelta(hours=1)
        with django_capture_on_commit_callbacks(execute=True):  # a settlement's history is recorded on commit
            clock.sweep(now=moment[0])

    def play(table, bets, moves=()):
        for user, seat, _ in bets:
            if not Seat.objects.filter(table=table, number=seat, user=user).exists():
                act(table, user, "sit", seat=seat)
        seated = Seat.objects.filter(table=table, user__isnull=False).select_related("user")
        for seat in seated:  # the ready check: the next round opens once everyone seated is ready
            if Table.objects.get(pk=table.pk).phase != Phase.SETTLED:
                break
            act(table, seat.user, "ready")
        for user, seat, amount in bets:
            act(table, user, "bet", amount=amount, seat=seat)
        for user, name, args in moves:
            act(table, user, name, **args)
        for _ in range(30):
            current = Table.objects.get(pk=table.pk)
            if current.current_round.settled_at is not None:
                return current.current_round
            tick()
        raise AssertionError("the round did not settle")

    return play
