"""A hostile-frame fuzz run through the table consumer: FRAMES seeded random frames (malformed bytes and JSON,
wrong types, out-of-range and huge values, unknown actions and fields, oversized frames, invisible or control
characters in chat, stale versions and out-of-turn plays) from a seated player, on a JSON and an HTML
connection. Every frame gets one refusal, the server logs no error, and nothing changes: not the table, its
round, seats, chat, action log, ledger or balances.

In process (`WebsocketCommunicator`), with the per-connection rate limit lifted (it is tested on its own
elsewhere): the point is what the parser and the services do with what gets through. Seeded and
reproducible: `FUZZ_SEED` and `FUZZ_FRAMES` change the run.
"""

import asyncio
import json
import logging
import os
import random
import time

import pytest
from channels.db import database_sync_to_async

from accounts.models import LedgerEntry, Wallet
from blackjack.models import ActionLog, Round, Seat, Table
from blackjack.protocol import ACTIONS
from live import consumer as consumers
from live.models import ChatLine
from live.protocol import MAX_FRAME_BYTES
from tests.blackjack.wsclient import CommunicatorClient, session_cookie

FRAMES = int(os.environ.get("FUZZ_FRAMES", "25000"))  # 100,000 took 162 s of a CI machine's 2 cores
SEED = int(os.environ.get("FUZZ_SEED", "20261126"))
REFUSALS = {"bad_message", "bad_amount", "not_your_turn", "illegal_action", "stale_version", "seat_taken"}

NASTY_STRINGS = [
    "",
    " ",
    "\x00",
    "\u202e",
    "\u200b",
    "\ud800",
    "\uffff",
    "NaN",
    "-1",
    "1e400",
    "0x10",
    "\uff11",
    "\u0663",
    "true",
    "<script>",
    "' OR 1=1 --",
    "{{ 7*7 }}",
    "%s%s%n",
    "\\u0000",
    "\U0001d7d9",
    "\n",
    "\t1",
    "9" * 40,
    "a" * 300,
]
NASTY_NUMBERS = [0, -1, 1, 7, 8, 2**31, 2**63, 2**64, -(2**63) - 1, 10**12 + 1, 1.5, -0.0, 1e308, 10**400]
FIELDS = ["seat", "hand", "amount", "accept", "seed", "text", "v", "HEADERS", "action", "__proto__", "", "x"]


