"""A new account stakes at most NEW_ACCOUNT_STAKE_LIMIT chips a Durak game until it is NEW_ACCOUNT_DAYS days
old or has finished NEW_ACCOUNT_GAMES games: it can neither open a table with a larger stake nor be dealt
into a game of one (issue 34: three games at a 10,000-stake table moved 30,000 chips to another account)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.audit import audit_ledger
from cards.errors import Refused
from durak import actor as durak_actor
from durak.models import DurakGame, DurakTable
from durak.table import Sit
from tests.durak.live.conftest import open_durak_table, ready_command, record_game, start_command

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.NEW_ACCOUNT_STAKE_LIMIT = 500
    settings.NEW_ACCOUNT_DAYS = 3
    settings.NEW_ACCOUNT_GAMES = 10


def joined_days_ago(user, days: float) -> None:
    type(user).objects.filter(pk=user.pk).update(date_joined=timezone.now() - timedelta(days=days))
    user.refresh_from_db()


def test_nobody_opens_a_table_at_a_stake_their_chips_cannot_cover(alice):
    joined_days_ago(alice, 30)  # past a new account's limit: only the chips count
    with pytest.raises(Refused) as refused:
        open_durak_table(alice, stake=10_001)
    assert refused.value.code == "insufficient_chips"
    assert refused.value.message == "Your 10,000 chips cannot cover a stake of 10,001."
    assert not DurakTable.objects.exists()
    assert open_durak_table(alice, stake=10_000).stake == 10_000


def test_a_new_account_cannot_open_a_table_above_its_limit(alice):
    with pytest.raises(Refused) as refused:
        open_durak_table(alice, stake=501)
    assert refused.value.code == "stake_limit"
    assert "at most 500 chips" in refused.value.message
    assert not DurakTable.objects.exists()
    assert open_durak_table(alice, stake=500).stake == 500  # up to the limit is fine


def test_the_limit_lifts_with_age_or_with_games_finished(alice, bob):
    joined_days_ago(alice, 3.01)
    assert open_durak_table(alice, stake=10_000).stake == 10_000
    table = open_durak_table(alice, stake=0)
    for _ in range(9):
        record_game(table, [bob, None], fool=1, rated=False)
    with pytest.raises(Refused, match="at most 500"):
        open_durak_table(bob, stake=1_000)
    record_game(table, [bob, None], fool=1, rated=False)  # the tenth finished game
    assert open_durak_table(bob, stake=1_000).stake == 1_000


def test_the_deal_is_refused_when_a_new_account_would_stake_above_its_limit(alice, bob, balance):
    joined_days_ago(alice, 30)  # an old account opens a 10,000-stake table; a fresh one sits down
    table = open_durak_table(alice, stake=10_000)
    actor = durak_actor.actor_for(table.pk)
    actor.handle(Sit(alice.pk, "Alice"))
    actor.handle(Sit(bob.pk, "Bob"))
    actor.handle(ready_command(bob))
    before = actor.state
    with pytest.raises(Refused) as refused:
        actor.handle(start_command(alice))
    assert refused.value.code == "stake_limit"
    assert "Bob" in refused.value.message
    assert actor.state is None  # a commit that failed drops the memory: the next command reads the table
    assert durak_actor.load(table.pk) == before  # rolled back: alice's stake too
    assert balance(alice) == balance(bob) == 10_000
    assert not DurakGame.objects.exists()
    assert audit_ledger().ok


def test_the_open_form_shows_the_refusal(client, alice):
    client.force_login(alice)
    form = {"name": "High", "variant": "podkidnoy", "attack": "all_sides", "limit": "six", "seats": 2}
    response = client.post(reverse("durak_open"), form | {"stake": 5_000, "turn_seconds": 30, "rated": "on"})
    assert response.status_code == 200
    assert "at most 500 chips a game until it is 3 days old" in response.content.decode()
    assert not DurakTable.objects.exists()
