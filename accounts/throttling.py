"""Log-in throttling that a stranger cannot turn against a player.

Failed log-ins are counted per account *and* client network together: after MAX_FAILURES within
WINDOW_SECONDS, that account is refused from that network for COOL_OFF_SECONDS, without checking the
password, while its owner logs in from anywhere else. A network is also refused for every account after
MAX_FAILURES_PER_NETWORK failures (one address guessing many accounts). Guessing one account from many
networks is capped too: after MAX_FAILURES_PER_ACCOUNT failures from everywhere, the account is refused
from networks it has not logged in from within TRUSTED_SECONDS, while its owner's known networks still get in
(as django-axes' lock-out by username and address together, and OWASP's advice against lock-outs an attacker
can trigger).

Counters live in the Django cache, so with REDIS_URL set every server process shares them. A successful
log-in resets the counter of its (account, network) pair and trusts that pair; the network's counter is
kept, so one valid account cannot be used to reset the limit of an address that is guessing other accounts'
passwords. IPv6 clients are counted by their /64. Usernames are compared case-insensitively.

Password-reset e-mails are capped the same way (see allow_password_reset), and so are registrations, per
address and per wider network (see reserve_registration at the end).
"""

import contextlib
import hashlib
import ipaddress
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.utils.translation import gettext, gettext_noop, ngettext
from django.utils.translation import gettext_lazy as _

#: Failures of one account from one network before that pair cools off.
MAX_FAILURES = 5
#: Failures from one network, whatever the accounts, before the network cools off.
MAX_FAILURES_PER_NETWORK = 20
#: Failures of one account from everywhere before networks it has not used recently are refused for it.
MAX_FAILURES_PER_ACCOUNT = 50
WINDOW_SECONDS = 15 * 60
COOL_OFF_SECONDS = 15 * 60
#: How long a network the account logged in from stays trusted for it.
TRUSTED_SECONDS = 30 * 24 * 3600
_PREFIX = "login-throttle"

_MESSAGES = {
    "ip": _("Too many failed log-in attempts from your network. Please wait %(wait)s before trying again."),
    "username": _(
        "Too many failed log-in attempts for this account from your network. Please wait %(wait)s before "
        "trying again."
    ),
    "account": _(
        "Too many failed log-in attempts for this account from new networks. Please wait %(wait)s before "
        "trying again."
    ),
}


@dataclass(frozen=True)
class Throttle:
    """A refusal: which limit was hit ("ip", "username": this account from this network, "account": this
    account from networks it has not used) and how long until it lifts."""

    scope: str
    retry_after: int  # seconds

    @property
    def message(self) -> str:
        return str(_MESSAGES[self.scope]) % {"wait": _wait(self.retry_after)}


def _wait(seconds: int) -> str:
    """A wait for people, in the active language: minutes up to 90, hours beyond."""
    minutes = max(1, math.ceil(seconds / 60))
    if minutes <= 90:
        return ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}
    hours = math.ceil(minutes / 60)
    return ngettext("%(count)d hour", "%(count)d hours", hours) % {"count": hours}


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


def _wider_network(ip: str) -> str:
    """The network an address belongs to, for limits looser than an address's: its IPv4 /24 or its IPv6 /48
    (a site's allocation, which holds 65,536 /64s)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    prefix = 24 if address.version == 4 else 48
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))


def _normalise(username: str) -> str:
    return username.strip().casefold()


def _pair(ip: str, username: str) -> str:
    return f"{_network(ip)}|{_normalise(username)}"


def _trusted_key(ip: str, username: str) -> str:
    return _keys("trusted", _pair(ip, username))[0]


def _limits(ip: str, username: str) -> list[tuple[str, str, int]]:
    """(scope, counted value, failures allowed) of the limits that apply to this attempt."""
    limits = [("ip", _network(ip), MAX_FAILURES_PER_NETWORK)]
    if username.strip():
        limits.append(("username", _pair(ip, username), MAX_FAILURES))
        limits.append(("account", _normalise(username), MAX_FAILURES_PER_ACCOUNT))
    return limits


def check(*, ip: str, username: str, now: float | None = None) -> Throttle | None:
    """The active throttle for this attempt, or None when it may proceed."""
    now = time.time() if now is None else now
    for scope, value, _limit in _limits(ip, username):
        locked_until = cache.get(_keys(scope, value)[1])
        if locked_until is None or locked_until <= now:
            continue
        if scope == "account" and cache.get(_trusted_key(ip, username)):
            continue  # the owner's own network: the many-network lock is not for them
        return Throttle(scope=scope, retry_after=math.ceil(locked_until - now))
    return None


def record_failure(*, ip: str, username: str, now: float | None = None) -> None:
    """Count a failed log-in; the failure that reaches a limit within the window starts its cool-off."""
    now = time.time() if now is None else now
    for scope, value, allowed in _limits(ip, username):
        failures_key, locked_key = _keys(scope, value)
        if _increment(failures_key, WINDOW_SECONDS) >= allowed:
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


def record_success(*, ip: str, username: str) -> None:
    """A correct password for `username` from `ip`: forget that pair's failures and trust the pair."""
    cache.delete(_keys("username", _pair(ip, username))[0])
    cache.set(_trusted_key(ip, username), True, timeout=TRUSTED_SECONDS)


