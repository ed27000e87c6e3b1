"""With REDIS_URL set, log-in throttle counters are shared by every server process."""

import os
import subprocess
import sys
import uuid

import pytest
from django.core.cache import cache

from accounts import throttling

pytestmark = pytest.mark.redis

CHECK_IN_ANOTHER_PROCESS = """
import django
django.setup()
from accounts import throttling
throttle = throttling.check(ip=sys.argv[1], username=sys.argv[2])
print(throttle.scope if throttle else "free")
"""


def check_elsewhere(ip, username):
    result = subprocess.run(
        [sys.executable, "-c", "import sys\n" + CHECK_IN_ANOTHER_PROCESS, ip, username],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "blackjack_site.settings"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.strip()


def test_failures_recorded_here_throttle_another_process(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
        }
    }
    username = f"redis-{uuid.uuid4().hex[:12]}"
    ip = f"2001:db8::{uuid.uuid4().hex[:4]}"
    assert check_elsewhere(ip, username) == "free"
    for _ in range(throttling.MAX_FAILURES):
        throttling.record_failure(ip=ip, username=username)
    try:
        assert check_elsewhere("198.51.100.1", username) == "username"
        assert check_elsewhere(ip, "someone-else") == "ip"
    finally:
        for scope, value in (("ip", ip), ("username", username)):
            cache.delete_many(throttling._keys(scope, value))
