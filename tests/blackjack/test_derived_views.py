"""The core property of the table actor and its views: after every command a table's actor applies, over
many random games, the state it holds equals the state recovered from the database, and the shared view part
it built from memory (`viewmodel.shared_from_memory`) equals the part a fresh read builds, and so does every
viewer's view, whatever happened before (actions, settlements, new rounds and shoes, sockets opening and
closing, and behind the actor's back through the services: clock expiries, chat, staff edits, chips moved at
another table or by staff)."""

import contextlib
import random
from collections import Counter
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import services as wallet
from blackjack import actors, operations, viewmodel
from blackjack.engine.rules import PRESETS
from blackjack.engine.strategy import basic_strategy
from blackjack.models import Table
from blackjack.services import load
from cards.errors import Refused
from live import chat, clock
from tests.blackjack.conftest import deal_cards, sockets_open
from tools.loadtest.bot import next_action

# Transactions commit for real, as the actor's do.
pytestmark = pytest.mark.django_db(transaction=True)


def comparable(state):
    """The state without the engine state of a round that is over (kept in memory from the command that ended
    it; not loaded from the database: nothing reads it any more)."""
    state = state.copy()
    if state.round is not None and state.round.is_over:
        state.round.engine = None
    return state


def assert_same_as_read(actor: actors.BlackjackActor, viewers) -> None:
    """The actor's state and views equal what the database gives now."""
    with transaction.atomic():
        assert comparable(actor.state.state) == load.begin(actor.key).state
    held, read = actor.view, viewmodel.read_shared(actor.key)
    assert held.version == read.version
    assert held.table_json == read.table_json  # the bytes every JSON viewer is sent
    assert held.view_table == read.view_table
    assert held.seat_rows == read.seat_rows
    assert held.balances == read.balances
    assert held.turn == read.turn
    assert (held.state and held.state.to_dict()) == (read.state and read.state.to_dict())
    for viewer in viewers:
        balance = viewmodel.own_balance(read, viewer)  # a viewer without a seat was told theirs
        assert (
            viewmodel.view_of(held, viewer, balance=balance).json()
            == viewmodel.view_of(read, viewer, balance=balance).json()
        )


class Games:
    """Players at two tables (two of them seated at both), driven by random steps: the players' actions
    through the tables' actors, everything else through the services."""

    KINDS = ("play", "sit", "leave", "chat", "presence", "expire", "staff_chips", "staff_edit")

    def __init__(self, rng: random.Random, make_user, make_table, staff) -> None:
        self.rng = rng
        self.staff = staff
        self.tables = [make_table().pk, make_table("Atlantic City").pk]
        self.players = [make_user(f"p{n}", display_name=f"Player {n}") for n in range(5)]
        self.strategy = {
            self.tables[0]: basic_strategy(PRESETS["Vegas Strip"]),
            self.tables[1]: basic_strategy(PRESETS["Atlantic City"]),
        }
        self.clock = timezone.now()
        self.compared = 0

    def step(self) -> str:
        kind = self.rng.choices(self.KINDS, weights=[60, 6, 3, 4, 6, 6, 3, 2])[0]
        table_id = self.rng.choice(self.tables)
        user = self.rng.choice(self.players)
        # A random step may ask for the impossible: refused, it changes nothing.
        with contextlib.suppress(Refused):
            getattr(self, kind)(table_id, user)
        return kind

    def view(self, table_id: int, user) -> dict:
        return viewmodel.build_table_view(table_id=table_id, user=user)

    def perform(self, table_id: int, user, action: dict, version: int) -> None:
        """The action through the table's actor, from the player's connection at the table (open before it
        acts, as a consumer's is); if it changed the table, compare."""
        actor = actors.actor_for(table_id)
        self.told(actor, actor.count_socket(user.pk, self.socket(table_id, user), connected=True))
        if actor.handle(actors.player_action(user, action, version)) is not None:
            assert_same_as_read(actor, [*self.players, AnonymousUser()])
            self.compared += 1

    def told(self, actor: actors.BlackjackActor, version: int | None) -> None:
        """A socket's opening or closing went to the table's owner: compare if it marked a seat."""
        if version is not None:
            assert_same_as_read(actor, [*self.players, AnonymousUser()])
            self.compared += 1

    def socket(self, table_id: int, user, number: int = 0) -> str:
        return f"test.{table_id}.{user.pk}.{number}"

    def play(self, table_id: int, user) -> None:
        """The first of the players (in random order) who has something to do at the table does it."""
        for player in self.rng.sample(self.players, len(self.players)):
            view = self.view(table_id, player)
            for seat in view["you"]["seats"]:
                strategy = self.strategy[table_id]
                action = next_action(view, seat, strategy, min_bet=10, stopping=False, ordered=False)
                if action is not None:
                    self.perform(table_id, player, action, view["v"])
                    return

    def sit(self, table_id: int, user) -> None:
        view = self.view(table_id, user)
        free = [seat["seat"] for seat in view["table"]["seats"] if seat["player"] is None]
        if free:
            self.perform(table_id, user, {"action": "sit", "seat": self.rng.choice(free)}, view["v"])

    def leave(self, table_id: int, user) -> None:
        self.perform(table_id, user, {"action": "leave"}, self.view(table_id, user)["v"])

    def chat(self, table_id: int, user) -> None:
        chat.post(game="blackjack", table_id=table_id, user=user, text=f"line {self.rng.random():.6f}")

    def presence(self, table_id: int, user) -> None:
        """One of two tabs of the player opens or closes."""
        actor = actors.actor_for(table_id)
        socket = self.socket(table_id, user, self.rng.randrange(2))
        self.told(actor, actor.count_socket(user.pk, socket, connected=self.rng.random() < 0.5))

    def expire(self, table_id: int, user) -> None:
        self.clock += timedelta(seconds=self.rng.choice([5, 30, 120]))
        clock.sweep(now=self.clock)

    def staff_chips(self, table_id: int, user) -> None:
        entry = wallet.adjust(user=user, amount=self.rng.choice([-50, 75]), staff=self.staff, reason="test")
        # The player's sockets are told (`balance_changed`), and their consumers tell the actors here.
        actors.balance_seen(user.pk, entry.balance_after)

    def staff_edit(self, table_id: int, user) -> None:
        operations.update_table(table_id=table_id, max_bet=self.rng.choice([500, 400]))


