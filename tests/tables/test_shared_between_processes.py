"""With several server processes, the one that applies an action sends the version's shared part with its
announcement (`tables.viewmodel.export_shared`), and the others adopt it (`adopt_shared`) instead of reading
the table again: the views built from it are the ones a read would give, it holds no shoe order and no
private token, and a part that lacks a chat line the process has already heard of is not adopted."""

import asyncio
import json

import pytest
from channels.layers import channel_layers

from tables import broadcast, fanout, services
from tables.consumers import TableConsumer
from tables.models import ChatMessage, Table
from tables.rendering import live_html
from tables.viewmodel import (
    adopt_shared,
    cached_viewer_view,
    forget_shared_views,
    forget_table_views,
    viewer_view,
)
from tests.tables.conftest import deal_cards
from tests.tables.listener import Listener, two_processes
from tests.threads import in_a_thread

pytestmark = pytest.mark.django_db(transaction=True)


class RemoteLayer:
    """Stands for the Redis layer (any but the in-memory one): announcements go to the other processes."""


@pytest.fixture
def announcements(monkeypatch):
    """What this process announces to the other processes (no server loop: through `publish_elsewhere`)."""
    sent = []

    async def publish_elsewhere(group, message):
        sent.append((group, message))

    monkeypatch.setattr(broadcast, "get_channel_layer", RemoteLayer)
    monkeypatch.setattr(broadcast, "_loop", None)
    monkeypatch.setattr(fanout, "publish_elsewhere", publish_elsewhere)
    return sent


def table_announcement(announcements) -> dict:
    (message,) = [message for _group, message in announcements if message["type"] == "table.changed"]
    return message


def act_through_a_consumer(table, user, action: dict) -> int:
    """An action as the table consumer applies it: the actor's view built, then the version announced."""
    consumer = TableConsumer()
    consumer.table_id, consumer.user, consumer.json_format = table.pk, user, True
    version = Table.objects.values_list("version", flat=True).get(pk=table.pk)
    built, _text = consumer._perform({**action, "v": version})
    return built


@pytest.fixture
def in_play(table, alice, bob, carol, act, scripted_shoe):
    """alice and bob in a round with the dealer's hole card hidden; carol watches."""
    scripted_shoe(table, deal_cards(["Ts", "7h"], ["9c", "2d"], dealer=["6s", "Qd"]))
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    act(table, alice, "bet", amount=100)
    return table


def views(table, version, users) -> list[tuple[str, str]]:
    """Each user's view of `version` as JSON and as HTML, from what this process keeps."""
    built = []
    for user in users:
        found = cached_viewer_view(table_id=table.pk, user=user, version=version)
        built.append((found.json(), live_html(found, user=user)))
    return built


def test_the_other_processes_build_the_same_views_from_the_announcement_without_a_query(
    in_play, alice, bob, announcements, django_assert_num_queries
):
    table = in_play
    version = act_through_a_consumer(table, bob, {"action": "bet", "amount": 50})
    message = table_announcement(announcements)
    assert (f"table-{table.pk}", message) in announcements
    assert message["v"] == version
    assert message["table"] == table.pk
    shipped = message["shared"]
    assert set(shipped) == {"view", "rest"}
    # What a process that has read the table itself would show:
    forget_shared_views()
    read = [
        (found.json(), live_html(found, user=user))
        for user in (alice, bob)
        for found in [viewer_view(table_id=table.pk, user=user, version=version)]
    ]
    assert json.loads(read[0][0])["table"]["dealer"]["cards"] == ["6s", None]  # the hole card hidden

    forget_shared_views()  # another process: it has not built this version
    with django_assert_num_queries(0):
        assert adopt_shared(table.pk, version, shipped)
        adopted = views(table, version, (alice, bob))
    assert adopted == read


def test_the_shared_part_sent_holds_no_shoe_order_and_no_private_token(in_play, bob, announcements):
    table = in_play
    act_through_a_consumer(table, bob, {"action": "bet", "amount": 50})
    message = table_announcement(announcements)
    rest = json.loads(message["shared"]["rest"])
    assert rest["state"]["shoe"] == ""
    order = "".join(services._shoe_order(Table.objects.get(pk=table.pk).current_round.shoe))
    assert order[:40] not in message["shared"]["rest"] + message["shared"]["view"]
    assert table.private_token not in message["shared"]["rest"] + message["shared"]["view"]
    assert "Qd" not in message["shared"]["view"]  # the hole card is only in the engine state, between servers


