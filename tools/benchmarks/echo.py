"""Benchmark: the messages per second a plain Channels echo consumer handles here, the ceiling to read beside
the site's actions per second from `tools/benchmarks/load.py --think 0` on the same number of processes.

    .venv/bin/python -m tools.benchmarks.echo --processes 1 --duration 10
    .venv/bin/python -m tools.benchmarks.echo --processes 2 --clients 250 --client-processes 2 --duration 30

Starts N Daphne processes as load.py starts the site (`cardroom.serve`: uvloop, free ports, SIGTERM at
the end) serving this module's `application`: `/ws/echo/` routed to `Echo`, an `AsyncWebsocketConsumer` on
the in-memory channel layer that parses each text frame as JSON and sends it back as JSON, as the site's
`TableConsumer` (an `AsyncWebsocketConsumer` too, not the JSON one) parses an action and sends JSON views. No
session, database, Redis or game: what is left is what Daphne and Channels cost a message. K clients
(`websockets`, spread over the processes) in C client processes each send an action-sized JSON frame and
wait for its echo before the next (closed loop, no think time); after --warmup seconds, the round trips that
end within --duration seconds are counted. Prints round trips (messages echoed) per second, their p50/p99,
the CPU per message of the servers and of the clients (/proc), how busy the machine was, and load.py's speed
probe. The clients share the machine's cores with the servers: when they used more CPU than the servers, or
one client process was busy over 90% of a core, the figure is a lower bound, and the output says so.
"""

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import django
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

if not settings.configured:
    settings.configure(CHANNEL_LAYERS={"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}})
    django.setup()

from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

from cardroom.serve import loop_factory, quiet_gc  # noqa: E402
from tools.benchmarks.load import (  # noqa: E402
    PYTHON,
    cpu_seconds,
    free_port,
    machine_busy_seconds,
    speed_probe,
    stop,
    wait_for,
)

MESSAGE = json.dumps({"action": "hit", "v": 12})
SERVE = [PYTHON, "-m", "cardroom.serve", "-v", "0", "-b", "127.0.0.1"]  # -v 0: warnings and errors only


class Echo(AsyncWebsocketConsumer):
    """Each text frame back, parsed and dumped as JSON, as the table consumer reads an action."""

    async def receive(self, text_data=None, bytes_data=None):
        await self.send(text_data=json.dumps(json.loads(text_data)))


application = ProtocolTypeRouter({"websocket": URLRouter([path("ws/echo/", Echo.as_asgi())])})
quiet_gc()  # as cardroom.asgi does in the site's servers


def client(urls: list[str], pipe) -> None:
    """One client process: a socket to each of `urls`; says "ready" once connected, plays from then until
    the window (start, end) it is sent ends, and sends back the round-trip times (s) that ended within it."""
    asyncio.run(play(urls, pipe), loop_factory=loop_factory())


async def play(urls: list[str], pipe) -> None:
    from websockets.asyncio.client import connect

    sockets = await asyncio.gather(*(connect(url, open_timeout=60) for url in urls))
    pipe.send("ready")
    start, end = await asyncio.to_thread(pipe.recv)
    times: list[float] = []

    async def loop(socket) -> None:
        while (sent := time.time()) < end:
            await socket.send(MESSAGE)
            if await socket.recv() != MESSAGE:
                raise RuntimeError("the echo differs from the message")
            done = time.time()
            if start <= done <= end:
                times.append(done - sent)

    await asyncio.gather(*(loop(socket) for socket in sockets))
    await asyncio.gather(*(socket.close() for socket in sockets))
    pipe.send(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--processes", type=int, default=1, help="Daphne processes")
    parser.add_argument("--clients", type=int, default=250, help="sockets (50 tables x 5 players: 250)")
    parser.add_argument("--client-processes", type=int, default=1)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    args = parser.parse_args()
    if min(args.processes, args.clients, args.client_processes) < 1 or args.duration <= 0:
        parser.error("--processes, --clients and --client-processes must be at least 1, --duration above 0")

    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    ports = [free_port() for _ in range(args.processes)]
    servers = [
        subprocess.Popen(
            [*SERVE, "-p", str(port), "tools.benchmarks.echo:application"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        for port in ports
    ]
    clients, pipes = [], []
    try:
        for port in ports:
            wait_for(port)
        probe_before = speed_probe()
        urls = [f"ws://127.0.0.1:{port}/ws/echo/" for port in ports]
        for first in range(args.client_processes):
            ours, theirs = multiprocessing.Pipe()
            mine = [urls[i % len(urls)] for i in range(first, args.clients, args.client_processes)]
            clients.append(multiprocessing.Process(target=client, args=(mine, theirs), daemon=True))
            clients[-1].start()
            theirs.close()  # so that a client process that fails ends our reads (EOFError), not hangs them
            pipes.append(ours)
        for pipe in pipes:
            if not pipe.poll(120) or pipe.recv() != "ready":
                raise SystemExit("a client process did not connect its sockets")
        start = time.time() + args.warmup
        end = start + args.duration
        for pipe in pipes:
            pipe.send((start, end))

        def cpu() -> tuple[float, list[float], float]:
            servers_cpu = sum(cpu_seconds(server.pid) for server in servers)
            return servers_cpu, [cpu_seconds(process.pid) for process in clients], machine_busy_seconds()

        time.sleep(max(0.0, start - time.time()))
        servers_before, clients_before, machine_before = cpu()
        time.sleep(max(0.0, end - time.time()))
        servers_after, clients_after, machine_after = cpu()
        times = sorted(1000 * rtt for pipe in pipes for rtt in pipe.recv())
        for process in clients:
            process.join(timeout=30)
        probe_after = speed_probe()
    finally:
        for process in clients:
            if process.is_alive():
                process.kill()
        stop(servers)

    messages = max(len(times), 1)
    server_cpu = servers_after - servers_before
    client_cpus = [after - before for before, after in zip(clients_before, clients_after, strict=True)]
    busiest_client = max(client_cpus) / args.duration
    machine_busy = (machine_after - machine_before) / args.duration / os.cpu_count()
    print(
        f"echo, {args.processes} process(es), {args.clients} clients in {args.client_processes} client "
        f"process(es): {len(times) / args.duration:8.1f} messages/s | round trip p50/p99 "
        f"{statistics.median(times):.2f}/{times[int(0.99 * (len(times) - 1))]:.2f} ms | CPU ms/message "
        f"servers {1000 * server_cpu / messages:.3f} (busy {server_cpu / args.duration / args.processes:.0%} "
        f"each) clients {1000 * sum(client_cpus) / messages:.3f} (busiest {busiest_client:.0%}) | "
        f"machine busy {machine_busy:.0%}, load {os.getloadavg()[0]:.1f} | "
        f"speed probe {probe_before}/{probe_after} ms",
        flush=True,
    )
    if sum(client_cpus) > server_cpu or busiest_client > 0.9:
        print(
            "    the clients used more CPU than the servers, or one client process over 90% of a core: "
            "the clients may have been the limit, so messages/s is a lower bound (try --client-processes)",
            flush=True,
        )


if __name__ == "__main__":
    main()
