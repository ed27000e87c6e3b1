"""A player whose socket is on a process that does not own the table plays through the owner: two Daphne
processes on PostgreSQL and Redis, the table's lease held by the first, the player's socket on the second.
Every command crosses the channel layer to the owner (`blackjack.remote`); when the owner stops answering the
player is told `unavailable`, and the command the owner applies once it is back is applied once: its retry
is refused as stale. A staff edit reaches the owner's actor as well."""

import asyncio
import json
import secrets
import signal
from datetime import timedelta

import pytest
from django.utils import timezone
from websockets.asyncio.client import connect

from accounts.audit import audit_ledger
from blackjack import operations
from blackjack.models import ActionLog, Table
from tests.scale.play import Crew
from tests.threads import in_a_thread
from tools.loadtest.fixtures import prepare

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


def in_play(state) -> bool:
    return state["table"]["phase"] == "playing"


def version_of(table_id: int) -> int:
    return Table.objects.values_list("version", flat=True).get(pk=table_id)


def test_a_player_on_a_non_owner_plays_through_the_owner_and_each_action_is_applied_once(servers):
    name = f"live.scale-owner-{secrets.token_hex(4)}"
    # No clock: every change of the table is a command of the player's, and nothing writes beside the owner.
    owner = servers(LIVE_PROCESS=name, LIVE_TIMERS="0")
    other = servers(LIVE_TIMERS="0")
    fixture = prepare(run_id="forward", tables=1, players=1)
    table_id = fixture.table_ids[0]
    Table.objects.filter(pk=table_id).update(
        owner=name, epoch=1, lease_until=timezone.now() + timedelta(hours=1)
    )
    crew = Crew(fixture, [other.url])
    (bot,) = crew.bots

    async def scenario():
        # The owner has served a socket: its receiver of forwarded commands starts with its first one.
        async with connect(owner.ws("/ws/lobby/?format=json"), origin=owner.url) as lobby:
            await lobby.recv()
        await crew.start()
        await crew.play_rounds(2, timeout=60)
        assert crew.recorder.unexpected_errors == 0, crew.recorder.errors
        await crew.hold_at(in_play, timeout=30, what="a deal")
        crew.hold(lambda state: True)  # the bot stays still while the test acts for it
        frame = json.dumps({"action": "stand", "v": bot.state["v"]})
        seen = len(bot.received)

        def errors():
            return [message for message in bot.received[seen:] if message.get("type") == "error"]

        owner.process.send_signal(signal.SIGSTOP)
        try:
            await bot.socket.send(frame)
            await crew.wait_for(lambda: errors(), 15, "the owner's silence")
            before = await in_a_thread(version_of, table_id)
        finally:
            owner.process.send_signal(signal.SIGCONT)
        # Back, the owner applies the command it had been sent: the round settles.
        await crew.wait_for(lambda: bot.state["table"]["phase"] == "settled", 15, "the stand applied")
        after = await in_a_thread(version_of, table_id)
        await bot.socket.send(frame)  # the client's retry of the same frame
        await crew.wait_for(lambda: len(errors()) == 2, 15, "the retry refused")
        provoked = dict(crew.recorder.errors)
        crew.hold(None)
        await crew.play_rounds(1, timeout=60)
        await crew.finish()
        assert crew.recorder.errors == provoked  # and none since
        return errors(), before, after

    (silence, retry), before, after = asyncio.run(scenario())
    assert silence["code"] == "unavailable"
    assert after > before
    assert retry["code"] == "stale_version"
    round_id = ActionLog.objects.get(table_id=table_id, version_after=before + 1).round_id
    actions = ActionLog.objects.filter(round_id=round_id).values_list("action", flat=True)
    assert [action["action"] for action in actions if action["action"] == "stand"] == ["stand"]
    assert crew.settled() >= 3

    # A staff edit from synchronous code (the admin's) goes to the owner's actor too, across Redis.
    closed = operations.close_table(table_id=table_id)
    assert Table.objects.values_list("version", "is_open").get(pk=table_id) == (closed, False)
    report = audit_ledger()
    assert report.ok, report.discrepancies
