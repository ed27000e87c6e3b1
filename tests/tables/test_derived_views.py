"""A change keeps its new version's shared view part derived from the previous version's and what the change
holds (`tables.viewmodel.keep_change_on_commit`), so the acting process does not read the version back. The
property that makes that safe: after every change of many random games the derived part equals the part a
fresh read builds, whatever happened before (actions, settlements, new rounds and shoes, clock expiries,
presence, chat, sits and leaves, staff edits, and chips moved at another table or by staff, which change a
seated player's balance without this table's version)."""

import contextlib
import json
import random
from collections import Counter
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import services as wallet
from tables import services, viewmodel
from tables.engine.rules import PRESETS
from tables.engine.strategy import basic_strategy
from tables.loadtest.bot import next_action
from tables.models import Table

# Transactions commit for real: the derived part is kept when the change's transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)

SHIPPED = [field.attname for field in Table._meta.concrete_fields if field.attname != "private_token"]


def assert_same_as_read(derived: viewmodel._Shared) -> None:
    read = viewmodel._build_shared(derived.table.pk)
    assert derived.table_json == read.table_json  # the bytes every JSON viewer is sent
    assert derived.view_table == read.view_table
    assert derived.seat_rows == read.seat_rows
    assert derived.balances == read.balances
    assert derived.turn == read.turn
    assert derived.last_chat == read.last_chat
    assert (derived.state and derived.state.to_dict()) == (read.state and read.state.to_dict())
    fields = [getattr(derived.table, name) for name in SHIPPED]
    assert fields == [getattr(read.table, name) for name in SHIPPED]
    # What other processes are sent, as they read it (PostgreSQL orders a JSON column's keys its own way).
    shipped, shipped_read = viewmodel._export(derived), viewmodel._export(read)
    assert {key: json.loads(text) for key, text in shipped.items()} == {
        key: json.loads(text) for key, text in shipped_read.items()
    }


class Games:
    """Players at two tables (two of them seated at both), driven by random steps."""

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

    def step(self) -> str:
        kind = self.rng.choices(self.KINDS, weights=[60, 6, 3, 4, 6, 6, 3, 2])[0]
        table_id = self.rng.choice(self.tables)
        user = self.rng.choice(self.players)
        # A random step may ask for the impossible: refused, it changes nothing.
        with contextlib.suppress(services.ActionRefused):
            getattr(self, kind)(table_id, user)
        return kind

    def view(self, table_id: int, user) -> dict:
        version = Table.objects.values_list("version", flat=True).get(pk=table_id)
        # As a consumer told of the version: the kept part when there is one (a derived one, mostly).
        return viewmodel.viewer_view(table_id=table_id, user=user, version=version).view

    def perform(self, table_id: int, user, action: dict) -> None:
        view = self.view(table_id, user)
        services.perform(table_id=table_id, user=user, action=action, expected_version=view["v"])

    def play(self, table_id: int, user) -> None:
        """The first of the players (in random order) who has something to do at the table does it."""
        for player in self.rng.sample(self.players, len(self.players)):
            view = self.view(table_id, player)
            for seat in view["you"]["seats"]:
                strategy = self.strategy[table_id]
                action = next_action(view, seat, strategy, min_bet=10, stopping=False, ordered=False)
                if action is not None:
                    version = view["v"]
                    services.perform(table_id=table_id, user=player, action=action, expected_version=version)
                    return

    def sit(self, table_id: int, user) -> None:
        seats = self.view(table_id, user)["table"]["seats"]
        free = [seat["seat"] for seat in seats if seat["player"] is None]
        if free:
            self.perform(table_id, user, {"action": "sit", "seat": self.rng.choice(free)})

    def leave(self, table_id: int, user) -> None:
        self.perform(table_id, user, {"action": "leave"})

    def chat(self, table_id: int, user) -> None:
        services.post_chat(table_id=table_id, user=user, text=f"line {self.rng.random():.6f}")

    def presence(self, table_id: int, user) -> None:
        services.note_presence(
            table_id=table_id,
            user=user,
            connected=self.rng.random() < 0.5,
            channel_name=f"test.{table_id}.{user.pk}.{self.rng.randrange(2)}",
        )

    def expire(self, table_id: int, user) -> None:
        self.clock += timedelta(seconds=self.rng.choice([5, 30, 120]))
        services.expire_due(now=self.clock)

    def staff_chips(self, table_id: int, user) -> None:
        wallet.adjust(user=user, amount=self.rng.choice([-50, 75]), staff=self.staff, reason="test")

    def staff_edit(self, table_id: int, user) -> None:
        services.update_table(table_id=table_id, max_bet=self.rng.choice([500, 400]))


@pytest.mark.parametrize("seed", range(4))
def test_a_derived_part_equals_a_fresh_read_after_every_change(
    seed, make_user, make_table, django_user_model, monkeypatch, seeded_shoes
):
    play_and_compare(seed, make_user, make_table, django_user_model, monkeypatch, seeded_shoes)


