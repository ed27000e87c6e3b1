"""Fixtures of the staff admin tests: the live-tables fixtures (`table`, `act`, `scripted_shoe`, ...), a
superuser's client, a table manager's client, and a record of broadcasts."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import Group

from live import fanout
from tests.blackjack.conftest import (  # noqa: F401  (fixtures)
    act,
    at,
    balance,
    carol,
    make_table,
    scripted_shoe,
    table,
)


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_user("root", is_staff=True, is_superuser=True)


@pytest.fixture
def admin_client(client, root):
    client.force_login(root)
    return client


def table_managers() -> Group:
    """The group the data migration made (made again by the same code after a transactional test's flush)."""
    migration = importlib.import_module("blackjack.migrations.0003_table_managers_group")
    if not Group.objects.filter(name=migration.GROUP).exists():
        migration.create_group(apps, None)
        importlib.import_module("blackjack.migrations.0004_open_table_bounds").let_table_managers_edit_bounds(
            apps, None
        )
    return Group.objects.get(name=migration.GROUP)


@pytest.fixture
def manager(django_user_model):
    user = django_user_model.objects.create_user("floor", is_staff=True)
    user.groups.add(table_managers())
    return user


@pytest.fixture
def manager_client(client, manager):
    client.force_login(manager)
    return client


@pytest.fixture
def sent(monkeypatch):
    """Every notice sent (group, message), in order."""
    messages = []

    def record(work, notice, lobby=False):
        if notice is not None:
            messages.append((fanout.group_of(notice["game"], notice["table"]), notice))
        if lobby:
            messages.append((fanout.LOBBY_GROUP, {"type": "lobby.changed"}))

    monkeypatch.setattr(fanout, "_on_loop", record)
    return messages
