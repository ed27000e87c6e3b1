"""Fixtures of the scale, fault and security tests: real server processes on the test database."""

import os

import pytest
import redis
from django.conf import settings
from django.db import connection

from tests.scale.servers import Cluster, Server
from tools import haproxy

TERMINATE = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s"


@pytest.fixture
def servers(transactional_db):
    """`servers(**env)`: start a Daphne process on the test database (stopped after the test). With Redis, the
    channel layer's keys are cleared first: an earlier test's killed processes leave group memberships behind
    (for a day, channels-redis's group expiry), and the next test's users have the same primary keys."""
    if settings.REDIS_URL:
        client = redis.Redis.from_url(settings.REDIS_URL)
        for key in client.scan_iter(match="asgi*"):
            client.delete(key)
        client.close()
    started: list[Server] = []

    def start(**env) -> Server:
        server = Server(**env).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def cluster(servers):
    """`cluster(count=2, **env)`: `count` Daphne processes (as `servers`) behind HAProxy on a free port,
    stopped after the test. Without haproxy the test skips, except under CI (CI=true), where it fails: CI
    installs it (.ci/run), and the balancer the docs describe must be what CI runs."""
    if not haproxy.available():
        message = "needs HAProxy: apt-get install -y haproxy"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI installs it: .ci/run)")
        pytest.skip(message)
    started: list[Cluster] = []

    def start(count: int = 2, **env) -> Cluster:
        behind = {"BEHIND_PROXY": "1", "daphne_args": ["--proxy-headers", *env.pop("daphne_args", ())]}
        made = Cluster([servers(**behind, **env) for _ in range(count)]).start()
        started.append(made)
        return made

    yield start
    for made in started:
        made.stop()


@pytest.fixture
def fault_role(transactional_db):
    """A PostgreSQL login role with full rights on the test database, which the test can lock out."""
    name = f"scale_fault_{os.getpid()}"
    with connection.cursor() as cursor:
        cursor.execute(f"DROP ROLE IF EXISTS {name}")
        cursor.execute(f"CREATE ROLE {name} LOGIN")
        cursor.execute(f"GRANT ALL PRIVILEGES ON ALL TABLES IN SCHEMA public TO {name}")
        cursor.execute(f"GRANT ALL PRIVILEGES ON ALL SEQUENCES IN SCHEMA public TO {name}")
    yield name
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER ROLE {name} NOLOGIN")
        cursor.execute(TERMINATE, [name])
        cursor.execute(f"DROP OWNED BY {name}")
        cursor.execute(f"DROP ROLE {name}")
