"""A Daphne server in a child process that serves the test database: `start_daphne(...)`.

The child is started with the "spawn" method, a fresh interpreter that imports the site itself. A fork of the
pytest process would copy its threads' locks, asgiref's executors and the event loops of earlier async tests
without the threads that run them (Python warns about forking a multi-threaded process), and would inherit
whatever settings the test that happened to start it had overridden. The spawned child is told what it needs
explicitly: the test databases' names and its environment.
"""

import multiprocessing
import os
from functools import partial

from daphne.testing import DaphneProcess
from django.db import connections

SPAWN = multiprocessing.get_context("spawn")
START_TIMEOUT = 30


class SpawnedDaphneProcess(SPAWN.Process, DaphneProcess):
    """Daphne's test process, started by the spawn method (its `_Popen` comes from `SPAWN.Process`)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # DaphneProcess makes these in the default (fork) context, which a spawned child refuses.
        self.port = SPAWN.Value("i", 0)
        self.ready = SPAWN.Event()
        self.errors = SPAWN.Queue()


def start_daphne(*, clock: bool = False, static: bool = False) -> SpawnedDaphneProcess:
    """Start a server on a free port of 127.0.0.1 and wait until it listens; `clock` runs its deadline clock,
    `static` serves the static files as well. Stop it with `process.terminate(); process.join()`."""
    databases = {alias: connections[alias].settings_dict["NAME"] for alias in connections}
    # Durak bots move at a fifth of their site pace: a browser test plays whole games against them.
    environ = {"LIVE_TIMERS": "1" if clock else "0", "DURAK_BOT_SECONDS": "0.15"}
    application = partial(_application, databases=databases, environ=environ, static=static)
    process = SpawnedDaphneProcess(host="127.0.0.1", get_application=application)
    process.start()
    if not process.ready.wait(timeout=START_TIMEOUT):
        process.terminate()
        process.join(timeout=10)
        detail = process.errors.get_nowait()[1] if not process.errors.empty() else "no error reported"
        raise RuntimeError(f"Daphne did not start within {START_TIMEOUT} s: {detail}")
    return process


def _application(*, databases: dict[str, str], environ: dict[str, str], static: bool):
    """Runs in the child before Django is set up: point it at the test databases, then load the site."""
    os.environ.update(environ)
    from django.conf import settings

    for alias, name in databases.items():
        settings.DATABASES[alias]["NAME"] = name
    settings.DEBUG = False  # as pytest-django runs the tests

    from channels.routing import get_default_application

    application = get_default_application()
    if static:
        from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

        application = ASGIStaticFilesHandler(application)
    return application