# Password-reset e-mails: a cap per client network and per address, so the form cannot be used to flood
# someone's inbox. Requests for unknown addresses count too, so the limit reveals nothing about accounts.
RESET_LIMIT_PER_NETWORK = 5
RESET_LIMIT_PER_ADDRESS = 3
RESET_WINDOW_SECONDS = 60 * 60
RESET_REFUSED_MESSAGE = gettext_noop("Too many password-reset requests. Please try again in an hour.")


def allow_password_reset(*, ip: str, email: str) -> bool:
    """Count a reset request; False once its network or its address asked too often within the window."""
    per_network = _increment(_keys("reset-ip", _network(ip))[0], RESET_WINDOW_SECONDS)
    per_address = _increment(_keys("reset-email", email.strip().casefold())[0], RESET_WINDOW_SECONDS)
    return per_network <= RESET_LIMIT_PER_NETWORK and per_address <= RESET_LIMIT_PER_ADDRESS


# Registrations: every account comes with starting chips, so one client may make only a few: at most
# REGISTRATION_LIMIT_PER_ADDRESS within REGISTRATION_ADDRESS_WINDOW_SECONDS from one address (an IPv4 address,
# an IPv6 /64, as log-ins count them) and REGISTRATION_LIMIT_PER_NETWORK within
# REGISTRATION_NETWORK_WINDOW_SECONDS from one network (an IPv4 /24, an IPv6 /48). A window starts with the
# first registration counted in it.


@dataclass(frozen=True)
class RegistrationRefused:
    """A refused registration: which limit was hit ("address" or "network") and how long until it lifts."""

    scope: str
    retry_after: int  # seconds

    @property
    def message(self) -> str:
        if self.scope == "address":
            text = gettext(
                "Too many accounts have been registered from your address recently. Please wait %(wait)s "
                "before registering another."
            )
        else:
            text = gettext(
                "Too many accounts have been registered from your network recently. Please wait %(wait)s "
                "before registering another."
            )
        return text % {"wait": _wait(self.retry_after)}


def _registration_limits(ip: str) -> list[tuple[str, str, int, int]]:
    """(scope, counted value, registrations allowed, window in seconds) of each limit on registering."""
    return [
        (
            "address",
            _network(ip),
            settings.REGISTRATION_LIMIT_PER_ADDRESS,
            settings.REGISTRATION_ADDRESS_WINDOW_SECONDS,
        ),
        (
            "network",
            _wider_network(ip),
            settings.REGISTRATION_LIMIT_PER_NETWORK,
            settings.REGISTRATION_NETWORK_WINDOW_SECONDS,
        ),
    ]


def _registration_keys(scope: str, value: str) -> tuple[str, str]:
    """The keys of a limit's count and of the time its window started."""
    return _keys(f"register-{scope}", value)


def _refused(scope: str, since_key: str, window: int, now: float) -> RegistrationRefused:
    since = cache.get(since_key)
    lifts = (now if since is None else since) + window
    return RegistrationRefused(scope=scope, retry_after=max(1, math.ceil(lifts - now)))


def check_registration(*, ip: str, now: float | None = None) -> RegistrationRefused | None:
    """The registration limit `ip` has reached, or None; reads only (refuse before checking a form)."""
    now = time.time() if now is None else now
    for scope, value, allowed, window in _registration_limits(ip):
        count_key, since_key = _registration_keys(scope, value)
        if (cache.get(count_key) or 0) >= allowed:
            return _refused(scope, since_key, window, now)
    return None


def reserve_registration(*, ip: str, now: float | None = None) -> RegistrationRefused | None:
    """Count one registration from `ip`, or refuse it (counted nowhere) when a limit is reached. Each count
    is the cache's atomic increment, so concurrent registrations from one address, in any process, cannot
    all slip under a limit."""
    now = time.time() if now is None else now
    counted: list[str] = []
    for scope, value, allowed, window in _registration_limits(ip):
        count_key, since_key = _registration_keys(scope, value)
        cache.add(since_key, now, timeout=window)
        counted.append(count_key)
        if _increment(count_key, window) > allowed:
            for key in counted:
                with contextlib.suppress(ValueError):  # expired meanwhile: nothing to take back
                    cache.decr(key)
            return _refused(scope, since_key, window, now)
    return None
