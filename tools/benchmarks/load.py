"""Benchmark: the largest load that keeps p99 under a goal, for a given number of server processes.

    .venv/bin/python -m tools.benchmarks.load --processes 1 --tables 5,10,20,50,100 --players 5 --duration 30
    .venv/bin/python -m tools.benchmarks.load --processes 2 --tables 5,10,20,50,100 --players 5 --duration 30
    .venv/bin/python -m tools.benchmarks.load --processes 1 --tables 20,50,100 --players 5 --think 2000
    .venv/bin/python -m tools.benchmarks.load --processes 2 --tables 40,50,60 --players 5 --think 1000 \
        --repeat 3
    .venv/bin/python -m tools.benchmarks.load --processes 2 --tables 100 --players 5 --duration 600 \
        --think 2000 \
        --format html --goal-ms 5000

Starts N Daphne processes on free ports against PostgreSQL (DATABASE_URL, default a database `blackjack_bench`
on 127.0.0.1, created and migrated) and Redis (REDIS_URL, default db 4 on 127.0.0.1), with DEBUG off, then
runs the load test (`python -m tools.loadtest`) once per table count (players spread over the processes),
prints one line per run and a verdict, and writes every result to --json. With more than one process the load
clients go through HAProxy (`--balancer haproxy`, the default then: the configuration `make run-cluster` runs,
`tools.haproxy`), which routes each table's sockets to one process by their path; `--balancer none` points
them at the processes directly, each table's players on one process (`--route`). The p99 that counts is the
larger of the two latencies (to the acting client and to the other players). Runs stop growing once a load
misses the goal. `--think MS` gives every bot a human pause before each action (passed on to the load test);
without it the bots act as fast as the flow allows. `--repeat N` runs each table count N times and judges it
by the median of their p99 (single runs on these machines differ by up to half), printing every run and the
spread.
`--format html` plays browser-format players (the table page's socket, fragments and forms) instead of JSON
bots. Each run prints the peak number of PostgreSQL connections to the database while it played.
"""

import argparse
import json
import os
import resource
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tools import haproxy

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port: int, timeout: float = 60.0) -> None:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"no server on port {port} after {timeout} s")


def environment() -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/blackjack_bench"),
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/4"),
        "DEBUG": "0",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
        "LOG_LEVEL": "ERROR",
    }


def create_database(env: dict[str, str]) -> None:
    script = (
        "import os, dj_database_url, psycopg\n"
        "from psycopg import sql\n"
        "c = dj_database_url.parse(os.environ['DATABASE_URL'])\n"
        "with psycopg.connect(dbname='postgres', host=c['HOST'] or '127.0.0.1', port=c['PORT'] or 5432,\n"
        "                     user=c['USER'], password=c['PASSWORD'] or None, autocommit=True) as db:\n"
        "    if not db.execute('SELECT 1 FROM pg_database WHERE datname = %s', [c['NAME']]).fetchone():\n"
        "        db.execute(sql.SQL('CREATE DATABASE {}').format(sql.Identifier(c['NAME'])))\n"
    )
    if env["DATABASE_URL"].startswith("postgres"):
        subprocess.run([PYTHON, "-c", script], env=env, check=True)
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [PYTHON, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )


