"""Benchmark: the CPU that encrypting the channel layer's messages costs, per message, side by side.

    .venv/bin/python -m tools.benchmarks.layer_crypto [--messages 5000] [--repeat 5]
    REDIS_URL=redis://127.0.0.1:6379/3 .venv/bin/python -m tools.benchmarks.layer_crypto --redis

For messages of three sizes (a "version v" notice, a table's state of about 2 KB and one of about 16 KB in
msgpack), the CPU time of channels-redis's serialization of one message (msgpack, plus Fernet with the
settings' key) and of reading it back, with and without the key: the runs alternate (plain, keyed, plain, ...)
so that both meet the same machine, and the best and median of `--repeat` runs are printed. With `--redis`,
also a whole trip through Redis (group send to a group of one channel, then receive) in this process, CPU time
per message, with and without the key. The figures are process CPU time, not wall time: other work on the
machine slows both alike, though a busy machine still spreads them.
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardroom.settings")


def table_like(seats: int, events: int) -> dict:
    """A message shaped like a table's state: seats with hands of cards, a log of events."""
    return {
        "type": "table.changed",
        "v": 123456,
        "table": {
            "phase": "playing",
            "seats": [
                {
                    "seat": number,
                    "player": f"player{number}",
                    "bet": 25,
                    "hands": [{"cards": ["Kd", "7s", "2c"], "total": 19, "status": "playing"}],
                }
                for number in range(1, seats + 1)
            ],
            "dealer": {"cards": ["Th", "6c"], "total": 16},
            "events": [
                {"at": 1764190000.0 + n, "kind": "action", "text": f"player{n % 7} hits"}
                for n in range(events)
            ],
        },
    }


def serialization(layer, message: dict, count: int) -> float:
    """CPU milliseconds per message to serialize and deserialize it `count` times."""
    serializer = layer._serializer
    started = time.process_time()
    for _ in range(count):
        serializer.deserialize(serializer.serialize(message))
    return 1000 * (time.process_time() - started) / count


async def trip(layer, message: dict, count: int) -> float:
    """CPU milliseconds per message of a group send and its receive through Redis."""
    channel = await layer.new_channel()
    await layer.group_add("benchmark", channel)
    started = time.process_time()
    for _ in range(count):
        await layer.group_send("benchmark", message)
        await layer.receive(channel)
    spent = time.process_time() - started
    await layer.group_discard("benchmark", channel)
    return 1000 * spent / count


def compare(runs: dict[str, list[float]]) -> str:
    plain, keyed = min(runs["plain"]), min(runs["keyed"])
    return (
        f"without key {plain:.4f} / {statistics.median(runs['plain']):.4f}, with key {keyed:.4f} / "
        f"{statistics.median(runs['keyed']):.4f}  -> +{keyed - plain:.4f} ms a message (best)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=5000, help="messages per run")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each variant, alternating")
    parser.add_argument(
        "--redis", action="store_true", help="also time whole trips through Redis (REDIS_URL)"
    )
    args = parser.parse_args()
    if args.messages < 1 or args.repeat < 1:
        parser.error("--messages and --repeat must be at least 1")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    if args.redis and not os.environ.get("REDIS_URL"):
        parser.error("--redis needs REDIS_URL")

    import django

    django.setup()
    import msgpack
    from django.conf import settings

    from cardroom.channel_layer import RedisChannelLayer

    def layer(keyed: bool) -> RedisChannelLayer:
        keys = settings.CHANNEL_LAYER_KEYS if keyed else None
        return RedisChannelLayer(
            hosts=[{"address": redis_url}], symmetric_encryption_keys=keys, prefix="bench"
        )

    layers = {"plain": layer(False), "keyed": layer(True)}
    messages = {
        "notice": {"type": "table.changed", "v": 123456},
        "state ~2 KB": table_like(5, 30),
        "state ~16 KB": table_like(7, 370),
    }
    print(
        f"{args.messages} messages a run, {args.repeat} runs each, alternating; CPU ms a message, best/median"
    )
    for name, message in messages.items():
        size = len(msgpack.packb(message))
        runs = {variant: [] for variant in layers}
        for _ in range(args.repeat):
            for variant, instance in layers.items():
                runs[variant].append(serialization(instance, message, args.messages))
        print(f"serialize+read {name:13s} ({size:6d} B msgpack): {compare(runs)}")
    if args.redis:
        for name, message in messages.items():
            runs = {variant: [] for variant in layers}
            for _ in range(args.repeat):
                for variant, instance in layers.items():
                    runs[variant].append(asyncio.run(trip(instance, message, max(1, args.messages // 5))))
                    instance._layers.clear()  # its pool belongs to the loop that just closed
            print(f"Redis trip     {name:13s}: {compare(runs)}")


if __name__ == "__main__":
    main()
