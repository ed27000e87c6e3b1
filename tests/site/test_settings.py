"""Settings come from the environment; production values pass Django's deployment checks."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from blackjack_site.env import env_bool, env_int, env_list

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args, **env):
    dropped = {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY"}
    clean = {k: v for k, v in os.environ.items() if k not in dropped}
    clean.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_production_values():
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING", DEBUG="0", SECRET_KEY=secrets.token_urlsafe(50)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    result = run_manage("check", DEBUG="0", SECRET_KEY="")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_database_and_redis_urls_switch_the_backends():
    code = (
        "from django.conf import settings;"
        "print(settings.DATABASES['default']['ENGINE']);"
        "print(settings.CHANNEL_LAYERS['default']['BACKEND'])"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="blackjack_site.settings",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/anything",
        REDIS_URL="redis://127.0.0.1:6379/0",
    )
    out = subprocess.run(
        [sys.executable, "-c", "import django; django.setup();" + code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert out == ["django.db.backends.postgresql", "blackjack_site.channel_layer.RedisChannelLayer"]


@pytest.mark.skipif(bool(os.environ.get("DATABASE_URL") or os.environ.get("REDIS_URL")), reason="services on")
def test_embedded_default_is_sqlite_and_in_memory(settings):
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert settings.DATABASES["default"]["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"


def test_env_helpers_parse_and_refuse(monkeypatch):
    monkeypatch.setenv("X_BOOL", "yes")
    monkeypatch.setenv("X_INT", "42")
    monkeypatch.setenv("X_LIST", "a.example, b.example,,")
    assert env_bool("X_BOOL", False) is True
    assert env_int("X_INT", 0) == 42
    assert env_list("X_LIST", []) == ["a.example", "b.example"]
    assert env_bool("X_MISSING", True) is True
    monkeypatch.setenv("X_BOOL", "maybe")
    with pytest.raises(ImproperlyConfigured, match="not a boolean"):
        env_bool("X_BOOL", False)
    monkeypatch.setenv("X_INT", "4.5")
    with pytest.raises(ImproperlyConfigured, match="not a whole number"):
        env_int("X_INT", 0)
