"""Settings come from the environment; production values pass Django's deployment checks."""

import os
import runpy
import secrets
import subprocess
import sys
from pathlib import Path
from unittest.mock import patch

import pytest
from django.core.exceptions import ImproperlyConfigured

from cardroom.env import env_bool, env_int, env_list

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
        DJANGO_SETTINGS_MODULE="cardroom.settings",
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
    assert out == ["django.db.backends.postgresql", "cardroom.channel_layer.RedisChannelLayer"]


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


def channel_layer_keys(**env) -> list[str]:
    """The Redis layer's keys as the settings module configures them from `env`, evaluated afresh (as a new
    process would) without the cost of starting one."""
    clean = {k: v for k, v in os.environ.items() if k not in {"CHANNEL_LAYER_KEY", "SECRET_KEY", "DEBUG"}}
    clean.update(REDIS_URL="redis://127.0.0.1:6379/0", **env)
    with patch.dict(os.environ, clean, clear=True):
        configured = runpy.run_path(str(ROOT / "cardroom" / "settings.py"))
    return configured["CHANNEL_LAYERS"]["default"]["CONFIG"]["symmetric_encryption_keys"]


def test_the_redis_layer_is_keyed_from_the_secret_key_or_channel_layer_key(settings):
    """Processes that share SECRET_KEY share the key (this one and a fresh one), which is not SECRET_KEY."""
    assert channel_layer_keys(SECRET_KEY=settings.SECRET_KEY) == settings.CHANNEL_LAYER_KEYS
    (derived,) = settings.CHANNEL_LAYER_KEYS
    assert settings.SECRET_KEY not in derived
    assert channel_layer_keys(SECRET_KEY=settings.SECRET_KEY + "2") != [derived]
    rotating = channel_layer_keys(SECRET_KEY=settings.SECRET_KEY, CHANNEL_LAYER_KEY="new-key, old-key")
    assert rotating == ["new-key", "old-key"]


def test_a_rotated_key_still_reads_what_the_old_one_wrote_and_a_stranger_reads_nothing():
    from cryptography.fernet import InvalidToken

    from cardroom.channel_layer import RedisChannelLayer

    def serializer(*keys):
        return RedisChannelLayer(
            hosts=["redis://127.0.0.1:6379/0"], symmetric_encryption_keys=list(keys)
        )._serializer

    message = {"type": "table.changed", "v": 7}
    written = serializer("old").serialize(message)
    assert serializer("new", "old").deserialize(written) == message
    assert serializer("new", "old").serialize(message) != written
    with pytest.raises(InvalidToken):
        serializer("new").deserialize(written)
