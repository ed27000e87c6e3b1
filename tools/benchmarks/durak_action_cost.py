"""Benchmark: what one Durak table action costs the server, in process, without sockets.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/durak_bench \
        .venv/bin/python -m tools.benchmarks.durak_action_cost --format html
    .venv/bin/python -m tools.benchmarks.durak_action_cost --actions 2000 --format json --profile cost.prof

Four players at a four-seat table (Podkidnoy, all sides, six a bout, casual, rated) play games back to back
until `--actions` actions: each move is the `normal` bot's choice for the player's seat (`durak.bot.choose`),
applied as the player's command through the table's actor (`durak.actor.DurakActor`, as a consumer's command
reaches it); between games each player says ready, the last ready deals. After every committed version each
viewer's message is built as the consumers of the process build it (`DurakConsumer.encode` of the version the
fan-out hands them): the four players and one spectator, in JSON (bots) or, with `--format html`, as the
browser's fragments of `durak/live.jinja`.
Prints the milliseconds of CPU and the SQL statements per action, split into the action itself and the views,
and on a local PostgreSQL the CPU its backend process spent serving them. The deals are seeded (`--seed`), so
two runs play the same games. Uses DATABASE_URL (SQLite by default, a throw-away file; a PostgreSQL database
must exist: `createdb -h 127.0.0.1 -U postgres durak_bench`); the database is migrated and the static files
collected first. The helpers are blackjack's benchmark's (`tools.benchmarks.action_cost`).
"""

import argparse
import contextlib
import cProfile
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tools.benchmarks.action_cost import DatabaseCpu, prepare_site  # noqa: E402

PLAYERS = 4


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--actions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1, help="seeds the decks (the same games every run)")
    parser.add_argument("--profile", help="write a cProfile of the measured part to this file")
    parser.add_argument(
        "--format",
        choices=("json", "html"),
        default="json",
        help="the viewers' format: json (bots) or html (browsers: the live table's fragments)",
    )
    args = parser.parse_args()

    os.environ["LIVE_TIMERS"] = "0"  # nobody waits here: every move is made at once
    _scratch = prepare_site()  # kept alive: the scratch SQLite database lives in it
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import AnonymousUser
    from django.db import connection

    from durak import bot, services
    from durak.actor import DurakActor
    from durak.consumers import DurakConsumer
    from durak.models import DurakTable
    from durak.table import PLAYING, Act, Ready, Sit
    from live import fanout

    fanout._on_loop = lambda *args, **kwargs: None  # nobody is connected: the views are built below
    rng = random.Random(args.seed)

    def seed() -> str:
        return rng.randbytes(32).hex()

    stamp = time.strftime("%H%M%S")
    users = [
        get_user_model().objects.create_user(f"durak-cost-{stamp}-{n}", password=None)
        for n in range(1, PLAYERS + 1)
    ]
    table = services.open_table(
        user=users[0],
        name=f"cost {stamp}",
        variant="podkidnoy",
        attack="all_sides",
        limit="six",
        seats=PLAYERS,
        stake=0,
        rated=True,
        turn_seconds=30,
    )
    DurakTable.objects.filter(pk=table.pk).update(next_server_seed=seed())
    actor = DurakActor.actor_for(table.pk)
    for user in users:
        actor.handle(Sit(user.pk, user.public_name))

    def viewer(user) -> DurakConsumer:
        consumer = DurakConsumer()
        consumer.user = user
        consumer.json_format = args.format == "json"
        consumer.setup({})  # what its connection holds of the page, as the consumer keeps it
        return consumer

    viewers = [viewer(user) for user in users] + [viewer(AnonymousUser())]

    def next_command():
        """The next player's command: their move in a game, else the first unready player's ready."""
        state = actor.state
        if state.status == PLAYING:
            seat = state.to_act()
            action = bot.choose(state.game.state, seat)
            return Act(state.seats[seat].user_id, {k: v for k, v in action.items() if k != "player"})
        waiting = next(s for s in state.seats if not s.is_ready)
        return Ready(waiting.user_id, fresh_seed=seed(), seed=seed())

    action_s = view_s = 0.0
    action_statements = view_statements = done = 0
    games = actor.state.games_played
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    # Statements are counted as they are executed, not through Django's query log (see action_cost).
    executed = [0]

    def count(execute, sql, params, many, context):
        executed[0] += 1
        return execute(sql, params, many, context)

    database_cpu = DatabaseCpu(connection)
    stack = contextlib.ExitStack()
    stack.enter_context(connection.execute_wrapper(count))
    started = time.process_time()
    while done < args.actions:
        command = next_command()
        if profiler:
            profiler.enable()
        before = executed[0]
        t0 = time.process_time()
        version = actor.handle(command)
        t1 = time.process_time()
        action_statements += executed[0] - before
        before = executed[0]
        # As the viewers of the process get it (`live.fanout.show`): the table the actor committed, the
        # same object for every viewer; each encodes its own view of it.
        shared = actor.state
        assert shared.version == version, (shared.version, version)
        for consumer in viewers:
            consumer.encode(shared)
        t2 = time.process_time()
        if profiler:
            profiler.disable()
        view_statements += executed[0] - before
        action_s += t1 - t0
        view_s += t2 - t1
        done += 1
    total = time.process_time() - started
    stack.close()
    database_s = database_cpu.spent()
    if profiler:
        profiler.dump_stats(args.profile)
    games = actor.state.games_played - games
    print(
        f"{connection.vendor}, {args.format} views: {done} actions ({games} games), {len(viewers)} viewers "
        f"each | action {1000 * action_s / done:.2f} ms CPU, {action_statements / done:.1f} statements | "
        f"views {1000 * view_s / done:.2f} ms CPU, {view_statements / done:.1f} statements | "
        f"total {1000 * total / done:.2f} ms CPU per action"
    )
    if database_s is not None:
        print(f"the database's own CPU (its backend process): {1000 * database_s / done:.2f} ms an action")


if __name__ == "__main__":
    main()