@pytest.mark.postgres
def test_a_derived_part_equals_a_fresh_read_on_postgresql(
    make_user, make_table, django_user_model, monkeypatch, seeded_shoes
):
    play_and_compare(7, make_user, make_table, django_user_model, monkeypatch, seeded_shoes)


def play_and_compare(seed, make_user, make_table, django_user_model, monkeypatch, seeded_shoes) -> None:
    compared = []
    keep = viewmodel._keep

    def keep_and_compare(shared, *, unless_chat_missing=False):
        keep(shared, unless_chat_missing=unless_chat_missing)
        if unless_chat_missing:  # derived, kept as its change commits: compare it with a read of now
            assert_same_as_read(shared)
            compared.append(shared.table.version)

    monkeypatch.setattr(viewmodel, "_keep", keep_and_compare)
    seeded_shoes(random.Random(f"shoes-{seed}"))
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    games = Games(random.Random(seed), make_user, make_table, staff)
    for player in games.players[:4]:
        games.sit(games.tables[0], player)
    for player in games.players[2:]:
        games.sit(games.tables[1], player)  # p2 and p3 play at both tables
    steps = Counter(games.step() for _ in range(400))
    # Not vacuous: most changes were derived and compared, over every kind of step.
    changes = sum(Table.objects.filter(pk__in=games.tables).values_list("version", flat=True))
    assert changes > 300, steps
    assert len(compared) > 0.8 * changes, (len(compared), changes, steps)
    assert all(steps[kind] for kind in Games.KINDS), steps


def test_the_acting_process_builds_the_views_of_its_change_without_a_query(table, alice, bob, act):
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    viewmodel.viewer_view(table_id=table.pk, user=alice)  # this process keeps the current version
    version = act(table, alice, "bet", amount=10)
    with CaptureQueriesContext(connection) as queries:
        for viewer in (alice, bob, AnonymousUser()):
            found = viewmodel.viewer_view(table_id=table.pk, user=viewer, version=version)
            assert found.version == version
    assert len(queries) == 0
    assert found.view["table"]["seats"][0]["bet"] == 10
    assert found.view["table"]["events"][-1]["text"] == "Alice bets 10 on seat 1."


def test_without_the_previous_version_kept_the_change_keeps_nothing(table, alice, act):
    act(table, alice, "sit", seat=1)
    viewmodel.forget_shared_views()
    version = act(table, alice, "bet", amount=10)
    assert viewmodel.cached_viewer_view(table_id=table.pk, user=alice, version=version) is None


def perform_uncommitted(table, user, name: str, **args) -> int:
    """`services.perform` inside the caller's transaction, without running what its commit would trigger
    (the `act` fixture runs that at once)."""
    version = Table.objects.values_list("version", flat=True).get(pk=table.pk)
    action = {"action": name, **args}
    return services.perform(table_id=table.pk, user=user, action=action, expected_version=version)


def test_a_change_rolled_back_keeps_nothing(table, alice, act):
    act(table, alice, "sit", seat=1)
    version = Table.objects.get(pk=table.pk).version
    viewmodel.viewer_view(table_id=table.pk, user=alice)

    class Undo(Exception):
        pass

    def bet_then_fail():
        with transaction.atomic():
            perform_uncommitted(table, alice, "bet", amount=10)
            raise Undo

    with pytest.raises(Undo):
        bet_then_fail()
    assert viewmodel.cached_viewer_view(table_id=table.pk, user=alice, version=version + 1) is None


def test_a_chat_line_posted_meanwhile_is_not_lost(table, alice, bob, act):
    act(table, alice, "sit", seat=1)
    viewmodel.viewer_view(table_id=table.pk, user=alice)
    line = services.post_chat(table_id=table.pk, user=bob, text="good luck")
    version = act(table, alice, "bet", amount=10)
    view = viewmodel.viewer_view(table_id=table.pk, user=alice, version=version).view
    assert [entry["id"] for entry in view["table"]["chat"]] == [line.pk]


def test_a_chat_line_heard_of_while_the_change_runs_keeps_its_part_out(table, alice, act):
    act(table, alice, "sit", seat=1)
    viewmodel.viewer_view(table_id=table.pk, user=alice)
    with transaction.atomic():
        version = perform_uncommitted(table, alice, "bet", amount=10)
        # Another process's chat line is announced here before this change commits.
        viewmodel.forget_table_views(table.pk, chat_id=10**9)
    assert viewmodel.cached_viewer_view(table_id=table.pk, user=alice, version=version) is None


def test_a_part_adopted_from_another_process_is_derived_from_too(table, alice, bob, act):
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    version = Table.objects.get(pk=table.pk).version
    viewmodel.viewer_view(table_id=table.pk, user=alice)
    shipped = viewmodel.export_shared(table.pk, version)
    viewmodel.forget_shared_views()  # as another process, told of the version with its shared part
    assert viewmodel.adopt_shared(table.pk, version, shipped)
    version = act(table, alice, "bet", amount=10)
    derived = viewmodel._shared_views.get((table.pk, version))
    assert derived is not None
    assert_same_as_read(derived)
