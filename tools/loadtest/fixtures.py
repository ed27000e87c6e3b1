"""Accounts, sessions and tables for a load run, written directly into the database the site uses.

The load tester shares the site's database (same `DATABASE_URL`), so it creates its players as real users
(each with a wallet and the starting grant, through the accounts signal) and logs each one in by writing a
Django session, exactly what `django.contrib.auth.login` stores; the bots then present that session cookie on
the websocket handshake. Going through the registration form instead would spend the run's first minutes
hashing passwords (PBKDF2 is deliberately slow) and measure that rather than play. The accounts get unusable
passwords: nobody can log in as a bot through the site.

Tables are private (the bots join with the token), so a run never fills the public lobby, and `close_tables`
closes them to new players afterwards.
"""

import ipaddress
import socket
from dataclasses import dataclass
from importlib import import_module
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.db import transaction

from blackjack import services
from blackjack.engine.rules import PRESETS
from blackjack.models import RulePreset, Table

PRESET = "Vegas Strip"  # no early surrender: the protocol has no way to decline it, so a bot could not answer


class LoopbackOnly(ValueError):
    """A target URL that is not a plain http(s) URL of this machine."""


@dataclass(frozen=True)
class Player:
    username: str
    session_key: str
    table_id: int
    token: str
    seat: int


@dataclass(frozen=True)
class Fixture:
    run_id: str
    table_ids: list[int]
    players: list[Player]
    rules: dict
    min_bet: int


def check_loopback(url: str) -> str:
    """The websocket base URL (ws:// or wss://) for an http(s) URL whose host is a loopback address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        raise LoopbackOnly(f"{url!r}: give a base URL like http://127.0.0.1:8000")
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 80, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise LoopbackOnly(f"{url!r}: cannot resolve {parts.hostname!r}: {exc}") from None
    addresses = {info[4][0] for info in infos}
    if not addresses or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses):
        raise LoopbackOnly(f"{url!r}: only loopback addresses may be load tested, not {sorted(addresses)}")
    scheme = "wss" if parts.scheme == "https" else "ws"
    return f"{scheme}://{parts.netloc}"


def prepare(*, run_id: str, tables: int, players: int, min_bet: int = 10, max_bet: int = 500) -> Fixture:
    """`tables` private tables with `players` fresh logged-in accounts each (seats 1..players)."""
    rules = PRESETS[PRESET]
    store = import_module(settings.SESSION_ENGINE).SessionStore
    users = get_user_model().objects
    table_ids: list[int] = []
    seated: list[Player] = []
    with transaction.atomic():
        preset, _ = RulePreset.objects.get_or_create(
            name=PRESET, defaults={"rules": rules.to_dict(), "description": rules.summary()}
        )
        for t in range(tables):
            table = services.create_table(
                name=f"load {run_id} #{t + 1}",
                preset=preset,
                min_bet=min_bet,
                max_bet=max_bet,
                seats=max(players, 1),
                seats_per_player=1,
                is_private=True,
            )
            table_ids.append(table.pk)
            for seat in range(1, players + 1):
                user = users.create_user(username=f"load-{run_id}-{t + 1}-{seat}", password=None)
                session = store()
                session[SESSION_KEY] = str(user.pk)
                session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
                session[HASH_SESSION_KEY] = user.get_session_auth_hash()
                session.create()
                seated.append(Player(user.username, session.session_key, table.pk, table.private_token, seat))
    return Fixture(run_id, table_ids, seated, preset.rules, min_bet)


def close_tables(fixture: Fixture) -> int:
    """Close the run's tables to new players (seated players finish and leave as usual)."""
    return Table.objects.filter(pk__in=fixture.table_ids).update(is_open=False)
