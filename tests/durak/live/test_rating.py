"""Ratings move only between players: bots carry none and are no opponents, so no number of wins against a
bot changes a rating, and a game of two players and a bot rates the players against each other alone. The
leaderboard lists only players who have met enough different opponents in rated games."""

import pytest

from durak import glicko, services
from durak.models import DurakGame, DurakRating
from tests.durak.live.conftest import play_out, record_game, seat_and_start

pytestmark = pytest.mark.django_db


def test_a_hundred_wins_against_a_bot_change_no_rating(alice):
    for _ in range(100):
        services.rate((alice.pk, None), 1, variant="podkidnoy")  # the bot is the fool every time
    assert not DurakRating.objects.filter(user=alice).exists()


def test_a_game_against_a_bot_at_a_rated_table_is_unrated(open_durak, alice):
    actor = seat_and_start(open_durak(rated=True), alice, bots=1)
    play_out(actor, {actor.state.seat_of(alice.pk).number: alice})
    game = DurakGame.objects.get()
    assert game.finished
    assert not game.rated
    assert not DurakRating.objects.exists()


def test_two_players_and_a_bot_are_rated_against_each_other_only(alice, bob):
    services.rate((alice.pk, bob.pk, None), 2, variant="podkidnoy")  # the bot is the fool: nobody compared
    ratings = {row.user_id: row for row in DurakRating.objects.all()}
    assert {ratings[alice.pk].rating, ratings[bob.pk].rating} == {1500.0}
    assert ratings[alice.pk].games == ratings[bob.pk].games == 1

    services.rate((alice.pk, bob.pk, None), 1, variant="podkidnoy")  # bob is the fool; alice beat him only
    alice_before, bob_before = (
        glicko.Rating(row.rating, row.deviation, row.volatility)
        for row in (ratings[alice.pk], ratings[bob.pk])
    )
    rows = {row.user_id: row for row in DurakRating.objects.all()}
    assert rows[alice.pk].rating == pytest.approx(glicko.update(alice_before, [(bob_before, 1.0)]).rating)
    assert rows[bob.pk].rating == pytest.approx(glicko.update(bob_before, [(alice_before, 0.0)]).rating)
    assert rows[alice.pk].rating > 1500 > rows[bob.pk].rating


def test_the_leaderboard_lists_only_players_who_met_enough_different_opponents(
    open_durak, make_user, alice, settings, django_assert_num_queries
):
    settings.DURAK_LEADERBOARD_MIN_OPPONENTS = 5
    table = open_durak()
    others = [make_user(name, display_name=name.capitalize()) for name in ("bob", "carol", "dave", "erin")]
    for _ in range(10):  # many wins, all against one account
        record_game(table, [alice, others[0]], fool=1)
    for other in others[1:]:
        record_game(table, [alice, other], fool=1)
    frank = make_user("frank", display_name="Frank")
    record_game(table, [alice, frank], fool=1, rated=False)  # an unrated game counts for nothing
    with django_assert_num_queries(1):
        assert services.leaderboard("podkidnoy") == []  # four different opponents: one short
    record_game(table, [alice, frank, None], fool=1)
    board = services.leaderboard("podkidnoy")
    assert [row.user for row in board] == [alice]
    assert services.leaderboard("perevodnoy") == []  # opponents are counted per variant
