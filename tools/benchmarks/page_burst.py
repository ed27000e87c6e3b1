"""Benchmark: whether a burst of page requests makes the live tables' actions wait.

    .venv/bin/python -m tools.benchmarks.page_burst
    .venv/bin/python -m tools.benchmarks.page_burst --burst 100 --bursts 3 --every 15 --tables 5 --players 2 \
        --think 300 --duration 60 --path /blackjack/leaderboard/ --json benchmark-page-burst.json
    .venv/bin/python -m tools.benchmarks.page_burst --path / --burst 200

Starts one Daphne process (`cardroom.serve`, DEBUG off, the pool's defaults unless DB_POOL_* are set) against
PostgreSQL (DATABASE_URL, default a database `page_burst` on 127.0.0.1, created and migrated as
`tools.benchmarks.load` does) without Redis (one process: the in-memory channel layer; REDIS_URL, if set, is
used), and lets the load test's JSON bots play `--tables` tables of `--players` players with a mean think time
of `--think` ms over real websockets (`python -m tools.loadtest`). During the load test's measured window it
fires `--bursts` bursts of `--burst` concurrent GETs (not logged in) of `--path`, one starting every `--every`
seconds (or as soon as the one before has finished), and records each GET's status and time.

Prints the GETs by status with their p50/p99/max time, each burst's length, and the table actions of the same
window: the actor's and the other players' latency (p50/p99/max), the worst p99 of a 5-second stretch (the
load test's progress lines), the errors by code, the peak number of PostgreSQL connections, and the load
average before and after. Everything is written to --json. Run it in each checkout to compare (the machine's
speed moves: alternate the checkouts and compare medians).
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.benchmarks.load import ROOT, create_database, environment, free_port, stop, vacuum, wait_for

PYTHON = sys.executable
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/page_burst"
#: The load test's progress line, every 5 s of the measured window: the actor p99 of that stretch.
RECENT_P99 = re.compile(r"recent actor p99 ([\d.]+) ms")


def get(url: str, timeout: float) -> tuple[int | str, float]:
    """(HTTP status, or the error's name without a response; seconds) of one GET of `url`."""
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            response.read()
            status: int | str = response.status
    except urllib.error.HTTPError as error:
        error.read()
        status = error.code
    except OSError as error:
        status = type(error).__name__
    return status, time.perf_counter() - started


def burst(url: str, size: int, timeout: float) -> list[tuple[int | str, float]]:
    """`size` GETs of `url` sent at once (each on its own thread, released together)."""
    gate = threading.Barrier(size)

    def one(_: int) -> tuple[int | str, float]:
        gate.wait(timeout=30)
        return get(url, timeout)

    with ThreadPoolExecutor(max_workers=size) as pool:
        return list(pool.map(one, range(size)))


def milliseconds(values: list[float]) -> dict:
    """count, p50, p99 and max of `values` (seconds) in ms, nearest rank."""
    if not values:
        return {"count": 0, "p50": None, "p99": None, "max": None}
    ordered = sorted(values)

    def rank(share: float) -> float:
        return round(1000 * ordered[max(0, math.ceil(len(ordered) * share) - 1)], 1)

    return {"count": len(ordered), "p50": rank(0.5), "p99": rank(0.99), "max": round(1000 * ordered[-1], 1)}


class LoadTest:
    """`python -m tools.loadtest` against the server, in its own process; its progress lines are read as they
    come, to know when its measured window begins (`--warmup` seconds after it says it warms up)."""

    def __init__(self, args, env: dict[str, str], url: str, out: str) -> None:
        command = [PYTHON, "-m", "tools.loadtest", "--url", url, "--json", out]
        command += ["--duration", str(args.duration)]
        command += ["--tables", str(args.tables), "--players", str(args.players), "--think", str(args.think)]
        command += ["--warmup", str(args.warmup), "--stagger", str(args.stagger)]
        self.warmup = args.warmup
        self.lines: list[str] = []
        self.measuring_from: float | None = None
        self.warming = threading.Event()
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line.rstrip())
            if "warming up for" in line and not self.warming.is_set():
                self.measuring_from = time.monotonic() + self.warmup
                self.warming.set()
        self.warming.set()  # the load test ended (or failed) before measuring

    def wait_until_measuring(self, timeout: float) -> bool:
        """Wait until its measured window has begun; False if it never will."""
        if not self.warming.wait(timeout) or self.measuring_from is None:
            return False
        time.sleep(max(0.0, self.measuring_from - time.monotonic()))
        return True

    def finish(self) -> int:
        code = self.process.wait()
        self.reader.join()
        return code

    def worst_stretch_p99(self) -> float | None:
        values = [float(match[1]) for line in self.lines if (match := RECENT_P99.search(line))]
        return max(values, default=None)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--path",
        default="/blackjack/leaderboard/",
        help="the page to GET, answering 200 (the default: the heaviest of the lobby and the leaderboards)",
    )
    parser.add_argument("--burst", type=int, default=100, help="concurrent GETs in one burst")
    parser.add_argument("--bursts", type=int, default=3)
    parser.add_argument("--every", type=float, default=15.0, help="seconds from a burst's start to the next")
    parser.add_argument(
        "--first", type=float, default=5.0, help="seconds into the measured window of the first burst"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="a GET's own timeout, in seconds")
    parser.add_argument("--tables", type=int, default=5)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--think", type=int, default=300, metavar="MS", help="the bots' mean think time")
    parser.add_argument("--duration", type=float, default=60.0, help="the measured window, in seconds")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of play before measuring (> 0)")
    parser.add_argument("--stagger", type=float, default=2.0, help="start the tables over this many seconds")
    parser.add_argument("--json", default="benchmark-page-burst.json")
    args = parser.parse_args()
    if args.warmup <= 0 or args.burst < 1 or args.bursts < 1:
        parser.error("--warmup must be more than 0, --burst and --bursts at least 1")

    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE)
    env = environment()
    if "REDIS_URL" not in os.environ:  # one process needs no channel layer across processes
        del env["REDIS_URL"]
    create_database(env)
    port = free_port()
    command = [PYTHON, "-m", "cardroom.serve", "-b", "127.0.0.1", "-p", str(port)]
    command += ["--websocket_connect_timeout", "30", "cardroom.asgi:application"]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(port)
        for _ in range(3):  # templates compiled, the page known to answer
            status, _seconds = get(base + args.path, args.timeout)
            if status != 200:
                raise SystemExit(f"GET {args.path} answered {status}, not 200")
        vacuum(env)
        result = run(args, env, base)
    finally:
        stop([server])
    result["summary"] = summarise(result["bursts"])
    report(args, result)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


