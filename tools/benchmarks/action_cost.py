"""Benchmark: what one table action costs the server, in process, without sockets.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/blackjack_bench \
        .venv/bin/python -m tools.benchmarks.action_cost
    .venv/bin/python -m tools.benchmarks.action_cost --actions 2000 --players 5 --profile cost.prof
    .venv/bin/python -m tools.benchmarks.action_cost --actor --format html

Bots of one table play basic strategy through `blackjack.services.perform` (as the consumer calls it; with
`--actor`, through the table's actor, `blackjack.actors`, which keeps the table's state in memory), and after
every action each seated player's view is built as the consumers of the process get it, in JSON (or, with
`--format html`, as the browser's HTML fragments, `blackjack.rendering`): from the shared part the actor built
from memory, or (services) from the shared part read once from the database.
Prints the milliseconds of CPU and the SQL statements (each one of a pipeline counted) per action, split into
the action itself and the views (and the actions that ended a round, which settle it, apart), and on a local
PostgreSQL the CPU its backend process spent serving them, so a change to the hot path can be measured
without the noise of a whole load test. Uses DATABASE_URL (SQLite by default, a throw-away file; a
PostgreSQL database must exist: `createdb -h 127.0.0.1 -U postgres blackjack_bench`); the database is
migrated and the static files collected first.
"""

import argparse
import contextlib
import cProfile
import os
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


class DatabaseCpu:
    """CPU time spent by the PostgreSQL backend process serving `connection`, when that process is on this
    machine (its /proc entry readable); otherwise `spent()` is None."""

    def __init__(self, connection) -> None:
        self.path = None
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                path = Path(f"/proc/{cursor.fetchone()[0]}/stat")
            if path.exists():
                self.path = path
        self.start = self._seconds()

    def _seconds(self) -> float | None:
        if self.path is None:
            return None
        fields = self.path.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def spent(self) -> float | None:
        """Seconds of CPU the backend has spent since this was made."""
        now = self._seconds()
        return None if now is None else now - self.start


