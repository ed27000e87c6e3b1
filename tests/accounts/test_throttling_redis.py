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
import sys
import django
django.setup()
from accounts import throttling
for pair in sys.argv[1:]:
    ip, username = pair.split(",")
    throttle = throttling.check(ip=ip, username=username)
    print(throttle.scope if throttle else "free")
"""


def check_in_another_process(*pairs):
    result = subprocess.run(
        [sys.executable, "-c", CHECK_IN_ANOTHER_PROCESS, *(f"{ip},{username}" for ip, username in pairs)],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "cardroom.settings"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.split()


def test_failures_recorded_here_throttle_another_process(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
        }
    }
    username = f"redis-{uuid.uuid4().hex[:12]}"
    ip = f"2001:db8::{uuid.uuid4().hex[:4]}"
    for _ in range(throttling.MAX_FAILURES):
        throttling.record_failure(ip=ip, username=username)
    for n in range(throttling.MAX_FAILURES_PER_NETWORK - throttling.MAX_FAILURES):
        throttling.record_failure(ip=ip, username=f"{username}-{n}")
    try:
        assert check_in_another_process(
            ("198.51.100.1", username), (ip, "someone-else"), ("198.51.100.1", "someone-else")
        ) == ["free", "ip", "free"]
    finally:
        cache.delete_many(throttling._keys("ip", throttling._network(ip)))
        cache.delete_many(throttling._keys("username", throttling._pair(ip, username)))


CHECK_REGISTRATION_IN_ANOTHER_PROCESS = """
import sys
import django
django.setup()
from accounts import throttling
for ip in sys.argv[1:]:
    refused = throttling.check_registration(ip=ip)
    print(refused.scope if refused else "free")
"""


def test_registrations_counted_here_are_refused_in_another_process(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
        }
    }
    ip = f"2001:db8:{uuid.uuid4().hex[:4]}:1::1"
    other = ip.replace(":1::1", ":2::1")  # another /64 of the same /48
    for _ in range(settings.REGISTRATION_LIMIT_PER_ADDRESS):
        assert throttling.reserve_registration(ip=ip) is None
    try:
        result = subprocess.run(
            [sys.executable, "-c", CHECK_REGISTRATION_IN_ANOTHER_PROCESS, ip, other],
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "cardroom.settings"},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert result.stdout.split() == ["address", "free"]
    finally:
        for scope, value, _, _ in throttling._registration_limits(ip):
            cache.delete_many(throttling._registration_keys(scope, value))
