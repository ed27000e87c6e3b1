"""Staff edit a live table in the admin of a real Daphne server (one process, the in-memory channel layer,
SQLite in the tests) while a player sits at it: the table's owner is that same process, its actor applies the
change, and the admin answers what happened at once."""

import re
import time
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from http.cookiejar import Cookie, CookieJar

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from blackjack.models import Table
from tests.blackjack.wsclient import SocketClient, move, session_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

#: What staff wait at most for the admin's answer (the owner is this very process).
ANSWER_SECONDS = 1.0
#: A cookie's attributes but its name, value and host.
COOKIE = {
    "version": 0,
    "port": None,
    "port_specified": False,
    "domain_specified": False,
    "domain_initial_dot": False,
    "path": "/",
    "path_specified": True,
    "secure": False,
    "expires": None,
    "discard": True,
    "comment": None,
    "comment_url": None,
    "rest": {},
}


class _Form(HTMLParser):
    """The values a browser would post from the admin's change form (inputs, checked boxes, selects)."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self._select: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("submit", "button"):
            if attrs.get("type") == "checkbox":
                if "checked" in attrs:
                    self.values[name] = "on"
            else:
                self.values[name] = attrs.get("value") or ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in attrs:
            self.values[self._select] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None


def _staff_saves(live_site: str, session: str, table_id: int, **changes) -> tuple[float, list[str]]:
    """Staff post the table's change form with `changes`: the seconds the post took, and the messages of the
    page it ended on."""
    host = urllib.parse.urlsplit(live_site).hostname
    jar = CookieJar()
    jar.set_cookie(Cookie(**COOKIE, domain=host, name="sessionid", value=session))
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    url = f"{live_site}/admin/tables/table/{table_id}/change/"
    form = _Form()
    form.feed(opener.open(url, timeout=30).read().decode())
    opener.addheaders = [("Referer", url)]
    data = form.values | {key: str(value) for key, value in changes.items()} | {"_continue": "1"}
    started = time.monotonic()
    page = opener.open(url, data=urllib.parse.urlencode(data).encode(), timeout=30).read().decode()
    took = time.monotonic() - started
    listed = re.search(r'<ul class="messagelist">(.*?)</ul>', page, re.S)
    return took, re.findall(r"<li[^>]*>(.*?)</li>", listed.group(1), re.S) if listed else []


async def test_staff_change_limits_of_a_table_its_own_process_runs(live_site, make_table, alice):
    table = await database_sync_to_async(make_table)()
    staff = await database_sync_to_async(get_user_model().objects.create_user)(
        "pitboss", is_staff=True, is_superuser=True
    )
    client = SocketClient(
        "alice",
        live_site.replace("http://", "ws://", 1) + f"/ws/tables/{table.pk}/?format=json",
        cookie=await database_sync_to_async(session_cookie)(alice),
    )
    client.origin = live_site
    await client.connect()
    await client.receive()
    try:
        await move(client, "sit", seat=1)  # the server's actor owns the table now
        session = await database_sync_to_async(session_cookie)(staff)
        took, said = await database_sync_to_async(_staff_saves)(
            live_site, session, table.pk, name="High limits", min_bet=25, max_bet=2500
        )
        print(f"the admin answered in {took:.2f} s: {said}")
        row = await database_sync_to_async(Table.objects.get)(pk=table.pk)
        assert row.owner, "the table had no live owner: the change did not go through an actor"
        assert any("was changed successfully" in message for message in said), said
        assert (row.name, row.min_bet, row.max_bet) == ("High limits", 25, 2500)
        assert took < ANSWER_SECONDS
        state = await client.until_version(row.version)  # the player sees the change at once
        assert state["table"]["name"] == "High limits"  # (the new limits apply from the next round)
    finally:
        await client.close()
