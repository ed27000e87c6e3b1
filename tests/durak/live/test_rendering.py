"""The live Durak table's HTML for one viewer (`durak.rendering`): the board and the seats, which every viewer
of a version sees alike (a seat but for its "you" mark), are rendered once a version, and each viewer's page
is byte for byte what the whole template renders for them alone."""

from dataclasses import replace

import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from durak import bot, rendering
from durak.consumers import DurakConsumer
from durak.table import PLAYING, Act, Ready
from durak.view import table_view
from tests.durak.live.conftest import seat_and_start
from tools.loadtest.page import Page

pytestmark = pytest.mark.django_db


@pytest.fixture
def players(alice, bob, make_user):
    return [alice, bob, make_user("carol", display_name="Carol"), make_user("dave", display_name="Dave")]


def consumer(user, *, json_format=False) -> DurakConsumer:
    viewer = DurakConsumer()
    viewer.user, viewer.json_format = user, json_format
    viewer.setup({})
    return viewer


def whole(table, user, error=None) -> str:
    """The viewer's page as the table page renders it: the whole template, nothing kept."""
    user_id = user.pk if user.is_authenticated else None
    return str(rendering.region("page", {"view": table_view(table, user_id), "error": error}))


def versions(actor, *, games: int):
    """The table after every command of `games` games of four players (bots' choices), and the ready between
    them; yields the actor's table, the object the fan-out hands every viewer."""
    played = 0
    yield actor.state
    while played < games:
        table = actor.state
        if table.status == PLAYING:
            seat = table.to_act()
            move = bot.choose(table.game.state, seat)
            actor.handle(Act(table.seats[seat].user_id, {k: v for k, v in move.items() if k != "player"}))
            played += actor.state.status != PLAYING
        else:
            waiting = next(s for s in table.seats if not s.is_ready)
            actor.handle(Ready(waiting.user_id, fresh_seed="ab" * 32, seed="c" * 64))
        yield actor.state


def test_every_viewer_gets_what_the_whole_template_renders_for_them(open_durak, players, monkeypatch):
    """Over two whole games of four players and the ready between them, each player and a spectator, in turn
    from one version, get exactly the whole template's page: no fragment kept for one viewer (a "you" mark,
    a hand) reaches another."""
    table = open_durak(seats=4)
    actor = seat_and_start(table, *players)
    viewers = [*players, AnonymousUser()]
    seen = set()
    for shared in versions(actor, games=2):
        moment = timezone.now()
        with monkeypatch.context() as frozen:  # the countdown's seconds are rendered for each viewer, now
            frozen.setattr(timezone, "now", lambda moment=moment: moment)
            for user in viewers:
                assert consumer(user).encode(shared) == whole(shared, user)
        game = shared.game
        seen.add((shared.status, bool(game and game.state.table), bool(game and game.last)))
    assert {("playing", True, True), ("playing", False, True), ("waiting", False, True)} <= seen
    error = {"code": "stale", "message": "Not now."}
    assert consumer(players[0]).encode(actor.state, error) == whole(actor.state, players[0], error)


def test_the_board_is_rendered_once_a_version_and_each_seat_once_a_variant(open_durak, players, monkeypatch):
    table = open_durak(seats=4)
    actor = seat_and_start(table, *players)
    rendered = []
    render = rendering.FRAGMENTS.render
    monkeypatch.setattr(
        rendering.FRAGMENTS, "render", lambda name, context: rendered.append(name) or render(name, context)
    )
    viewers = [consumer(user) for user in (*players, AnonymousUser())]
    for shared in list(versions(actor, games=1))[-3:]:
        rendered.clear()
        for viewer in viewers:
            viewer.encode(shared)
        assert rendered.count("board") == 1
        # each seat as its player sees it, and as the other three and the spectator do
        assert rendered.count("seat") == 2 * len(players)
        assert rendered.count("page") == len(viewers)  # the viewer's own regions


def test_a_table_read_again_is_not_taken_for_the_kept_one(open_durak, players):
    """The kept fragments belong to the table object: another of the same id and version (read again from
    the database, another test's table) gets its own."""
    table = open_durak(seats=4)
    actor = seat_and_start(table, *players)
    first = rendering.kept(actor.state)
    assert rendering.kept(actor.state) is first
    again = rendering.kept(actor.load())
    assert again is not first
    assert again.table.version == first.table.version
    assert rendering.kept(actor.state) is not first  # only the last asked for is kept


def test_the_kept_tables_are_bounded(open_durak, players, monkeypatch):
    monkeypatch.setattr(rendering, "KEPT_TABLES", 2)
    monkeypatch.setattr(rendering, "_kept", type(rendering._kept)())
    table = open_durak(seats=4)
    actor = seat_and_start(table, *players)
    for number in range(5):
        rendering.kept(replace(actor.state, id=1000 + number))
    assert list(rendering._kept) == [1003, 1004]


def test_a_page_put_together_from_the_changed_regions_is_the_whole_page(open_durak, players, monkeypatch):
    """Each player and a spectator follow two whole games on one connection each: a message carries only the
    regions that differ from what the page holds (an unchanged hand or board is not sent again), and the page
    put together from them, as htmx swaps them in by id, is the whole template's page every time."""
    table = open_durak(seats=4)
    actor = seat_and_start(table, *players)
    viewers = [(user, consumer(user), Page()) for user in (*players, AnonymousUser())]
    sent = whole_sent = 0
    for shared in versions(actor, games=2):
        moment = timezone.now()
        with monkeypatch.context() as frozen:
            frozen.setattr(timezone, "now", lambda moment=moment: moment)
            for user, connection, page in viewers:
                message = connection.encode(shared)
                page.apply(message)
                expected = Page()
                expected.apply(whole(shared, user))
                assert page.regions == expected.regions
                sent += len(message)
                whole_sent += len(whole(shared, user))
    assert sent < whole_sent * 0.85  # (0.80: the hands and controls of those not moving stay)
