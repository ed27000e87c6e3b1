"""No payload of a bot run over real websockets reveals a hidden card or the seed of a shoe in play.

Bots play through a real Daphne process; every text frame they receive is kept with the time it arrived and
checked against the database afterwards: the server seed of each shoe (and its first 16 characters, which
the event log prints at retirement) appears in no payload received before that shoe was retired, and while
the hole card is down the dealer's cards are exactly the upcard and null. CI plays `SCALE_SECRET_ROUNDS`
rounds (default 6); the long run is `SCALE_SECRET_ROUNDS=1000 pytest tests/scale/test_bot_secrets.py`.
"""

import asyncio
import json
import os

import pytest

from accounts.audit import audit_ledger
from blackjack.models import Shoe
from tests.scale.play import Crew
from tools.loadtest.fixtures import prepare

ROUNDS = int(os.environ.get("SCALE_SECRET_ROUNDS", "6"))
HOLE_DOWN = ("insurance", "playing")
SECRET_KEYS = {"server_seed", "seed", "order", "hole", "hole_card", "shoe_order"}


def _keys(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


@pytest.mark.slow
def test_no_payload_of_a_bot_run_reveals_a_secret(servers):
    server = servers()
    fixture = prepare(run_id="secrets", tables=2, players=3)
    crew = Crew(fixture, [server.url])

    async def scenario():
        await crew.start()
        await crew.play_rounds(ROUNDS, timeout=60 + ROUNDS * 2)
        await crew.finish()

    asyncio.run(scenario())
    assert crew.recorder.unexpected_errors == 0, crew.recorder.errors

    shoes = [
        (seed, retired.timestamp() if retired else float("inf"))
        for seed, retired in Shoe.objects.filter(table_id__in=fixture.table_ids).values_list(
            "server_seed", "retired_at"
        )
    ]
    assert shoes
    payloads = [payload for bot in crew.bots for payload in bot.raw]
    hole_down_states = 0
    for received_at, text in payloads:
        for seed, retired_at in shoes:
            if received_at < retired_at:
                assert seed not in text
                assert seed[:16] not in text
        message = json.loads(text)
        assert not SECRET_KEYS & set(_keys(message)), message
        if message["type"] == "state" and message["table"]["phase"] in HOLE_DOWN:
            hole_down_states += 1
            cards = message["table"]["dealer"]["cards"]
            assert len(cards) == 2, cards
            assert cards[0] is not None
            assert cards[1] is None
    assert hole_down_states >= ROUNDS  # the check above did look at the hands in play
    report = audit_ledger()
    assert report.ok, report.discrepancies
