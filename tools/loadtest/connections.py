"""The PostgreSQL connections of a load run: `ConnectionSampler` counts the server backends connected to the
site's database (`pg_stat_activity`) every `every` seconds while the run plays, from a connection of its own
that it leaves out of the count, and keeps the peak. The count takes in every client of the database: the
servers' pools and this load client's own (its accounts, tables and audit go through Django's pool too)."""

import threading
import time

import psycopg
from django.db import connection

COUNT = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"


class ConnectionSampler(threading.Thread):
    def __init__(self, every: float = 0.5) -> None:
        super().__init__(daemon=True, name="pg-connections")
        self.every = every
        self.samples: list[tuple[float, int]] = []  # (time.time(), connections)
        self.done = threading.Event()
        self.failed: str | None = None

    @staticmethod
    def available() -> bool:
        return connection.vendor == "postgresql"

    def run(self) -> None:
        db = connection.settings_dict
        params = {
            "dbname": db["NAME"],
            "host": db["HOST"] or "127.0.0.1",
            "port": db["PORT"] or 5432,
            "user": db["USER"],
            "autocommit": True,
        }
        if db["PASSWORD"]:
            params["password"] = db["PASSWORD"]
        try:
            with psycopg.connect(**params) as sampling:
                while not self.done.is_set():
                    (count,) = sampling.execute(COUNT).fetchone()
                    self.samples.append((time.time(), count))
                    self.done.wait(self.every)
        except psycopg.Error as error:  # reported, not raised: the run's own figures still count
            self.failed = str(error)

    def stop(self) -> dict:
        """Stop sampling; the peak, median and number of samples (None without any sample)."""
        self.done.set()
        self.join()
        counts = sorted(count for _, count in self.samples)
        return {
            "peak": counts[-1] if counts else None,
            "median": counts[len(counts) // 2] if counts else None,
            "samples": len(counts),
            "every_s": self.every,
            "error": self.failed,
        }
