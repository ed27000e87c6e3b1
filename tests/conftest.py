"""Shared test fixtures: markers that need real services, a live Daphne server, and a real Chromium."""

import os
import random
import secrets
import shutil
import time

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import translation
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


#: The password of the players the `make_user` fixture makes.
PASSWORD = "Felt-and-chips-42"


@pytest.fixture
def make_user(django_user_model):
    def make(username: str, **extra):
        return django_user_model.objects.create_user(username=username, password=PASSWORD, **extra)

    return make


@pytest.fixture
def alice(make_user):
    return make_user("alice", display_name="Alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob", display_name="Bob")


@pytest.fixture(autouse=True)
def _seeded_secrets(request, monkeypatch):
    """The site draws its seeds with `secrets.token_hex` (shoes' and Durak tables' server seeds, the client
    seeds of players who give none, request ids): in the tests they come from a generator seeded by the test's
    id, so a test deals the same cards on every run and in any order. A test that wants chosen cards scripts
    its shoe; one that plays many random rounds seeds its own generator (`seeded_shoes`)."""
    rng = random.Random(request.node.nodeid)

    def token_hex(nbytes: int | None = None) -> str:
        size = 32 if nbytes is None else nbytes
        return f"{rng.getrandbits(8 * size):0{2 * size}x}"

    monkeypatch.setattr(secrets, "token_hex", token_hex)


@pytest.fixture(autouse=True)
def _english_after_each_test():
    """A request in Russian leaves Russian active in its thread (LocaleMiddleware activates a language and
    nothing deactivates it): each test starts from the default language whatever ran before it."""
    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Django's PBKDF2 is slow on purpose (about 0.3 s of CPU a password here); the suite creates and logs in
    thousands of users. Passwords hashed here are checked here (a server process the tests start hashes and
    checks its own: registration through a browser)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_configure(config):
    """The tests' own process enforces no deadline by itself (`settings.LIVE_TIMERS`): tests apply expiries
    and sweeps with the time they choose, and turn the timers on where they test them (the test servers'
    processes have them on: tests/daphne_server.py)."""
    django_settings.LIVE_TIMERS = False


@pytest.fixture(autouse=True)
def _no_table_actors_kept():
    """Each test starts without table actors (every game's), whatever its directory: one kept from another
    test would hold a table of a database that test rolled back, and its mailbox task belongs to that test's
    event loop, which no longer runs."""
    from blackjack import actors
    from durak import actor as durak_actor

    actors.forget_actors()
    durak_actor.forget_actors()
    yield
    actors.forget_actors()
    durak_actor.forget_actors()


@pytest.fixture(autouse=True)
def _no_clock_left():
    """No deadline clock outlives its test in the tests' own process. The site's ASGI module starts one when
    it is first imported with the timers on (a test under `LIVE_TIMERS=True` opening a socket in process):
    left running, it swept the tables of the browser tests' server, which shares the database file and
    renews no lease (its timers are off), and took them over, marking their players gone."""
    yield
    from live import clock

    clock.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Tests that need a service this run lacks skip. Under pytest-xdist (`make test` runs on every core) the
    browser tests go to one worker together, so that one Chromium runs at a time: two at once starved the
    live servers on 2 cores. Marked before xdist's own hook names each test's group."""
    on_postgres = connection.vendor == "postgresql"
    has_redis = bool(os.environ.get("REDIS_URL"))
    for item in items:
        if item.get_closest_marker("postgres") and not on_postgres:
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL=postgres://..."))
        if item.get_closest_marker("redis") and not has_redis:
            item.add_marker(pytest.mark.skip(reason="needs Redis: set REDIS_URL=redis://..."))
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.xdist_group("browser"))


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


@pytest.fixture(scope="module")
def browser(chromium_executable):
    """A Chromium for one test module. Playwright's sync API runs an event loop in this thread while it is
    open, which async tests and Django's async_to_sync refuse to share: closed after each module, it leaves
    the thread to the next module's tests (whatever their order). Django's guard against database calls
    from a running loop is off meanwhile (the loop is Playwright's, not ours)."""
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            instance = playwright.chromium.launch(executable_path=chromium_executable, args=CHROMIUM_ARGS)
            yield instance
            instance.close()
    finally:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


@pytest.fixture
def page(browser, live_site):
    """A fresh browser context and page; `page.goto(live_site + "/...")`."""
    context = browser.new_context(base_url=live_site)
    tab = context.new_page()
    tab.set_default_timeout(20_000)  # beside the slow suite's busiest tests, on 2 cores
    yield tab
    tab.close()
    context.close()