def vacuum(env: dict[str, str]) -> None:
    """VACUUM (ANALYZE) the PostgreSQL database before a run, so that a run does not play on the leftovers of
    the runs before it. Every action rewrites its table's row (and its round's, seats', wallets'); with
    autovacuum off, as on the machines this was measured on, the dead row versions pile up (110,000 dead
    versions of 2,100 table rows after an hour of runs)."""
    if not env["DATABASE_URL"].startswith("postgres"):
        return
    script = (
        "import os, dj_database_url, psycopg\n"
        "c = dj_database_url.parse(os.environ['DATABASE_URL'])\n"
        "with psycopg.connect(dbname=c['NAME'], host=c['HOST'] or '127.0.0.1', port=c['PORT'] or 5432,\n"
        "                     user=c['USER'], password=c['PASSWORD'] or None, autocommit=True) as db:\n"
        "    db.execute('VACUUM (ANALYZE)')\n"
    )
    subprocess.run([PYTHON, "-c", script], cwd=ROOT, env=env, check=True)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU time the whole machine has spent busy (all cores, Linux /proc/stat)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class CpuSampler(threading.Thread):
    """Samples the servers' CPU time and the machine's busy time every `every` seconds, so that the CPU spent
    in the load test's measured window (seating and draining left out) can be read off afterwards."""

    def __init__(self, pids: list[int], every: float = 0.25):
        super().__init__(daemon=True)
        self.pids, self.every = pids, every
        self.samples: list[tuple[float, float, float]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            servers = sum(cpu_seconds(pid) for pid in self.pids)
            self.samples.append((time.time(), servers, machine_busy_seconds()))
            self.done.wait(self.every)

    def between(self, start: float, end: float) -> tuple[float, float]:
        """(servers' CPU seconds, machine busy seconds) from `start` to `end`, interpolated."""

        def at(moment: float) -> tuple[float, float]:
            before = max((s for s in self.samples if s[0] <= moment), default=self.samples[0])
            after = min((s for s in self.samples if s[0] >= moment), default=self.samples[-1])
            share = 0.0 if after[0] == before[0] else (moment - before[0]) / (after[0] - before[0])
            return tuple(b + share * (a - b) for b, a in zip(before[1:], after[1:], strict=True))

        first, last = at(start), at(end)
        return last[0] - first[0], last[1] - first[1]


def p99(result: dict) -> float:
    figures = [result["latency_ms"][who]["p99"] for who in ("actor", "others")]
    return max(value for value in figures if value is not None)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--tables", default="5,10,20,50,100", help="comma-separated table counts, ascending")
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--think", type=int, default=0, metavar="MS", help="mean think time per action (ms)")
    parser.add_argument(
        "--warmup", type=float, default=10.0, help="seconds of play before measuring (passed to loadtest)"
    )
    parser.add_argument(
        "--stagger",
        type=float,
        default=10.0,
        help="start the tables one after another over this many seconds, about one round at human pace "
        "(passed to loadtest; 0: all at once)",
    )
    parser.add_argument(
        "--route",
        choices=("player", "table"),
        default="table",
        help="without a balancer, table (the default): all of a table's players on one process, as the "
        "documented load balancer routes them; player: each table's players spread over the processes "
        "(passed to loadtest)",
    )
    parser.add_argument(
        "--balancer",
        choices=("haproxy", "none"),
        help="haproxy (the default with more than one process): the load clients connect to HAProxy in front "
        "of the processes; none: to the processes directly (as --route says)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs of each table count; a count is judged by the median of its runs' p99 (one run's p99 can "
        "differ from the next by half on these machines)",
    )
    parser.add_argument(
        "--format",
        choices=("json", "html"),
        default="json",
        help="the bots' format: json, or html for browser-format players (passed to loadtest)",
    )
    parser.add_argument(
        "--eager",
        action="store_true",
        help="every bot bets and readies at once, as people do, not in seat order (passed to loadtest)",
    )
    parser.add_argument("--goal-ms", type=float, default=100.0)
    parser.add_argument("--json", default="benchmark-load.json")
    parser.add_argument("--keep-going", action="store_true", help="run every table count even past the goal")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.balancer is None:
        args.balancer = "haproxy" if args.processes > 1 else "none"
    if args.balancer == "haproxy" and not haproxy.available():
        parser.error("HAProxy is not installed (apt-get install -y haproxy); or run with --balancer none")

    env = environment()
    create_database(env)
    if args.balancer == "haproxy":
        env["BEHIND_PROXY"] = "1"  # as scripts/run-cluster.sh starts them behind it
    ports = [free_port() for _ in range(args.processes)]
    servers = []
    for port in ports:
        command = [PYTHON, "-m", "cardroom.serve", "-b", "127.0.0.1", "-p", str(port)]
        command += ["--websocket_connect_timeout", "30"]  # as scripts/run-cluster.sh starts them
        if args.balancer == "haproxy":
            command.append("--proxy-headers")
        command.append("cardroom.asgi:application")
        servers.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL))
    results, loads = [], []
    balancer = None
    try:
        for port in ports:
            wait_for(port)
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        if args.balancer == "haproxy":
            balancer = haproxy.Balancer([f"127.0.0.1:{port}" for port in ports]).start()
            urls = [balancer.url]
        for tables in [int(part) for part in args.tables.split(",")]:
            runs = []
            for _ in range(args.repeat):
                result = run_once(args, env, servers, urls, tables, balancer)
                if result is None:
                    break
                runs.append(result)
            results += runs
            if len(runs) < args.repeat:
                break
            load = judge(runs, args.goal_ms)
            loads.append(load)
            if args.repeat > 1:
                print(
                    f"{tables} tables x {args.players} players: p99 over {len(runs)} runs "
                    f"{'/'.join(f'{value:g}' for value in load['p99s'])} ms, median {load['p99']:g} ms",
                    flush=True,
                )
            if not load["within"] and not args.keep_going:
                break
    finally:
        if balancer is not None:
            balancer.stop()
        stop(servers)
    best = max((load for load in loads if load["within"]), key=lambda load: load["tables"], default=None)
    judged = "p99" if args.repeat == 1 else f"median p99 of {args.repeat} runs"
    verdict = (
        f"largest load with {judged} < {args.goal_ms:g} ms and no errors: {best['tables']} tables x "
        f"{args.players} players ({best['tables'] * args.players} bots), {best['actions_per_s']} actions/s, "
        f"think {args.think} ms"
        if best
        else f"no load tried kept {judged} under {args.goal_ms:g} ms"
    )
    print(verdict)
    Path(args.json).write_text(
        json.dumps({"verdict": verdict, "loads": loads, "runs": results}, indent=2) + "\n"
    )


