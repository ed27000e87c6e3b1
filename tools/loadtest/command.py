"""`python -m tools.loadtest --url http://127.0.0.1:8000 --tables T --players P --duration S [--think MS]
[--json FILE]`

Plays T private tables with P bots each against running server(s) over real websockets, then audits the
ledger. `--format html` makes the bots browser-format players: they open the socket the table page opens,
read its HTML fragments and send its forms (`tools.loadtest.page`); `json`, the default, is the bots'
protocol. On PostgreSQL the connections to the database are sampled while the run plays (`pg_stat_activity`,
every half second) and their peak is printed. The command must use the same database as the servers (same
`DATABASE_URL`): it creates the accounts, their sessions and the tables there (`tools.loadtest.fixtures`).
Give `--url` several times (or comma-separated) to spread the players of every table over several server
processes. Bots act as fast as the flow allows unless `--think` gives them a human pause before each action
(`tools.loadtest.bot.ThinkTime`).
Only loopback URLs are accepted, and the run is bounded: at most MAX_TABLES x MAX_PLAYERS bots for at most
MAX_DURATION seconds.
"""

import asyncio
import json
import secrets
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from accounts.audit import audit_ledger
from cardroom.serve import loop_factory, quiet_gc
from tools.loadtest.connections import ConnectionSampler
from tools.loadtest.fixtures import LoopbackOnly, check_loopback, close_tables, prepare
from tools.loadtest.runner import ROUTES, WIRES, RunConfig, run

MAX_TABLES = 300
MAX_PLAYERS = 7
MAX_DURATION = 3600
MAX_THINK_MS = 6000  # the longest pause (1.5x) stays under the shortest default decision window (10 s)


class Command(BaseCommand):
    help = (
        "Load-test running servers with bots over real websockets; prints and optionally writes (JSON) "
        "rounds and actions per second, latencies (p50/p95/p99/max), errors by code and the ledger audit."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--url", action="append", required=True, help="base URL of a server (loopback only); repeatable"
        )
        parser.add_argument("--tables", type=int, default=10)
        parser.add_argument("--players", type=int, default=5, help="bots per table (1-7)")
        parser.add_argument("--duration", type=float, default=30.0, help="seconds of play")
        parser.add_argument("--json", dest="json_path", help="also write the results to this file")
        parser.add_argument("--min-bet", type=int, default=10)
        parser.add_argument(
            "--eager",
            action="store_true",
            help="every bot bets and readies at once (version races) instead of in seat order",
        )
        parser.add_argument(
            "--think",
            type=int,
            default=0,
            metavar="MS",
            help="mean pause before each action, in ms (uniform from 0.5x to 1.5x, seeded per bot; not in "
            "the latencies); 0, the default, plays as fast as the flow allows",
        )
        parser.add_argument(
            "--warmup",
            type=float,
            default=0.0,
            help="seconds of play before measuring, from when the last table started",
        )
        parser.add_argument(
            "--stagger",
            type=float,
            default=0.0,
            help="start the tables one after another over this many seconds (0, the default: all at once, "
            "so that every table deals, settles and opens its betting in the same moments, a burst no real "
            "site sees, which comes back round after round until the tables drift apart)",
        )
        parser.add_argument(
            "--route",
            choices=ROUTES,
            default="player",
            help="with several URLs: spread each table's players over the servers (player, the default: "
            "every broadcast crosses between processes) or put all of a table's players on one server "
            "(table, as a load balancer hashing the table's websocket path does)",
        )
        parser.add_argument("--drain", type=float, default=15.0, help="seconds to finish hands after the run")
        parser.add_argument(
            "--format",
            dest="wire",
            choices=sorted(WIRES),
            default="json",
            help="json (the default): the bots' JSON protocol; html: browser-format players, on the table "
            "page's socket, acting from its fragments and sending its forms",
        )

    def handle(self, *args, **options):
        tables, players, duration = options["tables"], options["players"], options["duration"]
        if not 1 <= tables <= MAX_TABLES:
            raise CommandError(f"--tables must be 1 to {MAX_TABLES}")
        if not 1 <= players <= MAX_PLAYERS:
            raise CommandError(f"--players must be 1 to {MAX_PLAYERS}")
        if not 0 < duration <= MAX_DURATION:
            raise CommandError(f"--duration must be more than 0 and at most {MAX_DURATION} seconds")
        if not 0 <= options["warmup"] <= MAX_DURATION:
            raise CommandError(f"--warmup must be 0 to {MAX_DURATION} seconds")
        if not 0 <= options["stagger"] <= MAX_DURATION:
            raise CommandError(f"--stagger must be 0 to {MAX_DURATION} seconds")
        think_ms = options["think"]
        if not 0 <= think_ms <= MAX_THINK_MS:
            raise CommandError(f"--think must be 0 to {MAX_THINK_MS} milliseconds")
        urls = [part.strip() for given in options["url"] for part in given.split(",") if part.strip()]
        try:
            ws_urls = [check_loopback(url) for url in urls]
        except LoopbackOnly as refused:
            raise CommandError(str(refused)) from None

        run_id = time.strftime("%m%d%H%M%S") + secrets.token_hex(2)
        self.stderr.write(f"run {run_id}: creating {tables} table(s) and {tables * players} account(s)")
        fixture = prepare(run_id=run_id, tables=tables, players=players, min_bet=options["min_bet"])
        config = RunConfig(
            ws_urls=ws_urls,
            duration=duration,
            drain=options["drain"],
            ordered=not options["eager"],
            route=options["route"],
            think_ms=think_ms,
            warmup=options["warmup"],
            stagger=options["stagger"],
            wire=options["wire"],
        )
        sampler = ConnectionSampler() if ConnectionSampler.available() else None
        if sampler is not None:
            sampler.start()
        quiet_gc()  # the bots' own pauses would be measured as the servers' latency
        try:
            recorder = asyncio.run(
                run(config, fixture, progress=self.stderr.write), loop_factory=loop_factory()
            )
        finally:
            connections = sampler.stop() if sampler is not None else None
            close_tables(fixture)
        if connections is not None:
            self.stderr.write(
                f"PostgreSQL connections to {connection.settings_dict['NAME']} during the run: peak "
                f"{connections['peak']}, median {connections['median']} ({connections['samples']} samples; "
                "the servers' and this load client's)"
                + (f"; sampling failed: {connections['error']}" if connections["error"] else "")
            )
        audit = audit_ledger()
        result = {
            "run": run_id,
            "urls": urls,
            "tables": tables,
            "players_per_table": players,
            "bots": tables * players,
            "mode": "eager" if options["eager"] else "ordered",
            "route": options["route"],
            "format": options["wire"],
            "think_ms": think_ms,
            "warmup_s": options["warmup"],
            "stagger_s": options["stagger"],
            **recorder.summary(),
            "postgres_connections": connections,
            "audit": {
                "ok": audit.ok,
                "wallets": audit.wallets,
                "entries": audit.entries,
                "sum_of_balances": audit.total,
                "discrepancies": audit.discrepancies[:20],
            },
        }
        text = json.dumps(result, indent=2)
        self.stdout.write(text)
        if options["json_path"]:
            Path(options["json_path"]).write_text(text + "\n")
        if not audit.ok:
            sys.exit(1)
