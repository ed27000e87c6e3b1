"""Shared test fixtures: markers that need real services, a live Daphne server, and a real Chromium."""

import os
import shutil
import time

import pytest
from django.db import connection
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Hypothesis: "ci" (the default, and what `make test` and CI run) draws the same examples on every run, with
# no time limit per example and no database of past failures, so a run's result depends on the code alone.
# HYPOTHESIS_PROFILE=explore draws new examples each run and keeps the failures it finds in .hypothesis/ to
# replay them first next time: run it to look for bugs, then pin what it finds with @example.
hypothesis_settings.register_profile(
    "ci", derandomize=True, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.register_profile("explore", derandomize=False, deadline=None, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(autouse=True)
def _no_table_actors_kept():
    """Each test starts without table actors (`settings.TABLE_ACTORS`), whatever its directory: one kept from
    another test would hold a table of a database that test rolled back, and its mailbox task belongs to that
    test's event loop, which no longer runs."""
    from tables import actors

    actors.forget_actors()
    yield
    actors.forget_actors()


@pytest.fixture(autouse=True)
def _fresh_shared_views():
    """Each test starts with nothing kept in the process about tables: test databases reuse table ids and
    versions, which in production name one table state for good. That is the kept views and the newest chat
    line heard of per table id: left over from an earlier test's chat at a table with the same id, it made
    this process refuse every shared part announced without that line (`viewmodel.adopt_shared`)."""
    from tables import viewmodel

    viewmodel.forget_shared_views()
    with viewmodel._shared_lock:
        viewmodel._chat_seen.clear()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Browser tests run last: Playwright's sync API leaves an event loop running behind it. After every other
    plugin's reordering (pytest-randomly's shuffle, pytest-django's grouping), so nothing moves them back."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
    on_postgres = connection.vendor == "postgresql"
    has_redis = bool(os.environ.get("REDIS_URL"))
    for item in items:
        if item.get_closest_marker("postgres") and not on_postgres:
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL=postgres://..."))
        if item.get_closest_marker("redis") and not has_redis:
            item.add_marker(pytest.mark.skip(reason="needs Redis: set REDIS_URL=redis://..."))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a browser test may not skip: a skipped browser test is a failed one."""
    report = yield
    if os.environ.get("CI") and report.skipped and item.get_closest_marker("browser"):
        report.outcome = "failed"
        report.longrepr = f"browser test skipped under CI: {report.longrepr}"
    return report


@pytest.fixture(scope="session", autouse=True)
def _emptying_the_database_outlasts_a_deadlock():
    """After each transactional test the tables are emptied (Django's flush). With a live server on
    PostgreSQL, the server may still be handling the test's closed websockets (a disconnect writes its
    player's presence) when that happens, and PostgreSQL may end the emptying as a deadlock with it: then
    empty them again, once the server's write is done. (SQLite waits on its lock instead.)"""
    if connection.vendor != "postgresql":
        yield
        return
    from django.core.management.base import CommandError
    from django.db import OperationalError
    from django.test import TransactionTestCase

    original = TransactionTestCase._fixture_teardown

    def fixture_teardown(self):
        for attempt in range(5):
            try:
                return original(self)
            except CommandError as error:
                cause = error.__cause__
                if attempt == 4 or not (isinstance(cause, OperationalError) and "deadlock" in str(cause)):
                    raise
                time.sleep(0.2)

    TransactionTestCase._fixture_teardown = fixture_teardown
    yield
    TransactionTestCase._fixture_teardown = original


@pytest.fixture(scope="session")
def live_site(django_db_setup):
    """A real Daphne server (HTTP and websockets) in a child process, serving the test database and the static
    files; its deadline clock is off, as in every other test.

    Tests that use it must commit their data (use `transactional_db`): the server runs in another process.
    Yields the base URL, e.g. "http://127.0.0.1:53211".
    """
    from tests.daphne_server import start_daphne

    process = start_daphne(static=True)
    yield f"http://127.0.0.1:{process.port.value}"
    process.terminate()
    process.join(timeout=10)


@pytest.fixture(scope="session")
def chromium_executable():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        if os.environ.get("CI"):
            pytest.fail("Chromium is required in CI (apt-get install -y chromium)")
        pytest.skip("no Chromium installed: apt-get install -y chromium")
    return path


@pytest.fixture(scope="session")
def browser(chromium_executable):
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_executable, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, live_site):
    """A fresh browser context and page; `page.goto(live_site + "/...")`."""
    context = browser.new_context(base_url=live_site)
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    yield tab
    tab.close()
    context.close()
