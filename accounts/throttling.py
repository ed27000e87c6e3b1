"""Log-in throttling: after MAX_FAILURES failed log-ins within WINDOW_SECONDS from one client IP, or for one
username, further attempts from that IP or for that username are refused for COOL_OFF_SECONDS without checking
the password.

Counters live in the Django cache, so with REDIS_URL set every server process shares them. A successful log-in
resets the username's counter; the IP's counter is kept, so one valid account cannot be used to reset the
limit of an address that is guessing other accounts' passwords. IPv6 clients are counted by their /64.

Password-reset e-mails are capped the same way (see allow_password_reset at the end).
"""

import hashlib
import ipaddress
import math
import time
from dataclasses import dataclass

from django.core.cache import cache

MAX_FAILURES = 5
WINDOW_SECONDS = 15 * 60
COOL_OFF_SECONDS = 15 * 60
_PREFIX = "login-throttle"


@dataclass(frozen=True)
class Throttle:
    """A refusal: which limit was hit and how long until it lifts."""

    scope: str  # "ip" or "username"
    retry_after: int  # seconds

    @property
    def message(self) -> str:
        minutes = max(1, math.ceil(self.retry_after / 60))
        wait = "1 minute" if minutes == 1 else f"{minutes} minutes"
        source = "from your network" if self.scope == "ip" else "for this account"
        return f"Too many failed log-in attempts {source}. Please wait {wait} before trying again."


def client_ip(request) -> str:
    """The client's address as the server saw it (Daphne sets it from the connection, or from a trusted
    proxy's headers when started with --proxy-headers); request headers alone are never trusted."""
    return request.META.get("REMOTE_ADDR") or "unknown"


def _keys(scope: str, value: str) -> tuple[str, str]:
    digest = hashlib.sha256(value.encode()).hexdigest()[:32]
    return f"{_PREFIX}:{scope}:{digest}:failures", f"{_PREFIX}:{scope}:{digest}:locked-until"


def _network(ip: str) -> str:
    """The unit an address is counted in: the address itself for IPv4, its /64 for IPv6, since one IPv6
    client commonly holds a whole /64 and could otherwise step to a fresh address after every refusal."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


def _subjects(ip: str, username: str) -> list[tuple[str, str]]:
    subjects = [("ip", _network(ip))]
    if username.strip():
        subjects.append(("username", _normalise(username)))
    return subjects


def _normalise(username: str) -> str:
    return username.strip().casefold()


def check(*, ip: str, username: str, now: float | None = None) -> Throttle | None:
    """The active throttle for this attempt, or None when it may proceed."""
    now = time.time() if now is None else now
    for scope, value in _subjects(ip, username):
        locked_until = cache.get(_keys(scope, value)[1])
        if locked_until is not None and locked_until > now:
            return Throttle(scope=scope, retry_after=math.ceil(locked_until - now))
    return None


def record_failure(*, ip: str, username: str, now: float | None = None) -> None:
    """Count a failed log-in; the MAX_FAILURES-th within the window starts the cool-off."""
    now = time.time() if now is None else now
    for scope, value in _subjects(ip, username):
        failures_key, locked_key = _keys(scope, value)
        if _increment(failures_key, WINDOW_SECONDS) >= MAX_FAILURES:
            cache.set(locked_key, now + COOL_OFF_SECONDS, timeout=COOL_OFF_SECONDS)
            cache.delete(failures_key)


def _increment(key: str, window: int) -> int:
    """Add one to a counter that starts with the first hit and expires `window` seconds later."""
    cache.add(key, 0, timeout=window)
    try:
        return cache.incr(key)
    except ValueError:  # the window expired between add and incr
        cache.add(key, 1, timeout=window)
        return 1


def record_success(*, username: str) -> None:
    """A correct password for `username`: forget its failures."""
    failures_key, _ = _keys("username", _normalise(username))
    cache.delete(failures_key)


# Password-reset e-mails: a cap per client network and per address, so the form cannot be used to flood
# someone's inbox. Requests for unknown addresses count too, so the limit reveals nothing about accounts.
RESET_LIMIT_PER_NETWORK = 5
RESET_LIMIT_PER_ADDRESS = 3
RESET_WINDOW_SECONDS = 60 * 60
RESET_REFUSED_MESSAGE = "Too many password-reset requests. Please try again in an hour."


def allow_password_reset(*, ip: str, email: str) -> bool:
    """Count a reset request; False once its network or its address asked too often within the window."""
    per_network = _increment(_keys("reset-ip", _network(ip))[0], RESET_WINDOW_SECONDS)
    per_address = _increment(_keys("reset-email", email.strip().casefold())[0], RESET_WINDOW_SECONDS)
    return per_network <= RESET_LIMIT_PER_NETWORK and per_address <= RESET_LIMIT_PER_ADDRESS
