"""Shared fixtures for the live-tables tests (SERVER, PROTOCOL and UI use them; keep them stable).

- `make_user(name)`: a user with a wallet of `STARTING_CHIPS` (the accounts signal opens it); `alice`, `bob`,
  `carol`, `dave` are ready-made.
- `make_table(preset="Vegas Strip", **fields)`: a table with its seats, through `services.create_table`
  (defaults: limits 10-500, 7 seats, 2 seats per player). `table` is one such table.
- `scripted_shoe(table, cards)`: every shoe of `table` starts with `cards` (then the rest of a normal
  shuffle). `deal_cards(*hands, dealer=[up, hole], then=[...])` writes a deal in the engine's deal order.
- `act(table, user, name, **args)`: `services.perform` with the table's current version, then what its commit
  triggers (broadcast, history); returns the new version.
- `balance(user)`: the user's chips now.
- `at(seconds)`: an aware datetime `seconds` from now, for `clock.sweep(now=...)`.
- `sockets_open(table, *users)`: each user has a socket open at the table, as this process's actor counts
  them: its first load finds them connected (for tests that act through the actor without a websocket).
"""

import contextlib
import random
import secrets
from collections import Counter
from datetime import timedelta
from unittest import mock

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import Wallet
from blackjack import actors, services
from blackjack.engine.cards import new_deck_order
from blackjack.engine.rules import PRESETS
from blackjack.models import RulePreset, Table
from live import process
from tests.conftest import PASSWORD  # noqa: F401  (the players' password, imported from here by tests)


@pytest.fixture
def carol(make_user):
    return make_user("carol")


@pytest.fixture
def dave(make_user):
    return make_user("dave")


def preset_row(name: str = "Vegas Strip", rules: dict | None = None) -> RulePreset:
    """The preset row of that name (created from `PRESETS`, or from `rules` for a custom one)."""
    data = rules if rules is not None else PRESETS[name].to_dict()
    row, _ = RulePreset.objects.get_or_create(name=name, defaults={"rules": data})
    return row


@pytest.fixture
def make_table(db):
    def make(preset: str = "Vegas Strip", *, rules: dict | None = None, **fields) -> Table:
        options = {"name": f"{preset} table", "min_bet": 10, "max_bet": 500} | fields
        return services.create_table(preset=preset_row(preset, rules), **options)

    return make


@pytest.fixture
def table(make_table):
    return make_table()


@contextlib.contextmanager
def round_trips():
    """Yields a list of the round trips to the database made in the block, each the list of the statements
    it sent: a statement sent on its own, or every statement of one psycopg pipeline (`storage.batch`).
    A transaction's BEGIN goes with its first statement; its COMMIT (not a statement here) is one more."""
    trips: list[list[str]] = []
    pipeline = psycopg.Connection.pipeline

    @contextlib.contextmanager
    def counted(self):
        trips.append([])
        with pipeline(self) as sent:
            yield sent

    def record(execute, sql, params, many, context):
        raw = context["connection"].connection
        if connection.vendor == "postgresql" and raw.pgconn.pipeline_status != psycopg.pq.PipelineStatus.OFF:
            trips[-1].append(sql)
        else:
            trips.append([sql])
        return execute(sql, params, many, context)

    with mock.patch.object(psycopg.Connection, "pipeline", counted), connection.execute_wrapper(record):
        yield trips


def deal_cards(*hands: list[str], dealer: list[str], then: list[str] = ()) -> list[str]:
    """The shoe front that deals `hands` (two cards each, one per betting seat in seat order) and the dealer's
    `dealer` cards (upcard, hole card) in the engine's deal order: first cards, upcard, second cards, hole;
    then the cards drawn afterwards (`then`, in the order they are drawn)."""
    front = [hand[0] for hand in hands] + [dealer[0]] + [hand[1] for hand in hands]
    return [*front, *dealer[1:], *then]


def _front_loaded(front: list[str], rest: list[str]) -> list[str]:
    left = Counter(rest)
    left.subtract(front)
    tail = []
    for card in rest:
        if left[card] > 0:
            left[card] -= 1
            tail.append(card)
    return [*front, *tail]


@pytest.fixture
def scripted_shoe(monkeypatch):
    """`scripted_shoe(table, cards)`: every shoe of the table deals `cards` first, then the rest of its real
    shuffle without those cards (so the shoe keeps its size). Applies to shoes opened later, too."""
    scripts: dict[int, list[str]] = {}
    real = services._shoe_order

    def shoe_order(shoe):
        order = real(shoe)
        front = scripts.get(shoe.table_id)
        return order if front is None else _front_loaded(front, order)

    monkeypatch.setattr(services, "_shoe_order", shoe_order)

    def script(table: Table, cards: list[str]) -> None:
        assert all(card in new_deck_order(1) for card in cards), cards
        scripts[table.pk] = list(cards)

    return script


@pytest.fixture
def seeded_shoes(monkeypatch):
    """`seeded_shoes(rng)`: for the rest of the test, the shoes' server seeds (a table draws its next one when
    it is created) and the client seeds of players who sit without their own come from `rng`, a
    `random.Random`, instead of the system's randomness: a test that plays random rounds replays exactly
    from its seed. Both are drawn with `secrets.token_hex`, which none of the site's libraries calls."""

    def seed(rng: random.Random) -> None:
        monkeypatch.setattr(
            secrets, "token_hex", lambda nbytes=32: f"{rng.getrandbits(8 * nbytes):0{2 * nbytes}x}"
        )

    return seed


@pytest.fixture
def act(django_capture_on_commit_callbacks):
    def perform(table: Table, user, name: str, **args) -> int:
        version = Table.objects.values_list("version", flat=True).get(pk=table.pk)
        # What follows a commit (the broadcast, the round's history) runs after the action, as in production;
        # a test inside one transaction would otherwise never see it.
        with django_capture_on_commit_callbacks(execute=True):
            return services.perform(
                table_id=table.pk, user=user, action={"action": name, **args}, expected_version=version
            )

    return perform


@pytest.fixture
def balance():
    def chips(user) -> int:
        return Wallet.objects.values_list("balance", flat=True).get(user=user)

    return chips


@pytest.fixture
def at():
    def moment(seconds: float):
        return timezone.now() + timedelta(seconds=seconds)

    return moment


def sockets_open(table: Table, *users) -> None:
    connections = actors.actor_for(table.pk).connections
    for user in users:
        connections.opened(user.pk, f"test-socket-{user.pk}", process.name())
