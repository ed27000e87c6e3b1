# The two commands that matter: `make run` and `make test`. Everything else supports them.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-slow test-services coverage lint format clean run-cluster messages

$(STAMP): pyproject.toml
	@test -x $(PY) || $$(sh scripts/find-python.sh) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

## make run: install, migrate, create demo tables, serve http://127.0.0.1:8000 (SQLite, in-memory channel layer)
run: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	$(PY) manage.py runserver $(HOST):$(PORT)

## make test: the fast suite on the embedded default (SQLite), in random order, on TEST_WORKERS processes
## (pytest-xdist; the browser tests all on one); slow tests are left out and PostgreSQL/Redis tests skip
## without their URLs
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

## make test-slow: only the slow tests (statistics, benchmark-like runs, browser sessions over ~5 s), on
## TEST_WORKERS processes like `make test`
test-slow: $(STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup -m slow $(PYTEST_ARGS)

## make test-services: only the tests that need real PostgreSQL and Redis (set DATABASE_URL and REDIS_URL)
test-services: $(STAMP)
	$(PY) -m pytest -m "postgres or redis" --create-db $(PYTEST_ARGS)

## make coverage: the fast and the slow tests with branch coverage, then its summary (the test process only)
coverage: $(STAMP)
	$(PY) -m pytest -m "" --cov --cov-report=term $(PYTEST_ARGS)

## make run-cluster N=2: N Daphne processes on ports 8001.. sharing PostgreSQL and Redis, behind HAProxy on
## http://127.0.0.1:8000 (docs/deployment.md; BALANCER=none: the processes alone)
run-cluster: $(STAMP)
	N=$(or $(N),2) bash scripts/run-cluster.sh

## make lint: ruff, the import contracts (pyproject.toml's [tool.importlinter]) and mypy
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy


## make messages: collect the marked strings into locale/ru/LC_MESSAGES/django.po (needs GNU gettext), then
## compile it; commit both files (a fresh machine serves the translation without gettext)
MESSAGES_IGNORE := --ignore=tests --ignore=tools --ignore=staticfiles --ignore=deploy --ignore=docs --ignore=locale
messages: $(STAMP)
	$(PY) manage.py makemessages --locale ru --no-obsolete --add-location file $(MESSAGES_IGNORE)
	$(PY) manage.py compilemessages --locale ru --ignore=.venv

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) db.sqlite3 test_db.sqlite3 staticfiles .pytest_cache