def stop(servers: list[subprocess.Popen]) -> None:
    """SIGTERM the servers, then kill any still running 20 s later."""
    for server in servers:
        server.send_signal(signal.SIGTERM)
    for server in servers:
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            print(f"server {server.pid} still running 20 s after SIGTERM: killed", flush=True)
            server.kill()


def judge(runs: list[dict], goal_ms: float) -> dict:
    """One table count's verdict from its runs: within the goal if the median of their p99 is under it and
    every run had no errors and a clean ledger audit."""
    p99s = sorted(p99(run) for run in runs)
    median = round(statistics.median(p99s), 2)
    return {
        "tables": runs[0]["tables"],
        "runs": len(runs),
        "p99s": p99s,
        "p99": median,
        "actions_per_s": round(statistics.median(run["actions_per_s"] for run in runs), 1),
        "within": median < goal_ms
        and all(run["unexpected_errors"] == 0 and run["audit"]["ok"] for run in runs),
    }


def speed_probe() -> float:
    """Milliseconds of CPU a fixed pure-Python loop takes here now, best of three. The machines of this kind
    are virtual, and their speed moves with what else their host runs (the same loop took 0.61 to 1.12 s
    from one minute to the next): a run's CPU figures and latencies only compare with another's next to it."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        total = 0
        for number in range(1_000_000):
            total += number * number % 7
        best = min(best, time.process_time() - started)
    return round(1000 * best, 1)


def run_once(
    args, env: dict[str, str], servers: list, urls: list[str], tables: int, balancer=None
) -> dict | None:
    """One load test of `tables` tables against the running servers (through `balancer`, a running
    `tools.haproxy.Balancer`, if given): its result with the CPU figures added, printed; None if the load test
    failed."""
    vacuum(env)
    probe_before = speed_probe()
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [PYTHON, "-m", "tools.loadtest", "--tables", str(tables), "--players", str(args.players)]
        command += ["--duration", str(args.duration), "--think", str(args.think)]
        command += ["--warmup", str(args.warmup), "--stagger", str(args.stagger), "--route", args.route]
        command += ["--format", args.format]
        if args.eager:
            command.append("--eager")
        command += ["--json", out.name]
        for url in urls:
            command += ["--url", url]
        sampler = CpuSampler([server.pid for server in servers])
        sampler.start()
        balancer_sampler = CpuSampler([balancer.process.pid] if balancer is not None else [])
        balancer_sampler.start()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, cwd=ROOT, env=env, check=False, stdout=subprocess.DEVNULL)
        for each in (sampler, balancer_sampler):
            each.done.set()
            each.join()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        tester_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        result = json.loads(Path(out.name).read_text() or "null")
    if result is None:
        print(f"{tables} tables: the load test failed", flush=True)
        return None
    result["processes"] = args.processes
    result["balancer"] = args.balancer
    result["speed_probe_ms"] = [probe_before, speed_probe()]
    result["load_average"] = os.getloadavg()
    # CPU in the measured window only (accounts, seating and draining left out). Server CPU per action is what
    # one action costs the servers, so 1000 / it is the most actions per second one core could serve; the
    # machine's figure adds PostgreSQL, Redis and the bots.
    server_cpu, machine_cpu = sampler.between(*result["window"])
    result["server_cpu_s"] = round(server_cpu, 2)
    result["server_cpu_ms_per_action"] = round(1000 * server_cpu / max(result["actions"], 1), 2)
    result["machine_cpu_ms_per_action"] = round(1000 * machine_cpu / max(result["actions"], 1), 2)
    result["machine_busy"] = round(machine_cpu / (result["seconds"] * os.cpu_count()), 2)
    result["load_tester_cpu_s"] = round(tester_cpu, 2)
    balancer_cpu, _ = balancer_sampler.between(*result["window"])
    result["balancer_cpu_ms_per_action"] = round(1000 * balancer_cpu / max(result["actions"], 1), 3)
    actor, others = result["latency_ms"]["actor"], result["latency_ms"]["others"]
    connections = result.get("postgres_connections") or {}
    print(
        f"{args.processes} process(es) {tables:4d} tables x {args.players} {args.format} players, "
        f"think {args.think} ms{', eager' if args.eager else ''}, "
        f"{'through HAProxy' if balancer is not None else f'route {args.route}'}: "
        f"{result['rounds_per_s']:7.1f} rounds/s {result['actions_per_s']:8.1f} actions/s | "
        f"actor p50/p95/p99/max {actor['p50']}/{actor['p95']}/{actor['p99']}/{actor['max']} ms | "
        f"others {others['p50']}/{others['p95']}/{others['p99']}/{others['max']} ms | "
        f"errors {result['unexpected_errors']} races {result['races']} reconnects {result['reconnects']} "
        f"audit {'ok' if result['audit']['ok'] else 'FAILED'} | "
        f"PostgreSQL connections peak {connections.get('peak', '-')} | "
        f"CPU ms/action server {result['server_cpu_ms_per_action']} "
        f"{f'HAProxy {result["balancer_cpu_ms_per_action"]} ' if balancer is not None else ''}"
        f"machine {result['machine_cpu_ms_per_action']} (busy {result['machine_busy']:.0%}) | "
        f"load {result['load_average'][0]:.1f} | speed probe {result['speed_probe_ms'][0]}/"
        f"{result['speed_probe_ms'][1]} ms",
        flush=True,
    )
    by_action = result["actor_latency_ms_by_action"]
    print(
        "    actor p50/p99 ms by action: "
        + ", ".join(
            f"{key} {figures['p50']}/{figures['p99']} ({figures['count']})"
            for key, figures in by_action.items()
        ),
        flush=True,
    )
    return result


if __name__ == "__main__":
    main()
