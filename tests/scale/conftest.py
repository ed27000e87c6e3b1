"""Fixtures of the scale, fault and security tests: real server processes on the test database."""

import pytest

from tests.scale.servers import Server


@pytest.fixture
def servers(transactional_db):
    """`servers(**env)`: start a Daphne process on the test database (stopped after the test)."""
    started: list[Server] = []

    def start(**env) -> Server:
        server = Server(**env).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
