"""HAProxy in front of N server processes, from `deploy/haproxy.cfg.template`: the configuration
(`python -m tools.haproxy --bind 127.0.0.1:8000 --server 127.0.0.1:8001 --server 127.0.0.1:8002
--stats-socket PATH`, as scripts/run-cluster.sh writes it) and a `Balancer` that runs HAProxy in the
foreground as a child process (the scale tests, `tools.benchmarks.load`).

Server k (from 1) is named `p<k>` in both backends; the table backend's servers track the page backend's, so
each process is health-checked once (`GET /healthz`) and both backends agree on whether it is up.
"""

import argparse
import csv
import io
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "deploy" / "haproxy.cfg.template"


def executable() -> str | None:
    """HAProxy's program, also where Debian puts it outside an ordinary user's PATH (/usr/sbin)."""
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")


def available() -> bool:
    return executable() is not None


def server_name(index: int) -> str:
    """The name of the `index`-th server (from 0) in the configuration and in HAProxy's log and stats."""
    return f"p{index + 1}"


def config(*, bind: str, servers: list[str], stats_socket: str, cert: str | None = None) -> str:
    """The configuration for HAProxy listening on `bind` (`host:port`; with `cert`, a PEM file of certificate
    and key, it terminates TLS there) in front of `servers` (`host:port` each)."""
    if not servers:
        raise ValueError("at least one server")
    pages = [f"    server {server_name(k)} {address} check" for k, address in enumerate(servers)]
    tables = [
        f"    server {server_name(k)} {address} track pages/{server_name(k)}"
        for k, address in enumerate(servers)
    ]
    return Template(TEMPLATE.read_text()).substitute(
        bind=f"{bind} ssl crt {cert}" if cert else bind,
        stats_socket=stats_socket,
        page_servers="\n".join(pages),
        table_servers="\n".join(tables),
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Balancer:
    """HAProxy on 127.0.0.1:`port` (a free one by default) in front of `servers`, run in the foreground as a
    child of this process; its log (one line per request or websocket, written when it ends) goes to
    `log_path`. `start()` returns once every server is up by its health check."""

    def __init__(self, servers: list[str], *, port: int | None = None) -> None:
        self.servers = list(servers)
        self.port = port or free_port()
        self.directory = Path(tempfile.mkdtemp(prefix=f"haproxy-{self.port}-"))
        self.config_path = self.directory / "haproxy.cfg"
        self.stats_socket = self.directory / "stats.sock"
        self.log_path = self.directory / "haproxy.log"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, *, timeout: float = 30.0) -> "Balancer":
        self.config_path.write_text(
            config(bind=f"127.0.0.1:{self.port}", servers=self.servers, stats_socket=str(self.stats_socket))
        )
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [executable() or "haproxy", "-db", "-f", str(self.config_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        ends = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"haproxy exited ({self.process.returncode}): {self.output()[-2000:]}")
            try:
                if all(state == "UP" for state in self.states().values()):
                    return self
            except OSError:
                pass  # not listening on its stats socket yet
            if time.monotonic() > ends:
                raise RuntimeError(f"haproxy's servers not all up after {timeout} s: {self.output()[-2000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def command(self, line: str) -> str:
        """The answer of HAProxy's stats socket to one command (`show stat`, `show servers state`...)."""
        with socket.socket(socket.AF_UNIX) as stats:
            stats.settimeout(5)
            stats.connect(str(self.stats_socket))
            stats.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := stats.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def states(self, backend: str = "pages") -> dict[str, str]:
        """Server name -> its status in `backend` as the health checks see it (UP, DOWN, "UP 1/2"...)."""
        rows = csv.DictReader(io.StringIO(self.command("show stat").lstrip("# ")))
        return {
            row["svname"]: row["status"]
            for row in rows
            if row["pxname"] == backend and row["svname"] not in ("FRONTEND", "BACKEND")
        }

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def routes(self) -> list[tuple[str, str]]:
        """(server name, path) of each request or websocket logged so far (logged when it ended)."""
        found = []
        for line in self.output().splitlines():
            parts = line.split()
            # "<client> [<time>] <frontend> <backend>/<server> <status> <ms> ms <method> <path>"
            if len(parts) == 9 and parts[2] == "site" and "/" in parts[3]:
                found.append((parts[3].split("/", 1)[1], parts[8]))
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description="Print HAProxy's configuration for the site's processes.")
    parser.add_argument("--bind", required=True, help="host:port HAProxy listens on")
    parser.add_argument("--server", action="append", required=True, help="host:port of a process; repeatable")
    parser.add_argument("--stats-socket", required=True, help="path of HAProxy's stats socket")
    parser.add_argument("--cert", help="PEM file (certificate and key): terminate TLS on --bind")
    args = parser.parse_args()
    print(config(bind=args.bind, servers=args.server, stats_socket=args.stats_socket, cert=args.cert), end="")


if __name__ == "__main__":
    main()
