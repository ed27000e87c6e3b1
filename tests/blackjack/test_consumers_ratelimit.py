"""The per-connection rate limiter of the table consumer (over a websocket: test_consumers.py)."""

from live.consumer import FloodGuard


def test_flood_guard_windows():
    guard = FloodGuard()
    assert [guard.hit(0.01 * n) for n in range(20)] == ["ok"] * 20
    assert guard.hit(0.5) == "limited"  # the 21st within one second
    assert guard.hit(1.2) == "ok"  # the first messages have left the 1 s window
    guard = FloodGuard()
    verdicts = [guard.hit(n * 0.04) for n in range(61)]  # 61 messages in 2.4 s
    assert verdicts[-1] == "close"
    assert "limited" in verdicts


def test_flood_guard_forgets_old_messages():
    guard = FloodGuard()
    # 15 a second for 10 seconds: always within both limits, however long the connection lives.
    assert {guard.hit(k / 15) for k in range(150)} == {"ok"}
    assert guard.hit(10.0 + 1 / 30) == "ok"