def run(args, env: dict[str, str], base: str) -> dict:
    """The load test with the bursts fired during its measured window; the figures of both."""
    load_before = os.getloadavg()
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        test = LoadTest(args, env, base, out.name)
        bursts = []
        if test.wait_until_measuring(timeout=180):
            began = time.monotonic()
            for index in range(args.bursts):
                if (delay := began + args.first + index * args.every - time.monotonic()) > 0:
                    time.sleep(delay)
                at = time.monotonic() - began
                if at >= args.duration:
                    print(f"burst {index + 1}: not fired, the measured window is over", flush=True)
                    break
                gets = burst(base + args.path, args.burst, args.timeout)
                bursts.append({"at_s": round(at, 2), "seconds": round(time.monotonic() - began - at, 2)})
                bursts[-1]["gets"] = [[status, round(seconds, 4)] for status, seconds in gets]
                if time.monotonic() - began > args.duration:
                    print(f"burst {index + 1} ended after the measured window", flush=True)
        code = test.finish()
        loadtest = json.loads(Path(out.name).read_text() or "null")
    if loadtest is None:
        raise SystemExit(f"the load test failed (exit {code}):\n" + "\n".join(test.lines[-20:]))
    return {
        "path": args.path,
        "burst": args.burst,
        "bursts": bursts,
        "worst_5s_actor_p99_ms": test.worst_stretch_p99(),
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "settings": {name: env.get(name) for name in ("DB_POOL_MAX_SIZE", "DB_POOL_TIMEOUT") if name in env},
        "loadtest": loadtest,
    }


def summarise(bursts: list[dict]) -> dict:
    """The GETs of every burst: all together and by status (count, p50, p99, max in ms), and the bursts'
    lengths in seconds."""
    gets = [(status, seconds) for fired in bursts for status, seconds in fired["gets"]]
    by_status: dict[str, list[float]] = {}
    for status, seconds in gets:
        by_status.setdefault(str(status), []).append(seconds)
    return {
        "gets": milliseconds([seconds for _, seconds in gets]),
        "gets_by_status": {status: milliseconds(values) for status, values in sorted(by_status.items())},
        "burst_seconds": [fired["seconds"] for fired in bursts],
    }


def report(args, result: dict) -> None:
    summary = result["summary"]
    print(
        f"{len(result['bursts'])} bursts of {args.burst} GETs of {args.path} ("
        + ", ".join(f"at +{fired['at_s']:g} s for {fired['seconds']:g} s" for fired in result["bursts"])
        + f") while {args.tables} tables x {args.players} players play (think {args.think} ms):",
        flush=True,
    )
    for name, figures in [("all", summary["gets"]), *summary["gets_by_status"].items()]:
        print(
            f"  GETs {'' if name == 'all' else 'status '}{name}: {figures['count']}, "
            f"p50 {figures['p50']} ms, p99 {figures['p99']} ms, max {figures['max']} ms"
        )
    loadtest = result["loadtest"]
    actor, others = loadtest["latency_ms"]["actor"], loadtest["latency_ms"]["others"]
    connections = loadtest.get("postgres_connections") or {}
    load = result["load_average"]
    print(
        f"  table actions: {loadtest['actions']} in {loadtest['seconds']} s ({loadtest['actions_per_s']}/s), "
        f"actor p50/p99/max {actor['p50']}/{actor['p99']}/{actor['max']} ms, others "
        f"{others['p50']}/{others['p99']}/{others['max']} ms, worst 5 s actor p99 "
        f"{result['worst_5s_actor_p99_ms']} ms\n"
        f"  errors {loadtest['unexpected_errors']} {loadtest['errors']} races {loadtest['races']} reconnects "
        f"{loadtest['reconnects']} audit {'ok' if loadtest['audit']['ok'] else 'FAILED'} | PostgreSQL "
        f"connections peak {connections.get('peak', '-')} | load {load['before'][0]:.2f} -> "
        f"{load['after'][0]:.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