# One seed in `make test`, three more with the slow tests (about 20 s each).
@pytest.mark.parametrize("seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (1, 2, 3))])
def test_the_actors_state_and_views_equal_a_fresh_read_after_every_command(
    seed, make_user, make_table, django_user_model, seeded_shoes
):
    play_and_compare(seed, make_user, make_table, django_user_model, seeded_shoes)


@pytest.mark.postgres
def test_the_actors_state_and_views_equal_a_fresh_read_on_postgresql(
    make_user, make_table, django_user_model, seeded_shoes
):
    play_and_compare(7, make_user, make_table, django_user_model, seeded_shoes)


def play_and_compare(seed, make_user, make_table, django_user_model, seeded_shoes) -> None:
    seeded_shoes(random.Random(f"shoes-{seed}"))
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    games = Games(random.Random(seed), make_user, make_table, staff)
    for player in games.players[:4]:
        games.sit(games.tables[0], player)
    for player in games.players[2:]:
        games.sit(games.tables[1], player)  # p2 and p3 play at both tables
    steps = Counter(games.step() for _ in range(400))
    # Not vacuous: most changes were made by the actors and compared, over every kind of step.
    changes = sum(Table.objects.filter(pk__in=games.tables).values_list("version", flat=True))
    assert changes > 300, steps
    assert games.compared > 0.6 * changes, (games.compared, changes, steps)
    assert all(steps[kind] for kind in Games.KINDS), steps


def test_the_actor_builds_the_views_of_its_change_without_a_query(table, alice, bob, act, scripted_shoe):
    # Cards that leave the round in play once both have bet: a blackjack dealt at random settled the round in
    # the second bet, whose history is then recorded (read and written) after the commit.
    scripted_shoe(table, deal_cards(["Ts", "7h"], ["9s", "8h"], dealer=["9c", "7d"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    sockets_open(table, alice, bob)
    actor = actors.actor_for(table.pk)
    version = Table.objects.values_list("version", flat=True).get(pk=table.pk)
    actor.handle(actors.player_action(alice, {"action": "bet", "amount": 10}, version))  # loads, reads memory
    version += 1
    with CaptureQueriesContext(connection) as queries:
        actor.handle(actors.player_action(bob, {"action": "bet", "amount": 20}, version))
    # The write only: the fence with the wallet's statements and the rows, and the transaction's edges.
    assert not [query for query in queries if query["sql"].lstrip().upper().startswith("SELECT")], queries
    shared = actor.view
    assert shared.version == version + 1
    for viewer in (alice, bob, AnonymousUser()):
        with CaptureQueriesContext(connection) as queries:
            found = viewmodel.view_of(shared, viewer)
        assert len(queries) == 0
        assert found.version == shared.version
    assert shared.view_table["seats"][1]["bet"] == 20
    assert "Bob bets 20 on seat 2." in [event["text"] for event in shared.view_table["events"]]
    assert shared.balances[bob.pk] == 10_000 - 20
