"""Quarantine of a Durak table (`live.quarantine`, Durak's stop: `DurakActor.stop`): a table whose moves keep
failing outside the rules (here the action log's write, broken on purpose) is stopped after `FAILURES` in a
row: the game in play is voided and every human's stake refunded, nobody is rated, every seat is freed, the
table is closed and marked for staff with the reason. A single failure does not quarantine; refusals never
count."""

import pytest

from accounts.audit import audit_ledger
from cards.errors import Refused
from durak import actor as durak_actor
from durak import bot
from durak.models import DurakGame, DurakRating, DurakSeat, DurakTable
from durak.table import Act
from live import quarantine
from tests.durak.live.conftest import seat_and_start

pytestmark = pytest.mark.django_db


class Broken(RuntimeError):
    """The injected failure."""


@pytest.fixture(autouse=True)
def _fresh_counts():
    quarantine._failures.clear()
    yield
    quarantine._failures.clear()


@pytest.fixture
def broken_log(monkeypatch):
    def create(**fields):
        raise Broken("the action log's write broke")

    monkeypatch.setattr(durak_actor.DurakAction.objects, "create", create)


def the_move(actor, user) -> Act:
    state = actor.state or durak_actor.load(actor.key)
    seat = state.seat_of(user.pk).number
    action = bot.choose(state.game.state, seat)
    return Act(user.pk, {key: value for key, value in action.items() if key != "player"})


def to_act(actor, players):
    state = actor.state or durak_actor.load(actor.key)
    return players[state.to_act()]


def test_a_table_whose_moves_keep_failing_is_stopped_and_every_stake_refunded(
    open_durak, alice, bob, balance, broken_log
):
    table = open_durak(stake=300)
    actor = seat_and_start(table, alice, bob)
    players = {0: alice, 1: bob}
    assert (balance(alice), balance(bob)) == (9_700, 9_700)
    for _ in range(quarantine.FAILURES - 1):
        user = to_act(actor, players)
        with pytest.raises(Broken):
            actor.apply(the_move(actor, user))
    user = to_act(actor, players)
    with pytest.raises(quarantine.Quarantined) as refused:
        actor.apply(the_move(actor, user))
    assert refused.value.code == "table_closed"
    row = DurakTable.objects.get(pk=table.pk)
    assert row.status == "closed"
    assert row.quarantined_at is not None
    assert "Broken: the action log's write broke" in row.quarantine_reason
    game = DurakGame.objects.get()
    assert game.voided
    assert game.finished
    assert (balance(alice), balance(bob)) == (10_000, 10_000)
    assert not DurakSeat.objects.filter(table=table, user__isnull=False).exists()
    assert not DurakRating.objects.exists()
    assert audit_ledger().ok


def test_refusals_and_a_single_failure_do_not_quarantine(open_durak, alice, bob, monkeypatch):
    table = open_durak()
    actor = seat_and_start(table, alice, bob)
    for _ in range(quarantine.FAILURES + 1):
        with pytest.raises(Refused):
            actor.apply(Act(alice.pk, {"action": "attack", "card": "2s"}))
    real = durak_actor.DurakAction.objects.create
    calls = []

    def create_once_broken(**fields):
        calls.append(fields)
        if len(calls) == 1:
            raise Broken("once")
        return real(**fields)

    monkeypatch.setattr(durak_actor.DurakAction.objects, "create", create_once_broken)
    user = to_act(actor, {0: alice, 1: bob})
    with pytest.raises(Broken):
        actor.apply(the_move(actor, user))
    actor.apply(the_move(actor, user))
    assert quarantine._failures == {}
    assert DurakTable.objects.get(pk=table.pk).quarantined_at is None
