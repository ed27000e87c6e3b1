"""Response times and query counts of the history pages on the configured database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bj_bench .venv/bin/python manage.py migrate
    DATABASE_URL=... .venv/bin/python manage.py generate_history --users 10000 --rounds 1000000
    DATABASE_URL=... .venv/bin/python -m tools.benchmarks.history_pages [--repeat 20]

Requests go through Django's test client (the whole middleware stack, templates included, no network), logged
in as the player with the most rounds. Prints the median and 95th percentile time of each page and the number
of queries it ran. The figures are printed, never asserted: tests/history asserts the query counts.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardroom.settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402

from blackjack.history.records import PlayerRound, PlayerStats  # noqa: E402
from blackjack.history.selectors import BOARDS  # noqa: E402


def measure(client: Client, url: str, repeat: int) -> tuple[float, float, int, int]:
    for _ in range(2):  # warm caches (templates, strategy tables, the database's buffers)
        client.get(url)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
        times.append((time.perf_counter() - started) * 1000)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return statistics.median(times), p95, len(queries), response.status_code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    heavy = (
        PlayerStats.objects.filter(user__is_active=True).order_by("-rounds").select_related("user").first()
    )
    if heavy is None:
        print("No history: run `manage.py generate_history` first.", file=sys.stderr)
        return 1
    user = heavy.user
    latest = PlayerRound.objects.filter(user=user).order_by("-settled_at").first()
    pages = PlayerRound.objects.filter(user=user).count() // 25 + 1
    client = Client()
    client.force_login(user)
    urls = [(f"leaderboard ({key})", reverse("blackjack_leaderboard") + f"?board={key}") for key in BOARDS]
    urls += [
        ("history page 1", reverse("blackjack_history")),
        (f"history page {pages} (last)", reverse("blackjack_history") + f"?page={pages}"),
        ("history filtered (wins)", reverse("blackjack_history") + "?result=win"),
        ("profile (own, with stats)", reverse("profile")),
        ("public profile", reverse("player_profile", args=[user.username])),
        ("round replay", reverse("round_replay", args=[latest.round_id])),
        ("history export CSV (all rows)", reverse("blackjack_history_export", args=["csv"])),
    ]
    print(
        f"database: {connection.vendor}; players with stats: {PlayerStats.objects.count():,}; "
        f"player rounds: {PlayerRound.objects.count():,}; viewer {user.username} with {heavy.rounds:,} rounds"
    )
    print(f"{'page':<34}{'median ms':>10}{'p95 ms':>9}{'queries':>9}{'status':>8}")
    for name, url in urls:
        median, p95, count, status = measure(client, url, args.repeat)
        print(f"{name:<34}{median:>10.1f}{p95:>9.1f}{count:>9}{status:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