class HostileFrames:
    """Seeded generator of frames the server must refuse, whatever the state. Structurally valid actions
    carry a version from the future, which no action may have."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def value(self, depth: int = 0):
        pick = self.random.randrange(8 if depth < 2 else 5)
        if pick == 0:
            return self.random.choice(NASTY_STRINGS)
        if pick == 1:
            return self.random.choice(NASTY_NUMBERS)
        if pick == 2:
            return self.random.choice([None, True, False])
        if pick == 3:
            return "".join(
                chr(self.random.randrange(0x20, 0x3000)) for _ in range(self.random.randrange(1, 12))
            )
        if pick == 4:
            return self.random.randrange(-(2**70), 2**70)
        if pick == 5:
            return [self.value(depth + 1) for _ in range(self.random.randrange(4))]
        return {self.random.choice(FIELDS): self.value(depth + 1) for _ in range(self.random.randrange(4))}

    def frame(self, version: int) -> str | bytes:
        kind = self.random.randrange(10)
        r = self.random
        if kind == 0:  # bytes: mostly not UTF-8
            return bytes(r.randrange(256) for _ in range(r.randrange(1, 64)))
        if kind == 1:  # not JSON, or not an object
            return r.choice(
                [
                    "{",
                    "[]",
                    "null",
                    "1",
                    '"x"',
                    "{'a': 1}",
                    '{"action": }',
                    "\x00",
                    "[" * 5000,
                    json.dumps(self.value()),
                    "{}" * 3,
                ]
            )
        if kind == 2:  # oversized (refused, the connection stays)
            size = r.randrange(MAX_FRAME_BYTES + 1, consumers.MAX_OPEN_FRAME_BYTES - 100)
            return json.dumps({"action": "chat", "text": "x" * size, "v": version})
        if kind == 3:  # unknown or missing action, random fields
            data = {f: self.value() for f in r.sample(FIELDS, r.randrange(1, 5)) if f != "action"}
            data["action"] = r.choice([None, 1, "", "HIT", "hit ", "bet\x00", "cheat", "sit_down", ["bet"]])
            return json.dumps(data)
        if kind == 4:  # a real action with a broken version
            # (No digit strings: the HTML format reads "1" as version 1, which a bet may still carry.)
            broken = r.choice([None, -1, "-1", 1.5, "1.5", 2**64, [], "x", "0x1", True])
            return json.dumps({"action": r.choice(ACTIONS), "v": broken})
        if kind == 5:  # chat the parser refuses: nothing but invisible characters, controls, too long
            text = r.choice(["\u200b\u202e\u2066", "  ", "a\x07b", "\x1b[31m", "\u20ac" * 101, "x" * 301, ""])
            return json.dumps({"action": "chat", "text": text, "v": version})
        # A real action with hostile field values, or a valid one from the future.
        action = r.choice([a for a in ACTIONS if a != "chat"])
        data = {"action": action, "v": version + r.randrange(1, 2**40)}
        for name in r.sample(["seat", "hand", "amount", "accept", "seed"], r.randrange(0, 4)):
            data[name] = self.value() if kind < 8 else r.choice([1, 2, 3, 0, 100, True])
        if action == "sit" and "seat" not in data:
            data["seat"] = r.randrange(1, 8)
        if action == "bet" and "amount" not in data:
            data["amount"] = r.randrange(1, 10**6)
        return json.dumps(data)


def snapshot(table_id: int) -> tuple:
    table = Table.objects.get(pk=table_id)
    return (
        table.version,
        table.phase,
        list(Round.objects.filter(table_id=table_id).values_list("id", "phase", "state")),
        list(
            Seat.objects.filter(table_id=table_id)
            .order_by("number")
            .values_list("user_id", "disconnected_at", "ready", "sitting_out", "leaving_after_round")
        ),
        ChatLine.objects.count(),
        ActionLog.objects.count(),
        LedgerEntry.objects.count(),
        sorted(Wallet.objects.values_list("id", "balance")),
    )


async def _reply(socket: CommunicatorClient, version: int | None = None):
    """The next message (JSON parsed), read at once (the client's own `receive` polls every 5 ms); with
    `version`, past any state of that version sent meanwhile, not in answer to a frame (seen once, 20 s into
    a run on a slow machine): the version the snapshot holds again, nothing changed."""
    while True:
        message = await socket.communicator.receive_output(10)
        assert message["type"] == "websocket.send", message  # a close would be a failure
        reply = json.loads(message["text"]) if socket.json_format else message["text"]
        if version is None or not _shown_again(reply, version):
            return reply


def _shown_again(reply, version: int) -> bool:
    if isinstance(reply, dict):
        return reply.get("type") == "state" and reply.get("v") == version
    return 'id="flash"' not in reply and f'data-v="{version}"' in reply


class _Unlimited(consumers.FloodGuard):
    def hit(self, now: float) -> str:
        return self.OK


@pytest.mark.slow
@pytest.mark.timeout(900)  # about 2 ms a frame; on both cores beside the other slow tests, up to twice that
@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_twenty_five_thousand_hostile_frames_are_refused_and_change_nothing(
    table, alice, bob, act, monkeypatch, caplog
):
    monkeypatch.setattr(consumers, "FloodGuard", _Unlimited)
    await database_sync_to_async(act)(table, alice, "sit", seat=1)
    await database_sync_to_async(act)(table, bob, "sit", seat=2)
    cookie = await database_sync_to_async(session_cookie)(alice)
    sockets = [
        CommunicatorClient("json", f"/ws/tables/{table.pk}/?format=json", cookie=cookie),
        CommunicatorClient("html", f"/ws/tables/{table.pk}/", cookie=cookie),
    ]
    for socket in sockets:
        assert await socket.connect()
        await socket.receive()
    for socket in sockets:
        await socket.quiet()
    before = await database_sync_to_async(snapshot)(table.pk)
    # The state marking the players present may come after a quiet moment on a busy machine: every socket
    # has the version the snapshot holds, and nothing more is on its way, before the first hostile frame.
    await sockets[0].until_version(before[0])
    for socket in sockets:
        await socket.quiet(1.0)
    frames = HostileFrames(SEED)
    codes: dict[str, int] = {}
    started = time.monotonic()
    caplog.set_level(logging.ERROR)
    for number in range(FRAMES):
        socket = sockets[number % 10 == 0]  # one frame in ten on the HTML connection
        frame = frames.frame(before[0])
        if isinstance(frame, bytes):
            await socket.communicator.send_to(bytes_data=frame)
        else:
            await socket.communicator.send_to(text_data=frame)
        reply = await _reply(socket, before[0])
        if socket.json_format:
            assert reply["type"] == "error", (frame[:200], reply)
            assert reply["code"] in REFUSALS, (frame[:200], reply)
            codes[reply["code"]] = codes.get(reply["code"], 0) + 1
            if reply["code"] == "stale_version":  # the refusal comes with the current state
                fresh = await _reply(socket)
                assert (fresh["type"], fresh["v"]) == ("state", before[0]), fresh
        else:
            assert 'id="flash"' in reply, (frame[:200], reply[:300])
    elapsed = time.monotonic() - started
    after = await database_sync_to_async(snapshot)(table.pk)
    for socket in sockets:
        await socket.close()
    print(f"{FRAMES} frames in {elapsed:.1f} s; refusals (JSON) {dict(sorted(codes.items()))}")
    assert after == before
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []
    await asyncio.sleep(0)
