"""Two server processes serve one site: players connected to different processes sit at the same table and see
each other's actions, through PostgreSQL (the state) and Redis (the broadcasts)."""

import asyncio

import pytest

from accounts.audit import audit_ledger
from tests.scale.play import Crew
from tools.loadtest.fixtures import prepare

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def test_players_on_two_processes_play_together(servers):
    first, second = servers(), servers()
    fixture = prepare(run_id="xproc", tables=1, players=2)
    crew = Crew(fixture, [first.url, second.url])  # seat 1 on the first process, seat 2 on the second

    async def scenario():
        await crew.start()
        await crew.play_rounds(2, timeout=60)
        await crew.finish()

    asyncio.run(scenario())
    alice, bob = crew.bots
    assert crew.recorder.unexpected_errors == 0, crew.recorder.errors
    assert alice.url.startswith(first.ws(""))
    assert bob.url.startswith(second.ws(""))

    # Each saw the other sit down and bet, through the other process.
    names = {bot.seat: bot.states()[0]["you"]["username"] for bot in crew.bots}
    for me, other in ((alice, bob), (bob, alice)):
        other_seats = [state["table"]["seats"][other.seat - 1] for state in me.states()]
        assert any(seat["player"] == names[other.seat] for seat in other_seats)
        assert any(seat["bet"] == fixture.min_bet for seat in other_seats)

    # Both saw the same settled rounds: the same dealer cards and the same hands at both seats.
    def settled(bot):
        return {
            state["table"]["round_id"]: (
                state["table"]["dealer"]["cards"],
                [[hand["cards"] for hand in seat["hands"]] for seat in state["table"]["seats"]],
            )
            for state in bot.states()
            if state["table"]["phase"] == "settled" and state["table"]["dealer"]["cards"]
        }

    seen_by_alice, seen_by_bob = settled(alice), settled(bob)
    common = seen_by_alice.keys() & seen_by_bob.keys()
    assert len(common) >= 2
    for round_id in common:
        assert seen_by_alice[round_id] == seen_by_bob[round_id]
        dealer, hands = seen_by_alice[round_id]
        assert None not in dealer
        assert all(hands[0])
        assert all(hands[1])

    report = audit_ledger()
    assert report.ok, report.discrepancies
