"""A frame to a client that has just closed its connection is dropped, not a failure: Daphne's websocket
library raises `Disconnected` when the close has reached it but not yet the consumer, and a broadcast's view
sent in that moment used to end its handler with a logged traceback (seen at the end of load runs)."""

import logging

import pytest
from autobahn.exception import Disconnected

from blackjack.consumers import BlackjackConsumer
from durak.consumers import DurakConsumer
from lobby.consumers import LobbyConsumer

pytestmark = pytest.mark.asyncio


def consumer_whose_client_is(consumer_class, error: Exception | None):
    consumer = consumer_class()
    consumer.sent = []

    async def base_send(message):
        if error is not None:
            raise error
        consumer.sent.append(message)

    consumer.base_send = base_send
    return consumer


@pytest.mark.parametrize("consumer_class", [BlackjackConsumer, DurakConsumer, LobbyConsumer])
async def test_a_frame_to_a_client_that_just_left_is_dropped(consumer_class, caplog):
    gone = consumer_whose_client_is(consumer_class, Disconnected("Attempt to send on a closed protocol"))
    with caplog.at_level(logging.INFO):
        await gone.send(text_data='{"type": "state"}')
    assert not [record for record in caplog.records if record.levelno >= logging.INFO]

    here = consumer_whose_client_is(consumer_class, None)
    await here.send(text_data='{"type": "state"}')
    assert here.sent == [{"type": "websocket.send", "text": '{"type": "state"}'}]


async def test_other_send_failures_still_raise():
    broken = consumer_whose_client_is(BlackjackConsumer, RuntimeError("something else"))
    with pytest.raises(RuntimeError, match="something else"):
        await broken.send(text_data="{}")
