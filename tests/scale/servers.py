"""Real server processes for the scale and fault tests: Daphne started as a subprocess on a free port, serving
the test database (the name pytest-django gave it, passed as DATABASE_URL, or SQLITE_PATH on SQLite) and the
given Redis; several of them behind HAProxy as `make run-cluster` runs them (`Cluster`); and a private
redis-server for tests that restart Redis.

Not a test module. The processes run the whole site as `make run-cluster` does (with Daphne's own options:
no `--websocket-max-message-size`, which would cap what the server sends too), with the table clock on.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from tools.haproxy import Balancer, server_name

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, timeout: float = START_TIMEOUT) -> None:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


def database_env(*, user: str | None = None) -> dict[str, str]:
    """DATABASE_URL (or SQLITE_PATH) of the test database this pytest run created."""
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        login = quote(user or db["USER"] or "postgres")
        if db.get("PASSWORD") and user is None:
            login += ":" + quote(db["PASSWORD"])
        host = db["HOST"] or "127.0.0.1"
        port = db["PORT"] or 5432
        return {"DATABASE_URL": f"postgres://{login}@{host}:{port}/{db['NAME']}"}
    return {"DATABASE_URL": "", "SQLITE_PATH": str(db["NAME"])}


class Server:
    """One Daphne process; `start()` again after `kill()` or `stop()` reuses the same port."""

    def __init__(
        self, *, redis_url: str | None = None, db_user: str | None = None, daphne_args=(), **extra_env
    ) -> None:
        self.port = free_port()
        self.daphne_args = list(daphne_args)  # Daphne's own options, e.g. a longer handshake window
        self.env = {
            **os.environ,
            **database_env(user=db_user),
            "REDIS_URL": redis_url if redis_url is not None else os.environ.get("REDIS_URL", ""),
            "SECRET_KEY": settings.SECRET_KEY,  # sessions made by the tests are signed with it
            "DEBUG": "1",
            "LIVE_TIMERS": "1",
            "LOG_LEVEL": "WARNING",
            **extra_env,
        }
        self.log_path = Path(tempfile.gettempdir()) / f"scale-daphne-{os.getpid()}-{self.port}.log"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    def start(self) -> "Server":
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "cardroom.serve",
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    *self.daphne_args,
                    "cardroom.asgi:application",
                ],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_for_port(self.port)
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind (no disconnect handlers, no closing of connections)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class Cluster:
    """Server processes behind HAProxy (`tools.haproxy.Balancer`, deploy/haproxy.cfg.template), as
    scripts/run-cluster.sh starts them: clients connect to `url`, a table's sockets go to one process by their
    path, and the processes trust the balancer's X-Forwarded-* headers (BEHIND_PROXY=1, --proxy-headers)."""

    def __init__(self, servers: list[Server]) -> None:
        self.servers = servers
        self.balancer = Balancer([f"127.0.0.1:{server.port}" for server in servers])

    @property
    def url(self) -> str:
        return self.balancer.url

    def ws(self, path: str) -> str:
        return self.balancer.url.replace("http", "ws", 1) + path

    def name(self, server: Server) -> str:
        """The balancer's name for a process (in its log and its health checks' states)."""
        return server_name(self.servers.index(server))

    def by_name(self, name: str) -> Server:
        return next(server for server in self.servers if self.name(server) == name)

    def start(self) -> "Cluster":
        self.balancer.start()
        return self

    def stop(self) -> None:
        self.balancer.stop()


class PrivateRedis:
    """A redis-server of our own on a free port, without persistence: restarting it loses every key."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @staticmethod
    def available() -> bool:
        return shutil.which("redis-server") is not None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "PrivateRedis":
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", tempfile.gettempdir(),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_port(self.port)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
