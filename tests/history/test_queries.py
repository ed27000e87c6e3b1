"""Every history page runs a fixed number of queries, whatever the amount of data (no N+1)."""

import pytest
from django.urls import reverse

from blackjack.history.records import PlayerRound
from live import games
from tests.blackjack.conftest import PASSWORD

pytestmark = pytest.mark.django_db

# Queries every logged-in page makes before the view: the session, the user, the nav's wallet balance.
BASE = 3


@pytest.fixture
def many(make_table, make_user, alice, bob, play_round):
    """Rounds with several players, so a page that looped over rows would show it in its query count."""

    def build(count: int):
        table = make_table(name=f"Table {count}")
        others = [make_user(f"extra{count}-{n}") for n in range(3)]
        for _ in range(count):
            play_round(table, [(alice, 1, 10), (bob, 2, 10), *((u, n + 3, 10) for n, u in enumerate(others))])
        return table

    return build


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)


# Queries of each page after the BASE ones.
EXPECTED = {
    "leaderboard": 3,  # top 50, the viewer's value, how many are ahead
    "history": 3,  # the tables played (filter), the count, the page
    # accounts' profile (wallet, chips in play: one a game, entries) + blackjack's section (stats, balance
    # chart, mistakes) + Durak's (ratings, games played)
    "profile": 2 + len(list(games.all_games())) + 3 + 2,
    "public": 1 + 3 + 2,  # the player + the two games' sections
    "replay": 7,  # round+table+shoe, players, action log, previous and next round, own ledger and mistakes
}


def test_query_counts_do_not_grow_with_the_data(client, many, alice, django_assert_num_queries):
    def urls() -> dict[str, str]:
        latest = PlayerRound.objects.filter(user=alice).order_by("-settled_at").first()
        return {
            "leaderboard": reverse("blackjack_leaderboard") + "?board=all",
            "history": reverse("blackjack_history"),
            "profile": reverse("profile"),
            "public": reverse("player_profile", args=["alice"]),
            "replay": reverse("round_replay", args=[latest.round_id]),
        }

    login(client, alice)
    for rounds in (1, 3):
        many(rounds)
        for name, url in urls().items():
            with django_assert_num_queries(BASE + EXPECTED[name]):
                assert client.get(url).status_code == 200, name
    assert PlayerRound.objects.filter(user=alice).count() == 4


def test_every_leaderboard_runs_the_top_query_and_two_for_a_ranked_viewer(
    client, many, alice, django_assert_num_queries
):
    from blackjack.history.selectors import BOARDS, leaderboard

    many(2)
    login(client, alice)
    for key in BOARDS:
        # A viewer on the board costs two more queries (their value, then how many are ahead); a viewer not
        # on it (no 100 hands for the win rate, no win yet for the biggest win) one: their missing value.
        ranked = leaderboard(key=key, viewer=alice).own is not None
        with django_assert_num_queries(BASE + (3 if ranked else 2)):
            assert client.get(reverse("blackjack_leaderboard") + f"?board={key}").status_code == 200


def test_the_profile_section_runs_three_queries(rf, many, alice, django_assert_num_queries):
    from blackjack.history.views import profile_section

    many(2)
    with django_assert_num_queries(3):  # stats, the balance chart's ledger entries, costliest mistakes
        html = profile_section(alice, True)
    assert "Your balance after each chip movement" in html
    assert 'id="player-stats"' in html