def prepare_site() -> tempfile.TemporaryDirectory:
    """Set Django up for a benchmark in this process (DEBUG off; DATABASE_URL, or SQLite in a scratch folder,
    returned to be kept alive), migrate the database and collect the static files the views name."""
    scratch = tempfile.TemporaryDirectory()
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch.name}/cost.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardroom.settings")
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("SECRET_KEY", "action-cost-benchmark-only")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    call_command("collectstatic", verbosity=0, interactive=False)  # DEBUG=0: the views name hashed files
    return scratch


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--actions", type=int, default=1000)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--profile", help="write a cProfile of the measured part to this file")
    parser.add_argument(
        "--actor",
        action="store_true",
        help="apply the actions through the table's actor (tables.actors: state kept in memory, one fenced "
        "write per action) instead of tables.services.perform",
    )
    parser.add_argument(
        "--format",
        choices=("json", "html"),
        default="json",
        help="the viewers' format: json (bots) or html (browsers: the live table's fragments)",
    )
    parser.add_argument(
        "--whole",
        action="store_true",
        help="HTML: send every viewer the whole page each time, as the page's first message (by default each "
        "viewer's connection keeps what its page holds and is sent only what changed)",
    )
    parser.add_argument(
        "--deflate",
        action="store_true",
        help="also compress each viewer's messages as permessage-deflate would (zlib, raw deflate, the "
        "connection's window kept between messages; Daphne does not offer it): prints the bytes and the CPU",
    )
    args = parser.parse_args()

    _scratch = prepare_site()  # kept alive: the scratch SQLite database lives in it
    from django.contrib.auth import get_user_model
    from django.db import connection

    from blackjack import actors, services
    from blackjack.engine.rules import PRESETS
    from blackjack.engine.strategy import basic_strategy
    from blackjack.models import RulePreset
    from blackjack.rendering import Page, live_html
    from blackjack.viewmodel import build_table_view, read_shared, view_of
    from live import fanout
    from tools.loadtest.bot import next_action
    from tools.loadtest.fixtures import PRESET

    fanout._on_loop = lambda *args, **kwargs: None  # nobody is connected: the views are built below
    rules = PRESETS[PRESET]
    preset, _ = RulePreset.objects.get_or_create(
        name=PRESET, defaults={"rules": rules.to_dict(), "description": rules.summary()}
    )
    stamp = time.strftime("%H%M%S")
    table = services.create_table(name=f"cost {stamp}", preset=preset, min_bet=10, max_bet=500)
    users = [
        get_user_model().objects.create_user(f"cost-{stamp}-{n}", password=None)
        for n in range(1, args.players + 1)
    ]
    strategy = basic_strategy(rules)
    for seat, user in enumerate(users, start=1):
        view = build_table_view(table_id=table.pk, user=user)
        services.perform(
            table_id=table.pk, user=user, action={"action": "sit", "seat": seat}, expected_version=view["v"]
        )

    def through_actor(*, table_id, user, action, expected_version):
        return actors.actor_for(table_id).handle(actors.player_action(user, action, expected_version))

    perform = through_actor if args.actor else services.perform
    action_s = view_s = settling_s = 0.0
    action_statements = view_statements = settling_statements = settlements = 0
    done = 0
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    views = {user.pk: build_table_view(table_id=table.pk, user=user) for user in users}
    pages = {user.pk: Page() for user in users}  # what each viewer's page holds (HTML)
    sent_bytes = deflated_bytes = 0
    deflate_s = 0.0
    deflaters = {user.pk: zlib.compressobj(6, zlib.DEFLATED, -15) for user in users}
    # Statements are counted as they are executed, not through Django's query log, which formats every
    # statement with its parameters (CPU of its own that a server with DEBUG off does not spend).
    executed = [0]

    def count(execute, sql, params, many, context):
        executed[0] += 1
        return execute(sql, params, many, context)

    database_cpu = DatabaseCpu(connection)
    stack = contextlib.ExitStack()
    stack.enter_context(connection.execute_wrapper(count))
    started = time.process_time()
    while done < args.actions:
        moved = False
        for seat, user in enumerate(users, start=1):
            state = views[user.pk]
            action = next_action(state, seat, strategy, min_bet=10, stopping=False)
            if action is None:
                continue
            if profiler:
                profiler.enable()
            before = executed[0]
            t0 = time.process_time()
            version = perform(table_id=table.pk, user=user, action=action, expected_version=state["v"])
            t1 = time.process_time()
            statements_of_action = executed[0] - before
            action_statements += statements_of_action
            before = executed[0]
            views = {}
            # As the viewers of the process get it (`blackjack.broadcast`): the actor's shared part, or the
            # one read for all of them; each viewer adds its own part.
            shared = actors.actor_for(table.pk).view if args.actor else read_shared(table.pk)
            assert shared.version == version
            for viewer in users:
                found = view_of(shared, viewer)
                if args.format == "json":
                    message = found.json()
                else:
                    page = None if args.whole else pages[viewer.pk]
                    message = live_html(found, user=viewer, page=page)
                sent_bytes += len(message.encode())
                if args.deflate:
                    d0 = time.process_time()
                    deflater = deflaters[viewer.pk]
                    deflated_bytes += len(
                        deflater.compress(message.encode()) + deflater.flush(zlib.Z_SYNC_FLUSH)
                    )
                    deflate_s += time.process_time() - d0
                views[viewer.pk] = found.view
            t2 = time.process_time()
            if profiler:
                profiler.disable()
            view_statements += executed[0] - before
            action_s += t1 - t0
            if views[user.pk]["table"]["phase"] == "settled" and state["table"]["phase"] != "settled":
                settling_s += t1 - t0
                settling_statements += statements_of_action
                settlements += 1
            view_s += t2 - t1
            done += 1
            moved = True
            break
        if not moved:
            raise SystemExit(f"no bot can act at version {views[users[0].pk]['v']}")
    total = time.process_time() - started
    stack.close()
    database_ms = database_cpu.spent()
    if profiler:
        profiler.dump_stats(args.profile)
    db = connection.vendor
    db += " (actor)" if args.actor else ""
    db += f", {args.format} views"
    print(
        f"{db}: {done} actions, {args.players} viewers each | action {1000 * action_s / done:.2f} ms CPU, "
        f"{action_statements / done:.1f} statements | views {1000 * view_s / done:.2f} ms CPU, "
        f"{view_statements / done:.1f} statements | total {1000 * total / done:.2f} ms CPU per action"
    )
    print(f"bytes sent a viewer an action: {sent_bytes / done / args.players:,.0f}")
    if args.deflate:
        print(
            f"with permessage-deflate: {deflated_bytes / done / args.players:,.0f} bytes a viewer an action, "
            f"{1000 * deflate_s / done:.3f} ms of CPU an action to compress (in the views' figure above)"
        )
    if database_ms is not None:
        print(f"the database's own CPU (its backend process): {1000 * database_ms / done:.2f} ms an action")
    if settlements:
        print(
            f"of which {settlements} actions ended a round (the dealer's play and the settlement): "
            f"{1000 * settling_s / settlements:.2f} ms CPU, "
            f"{settling_statements / settlements:.1f} statements each"
        )


if __name__ == "__main__":
    main()
