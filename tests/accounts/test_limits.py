"""The stake limit of new accounts (`accounts.limits`): the one policy every game asks."""

from datetime import timedelta

import pytest

from accounts import limits

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.NEW_ACCOUNT_STAKE_LIMIT = 500
    settings.NEW_ACCOUNT_DAYS = 3
    settings.NEW_ACCOUNT_GAMES = 10


def test_a_young_account_with_few_games_is_limited(player):
    assert limits.stake_limit(user=player, games_played=lambda: 9) == 500
    assert limits.stake_limit(user=player, games_played=lambda: 10) is None


def test_an_old_account_is_not_limited_and_its_games_are_not_counted(player):
    later = player.date_joined + timedelta(days=3)

    def not_asked() -> int:
        raise AssertionError("an old account's games need no counting")

    assert limits.stake_limit(user=player, games_played=not_asked, now=later) is None
    assert limits.stake_limit(user=player, games_played=lambda: 0, now=later - timedelta(seconds=1)) == 500


def test_stakes_up_to_the_new_accounts_limit_need_no_look_up():
    assert limits.within_every_limit(500)
    assert not limits.within_every_limit(501)
    assert "500 chips a game until it is 3 days old or has finished 10 games" in limits.limit_reason()