def test_a_part_without_a_chat_line_heard_of_is_not_adopted(in_play, alice, bob, announcements):
    table = in_play
    version = act_through_a_consumer(table, bob, {"action": "bet", "amount": 50})
    message = table_announcement(announcements)
    forget_shared_views()
    line = ChatMessage.objects.create(table=table, user=alice, text="good luck")
    forget_table_views(table.pk, chat_id=line.pk)  # this process heard of the line before the announcement
    assert not adopt_shared(table.pk, version, message["shared"])
    assert cached_viewer_view(table_id=table.pk, user=alice, version=version) is None


def test_a_part_of_another_version_or_table_or_one_kept_already_is_not_adopted(in_play, bob, announcements):
    table = in_play
    version = act_through_a_consumer(table, bob, {"action": "bet", "amount": 50})
    message = table_announcement(announcements)
    assert not adopt_shared(table.pk, version, message["shared"])  # this process built it: kept already
    forget_shared_views()
    assert not adopt_shared(table.pk, version + 1, message["shared"])
    assert not adopt_shared(table.pk + 1, version, message["shared"])
    assert adopt_shared(table.pk, version, message["shared"])


@pytest.mark.asyncio
async def test_nothing_is_added_to_a_single_process_announcement(in_play, bob, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends.clear()
    listener = Listener()
    await fanout.join(f"table-{in_play.pk}", listener)
    broadcast.register_loop(asyncio.get_running_loop())
    try:
        version = await in_a_thread(act_through_a_consumer, in_play, bob, {"action": "bet", "amount": 50})
        message = await listener.receive()
    finally:
        await fanout.leave(f"table-{in_play.pk}", listener)
        channel_layers.backends.clear()
    assert message == {"type": "table.changed", "v": version, "table": in_play.pk}


def test_a_part_that_cannot_be_read_is_not_adopted_and_the_version_is_read_instead(
    in_play, alice, bob, announcements, caplog
):
    """A process of another release (a rolling deploy) may send a part of another shape."""
    table = in_play
    version = act_through_a_consumer(table, bob, {"action": "bet", "amount": 50})
    shipped = table_announcement(announcements)["shared"]
    rest = json.loads(shipped["rest"])
    forget_shared_views()
    for unreadable in (
        {"view": shipped["view"], "rest": json.dumps({**rest, "seats": [row[:-1] for row in rest["seats"]]})},
        {"view": shipped["view"], "rest": json.dumps({**rest, "state": {"phase": "playing"}})},
        {"view": shipped["view"], "rest": "{not json"},
        {"view": shipped["view"]},
    ):
        assert not adopt_shared(table.pk, version, unreadable)
        assert cached_viewer_view(table_id=table.pk, user=alice, version=version) is None
    assert "could not be read" in caplog.text
    assert viewer_view(table_id=table.pk, user=alice, version=version).version == version


@pytest.mark.redis
@pytest.mark.asyncio
async def test_the_shared_part_crosses_redis_intact(in_play, alice, bob, announcements):
    """Through the real layer from one process's relay to another's, then adopted there."""
    table = in_play
    version = await in_a_thread(act_through_a_consumer, table, bob, {"action": "bet", "amount": 50})
    message = table_announcement(announcements)
    theirs, group = Listener(), f"shared-test-{table.pk}"
    async with two_processes() as (first, second):
        await first.join(group, Listener())
        await second.join(group, theirs)
        await first.publish(group, message)
        received = await theirs.receive(timeout=5)
    assert received == message
    read = await in_a_thread(
        lambda: [viewer_view(table_id=table.pk, user=user, version=version).json() for user in (alice, bob)]
    )
    forget_shared_views()
    assert adopt_shared(table.pk, version, received["shared"])
    assert [
        cached_viewer_view(table_id=table.pk, user=user, version=version).json() for user in (alice, bob)
    ] == read
