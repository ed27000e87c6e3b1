"""Nothing secret ever leaves the server: many rounds played by bots taking random legal actions, watched and
played through JSON and HTML connections, with EVERY payload sent to any client scanned.

After each action the test reads the truth from the database (the round's full engine state with its shoe, and
the shoes still in play) and checks every payload of that version:

- the dealer's hole card: while unrevealed, the JSON `dealer.cards` is `[upcard, null]` and the HTML `#dealer`
  shows the upcard and a card back; the cards drawn in `#dealer` and `#seats` (HTML) or held in
  `dealer.cards` and `hands[].cards` (JSON) are exactly the face-up cards, and no other JSON field holds a
  card; the round's event log lines never name the hole card (unless that card is also face up);
- the undealt shoe: the next five undealt cards never appear in order in any payload (as card tokens, card
  names or one joined string); a chance match has a probability around 1e-9 per position;
- the server seed of every shoe still in play (and its first 16 characters) appears in no payload of any kind;
- a `dealer` frame (the dealer's turn of a settled round, shown card by card) holds the dealer's first cards
  only: the ones still to be turned count as undealt, so they appear in no payload of the frame.

Round counts: `make test` plays a dozen rounds over two presets; the slow run plays `HIDDEN_INFO_ROUNDS`
(default 60) over the same presets, and a larger number in the environment makes a longer soak. The bots'
choices and the shoes come from one generator seeded by the preset and the round count, so a failure replays.
"""

import json
import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from django.db import connections

from accounts.audit import audit_ledger
from blackjack.engine.round import RoundState
from blackjack.engine.shoe import dealing_order, shuffled_shoe
from blackjack.models import Shoe, Table, TableEvent
from blackjack.templatetags.table_ui import card_face
from tests.blackjack.wsclient import CommunicatorClient, assert_oob_fragment, session_cookie
from tools.loadtest.page import TABLE_REGIONS, Page

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

TOTAL_ROUNDS = int(os.environ.get("HIDDEN_INFO_ROUNDS", "60"))  # what fits CI's 30 minutes on 2 cores
SHARES = {"Vegas Strip": 0.75, "Single deck 6:5": 0.25}
CARDS = [rank + suit for rank in "A23456789TJQK" for suit in "shdc"]
LABELS = {card_face(card)["label"]: card for card in CARDS}
TOKEN = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK][shdc])(?![A-Za-z0-9])")
ARIA_LABEL = re.compile(r'aria-label="([^"]*)"')
OOB_TAG = re.compile(r"<[a-zA-Z][^>]*\shx-swap-oob\b[^>]*>")
TAG = re.compile(r"<[a-zA-Z][^>]*>")
ATTRIBUTE = re.compile(r'([a-zA-Z_:][-a-zA-Z0-9_:.]*)="([^"]*)"')
DATA_V = re.compile(r'id="table-version"[^>]*data-v="(\d+)"|data-v="(\d+)"[^>]*id="table-version"')


@dataclass
class Truth:
    """What the database says at one table version."""

    version: int
    seeds_in_play: list[str]
    dealer_visible: list[str | None] = field(default_factory=list)
    hole: str | None = None
    hands: dict[int, list[list[str]]] = field(default_factory=dict)
    undealt: list[str] = field(default_factory=list)
    round_events: list[str] = field(default_factory=list)

    def dealer_frame(self, shown: int) -> "Truth":
        """The truth of a `dealer` frame of this (settled) version showing the dealer's first `shown` cards:
        the cards still to be turned count as undealt, ahead of the shoe."""
        assert self.hole is None
        assert 2 <= shown <= len(self.dealer_visible), "a dealer frame shows the upcard and more"
        rest = self.dealer_visible[shown:]
        return replace(self, dealer_visible=self.dealer_visible[:shown], undealt=[*rest, *self.undealt][:5])

    @property
    def face_up(self) -> Counter:
        cards = [card for card in self.dealer_visible if card]
        cards += [card for hands in self.hands.values() for hand in hands for card in hand]
        return Counter(cards)


def read_truth(table_id: int) -> Truth:
    table = Table.objects.select_related("current_round__shoe").get(pk=table_id)
    seeds = list(
        Shoe.objects.filter(table_id=table_id, retired_at__isnull=True).values_list("server_seed", flat=True)
    )
    truth = Truth(version=table.version, seeds_in_play=[*seeds, table.next_server_seed])  # and the next one
    rnd = table.current_round
    if rnd is None or rnd.voided:
        return truth
    shoe = rnd.shoe
    # The shoe's order (recomputed here, not by the code under test), then its reshuffled discards.
    order = shuffled_shoe(
        server_seed=shoe.server_seed, client_seed=shoe.client_seed, decks=shoe.decks, nonce=shoe.nonce
    )
    seeds = {"server_seed": shoe.server_seed, "client_seed": shoe.client_seed, "nonce": shoe.nonce}
    order = dealing_order(order, rnd.start_position, **seeds)
    state = RoundState.from_dict(dict(rnd.state, shoe="".join(order)))
    dealer = list(state.dealer_cards)
    hidden = not state.hole_revealed and len(dealer) > 1
    truth.dealer_visible = [dealer[0], *[None] * (len(dealer) - 1)] if hidden else dealer
    truth.hole = dealer[1] if hidden else None
    truth.hands = {number: [list(hand.cards) for hand in seat.hands] for number, seat in state.seats.items()}
    truth.undealt = list(state.shoe[state.position : state.position + 5])
    truth.round_events = list(TableEvent.objects.filter(round=rnd).values_list("text", flat=True))
    return truth


# --- payload checks --------------------------------------------------------------------------------------


def check_secrets(text: str, truth: Truth) -> None:
    """Checks for any payload, whatever its kind."""
    for seed in truth.seeds_in_play:
        assert seed[:16] not in text, "the server seed of a shoe in play was sent"
    if truth.undealt:
        assert "".join(truth.undealt) not in text
        assert " ".join(truth.undealt) not in text
        tokens = TOKEN.findall(text) + [
            LABELS[label] for label in ARIA_LABEL.findall(text) if label in LABELS
        ]
        assert not contains_run(tokens, truth.undealt), "the undealt cards were sent in shoe order"


def contains_run(sequence: list[str], run: list[str]) -> bool:
    width = len(run)
    return any(sequence[i : i + width] == run for i in range(len(sequence) - width + 1))


def check_json_state(message: dict, truth: Truth) -> None:
    table = message["table"]
    assert table["dealer"]["cards"] == truth.dealer_visible
    if truth.hole is not None:
        assert table["dealer"]["hole_hidden"] is True
        assert table["dealer"]["cards"][1] is None
    for seat in table["seats"]:
        assert [hand["cards"] for hand in seat["hands"]] == truth.hands.get(seat["seat"], [])
    # No field but the dealer's and the hands' card lists holds a card.
    for path, value in walk(message):
        if isinstance(value, str) and value in CARDS:
            assert card_path(path), f"a card at {path}"
    check_events([event["text"] for event in table["events"]], truth)


def walk(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, (*path, index))
    else:
        yield path, value


def card_path(path) -> bool:
    return path[:3] == ("table", "dealer", "cards") or (
        len(path) == 7 and path[:2] == ("table", "seats") and path[3] == "hands" and path[5] == "cards"
    )


def check_events(texts: list[str], truth: Truth) -> None:
    """While the hole card is down, no event line of the round names it (unless that card is also face up)."""
    if truth.hole is None or truth.face_up[truth.hole]:
        return
    for text in truth.round_events:
        assert truth.hole not in TOKEN.findall(text), f"event names the hole card: {text}"
    for text in texts:
        if text in truth.round_events:
            assert truth.hole not in TOKEN.findall(text)


def html_regions(fragment: str) -> tuple[dict[str, list[str]], Counter]:
    """Card faces (as cards) and card backs inside each out-of-band region of an HTML message.

    Regions start at each tag carrying `hx-swap-oob` (only the top-level elements do) and run to the next one;
    a card is any tag whose class list holds `card`: `card-back` for a face-down card, else its `aria-label`
    names the card. Regular expressions rather than an HTML parser: this runs on every payload.
    """
    cards: dict[str, list[str]] = {}
    backs: Counter = Counter()
    starts = [(match.start(), attributes(match.group(0)).get("id")) for match in OOB_TAG.finditer(fragment)]
    for index, (start, region) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(fragment)
        found = cards.setdefault(region, [])
        for tag in TAG.findall(fragment, start, end):
            attrs = attributes(tag)
            classes = attrs.get("class", "").split()
            if "card" not in classes:
                continue
            if "card-back" in classes:
                backs[region] += 1
            elif attrs.get("aria-label") in LABELS:
                found.append(LABELS[attrs["aria-label"]])
    return cards, backs


def attributes(tag: str) -> dict[str, str]:
    return dict(ATTRIBUTE.findall(tag))


def check_html(fragment: str, truth: Truth) -> None:
    cards, backs = html_regions(fragment)
    if "dealer" not in cards:
        return  # a #flash or #chat-log fragment: no cards in it (the secrets check covers it)
    dealer_cards = [card for card in truth.dealer_visible if card]
    assert cards["dealer"] == dealer_cards
    assert backs["dealer"] == (1 if truth.hole is not None else 0)
    drawn = Counter(cards["dealer"]) + Counter(cards.get("seats", []))
    assert drawn == truth.face_up, "the HTML draws other cards than the face-up ones"


def html_version(fragment: str) -> int | None:
    match = DATA_V.search(fragment)
    return None if match is None else int(match.group(1) or match.group(2))


# --- the bots --------------------------------------------------------------------------------------------


@dataclass
class Bot:
    """One player: a JSON connection that decides, and optionally an HTML connection that sometimes sends."""

    json: CommunicatorClient
    html: CommunicatorClient | None = None

    def decision(self, rng: random.Random) -> dict | None:
        """A random legal move from the player's own JSON state, or None when it has nothing to do."""
        state = self.json.state
        you, table = state["you"], state["table"]
        for seat in you["seats"]:
            allowed = you["allowed_by_seat"].get(str(seat), [])
            if "bet" in allowed:
                seat_view = table["seats"][seat - 1]
                if seat_view["bet"] == 0:
                    return {"action": "bet", "seat": seat, "amount": rng.randrange(10, 51)}
            elif "insurance" in allowed or "even_money" in allowed:
                name = "insurance" if "insurance" in allowed else "even_money"
                return {"action": name, "seat": seat, "accept": rng.random() < 0.5}
            elif "ready" in allowed:
                return {"action": "ready"}
            else:
                plays = [name for name in allowed if name in ("hit", "stand", "double", "split", "surrender")]
                if plays:
                    turn = table["turn"]
                    # Every legal play can come up; standing more often keeps rounds short.
                    name = "stand" if rng.random() < 0.35 else rng.choice(plays)
                    return {"action": name, "seat": turn["seat"], "hand": turn["hand"]}
        return None


def as_form(message: dict) -> dict:
    """The same message as htmx sends it: every value a string, plus a HEADERS object."""
    form = {
        key: ("true" if value is True else "false" if value is False else str(value))
        for key, value in message.items()
    }
    return {**form, "HEADERS": {"HX-Request": "true"}}


@pytest_asyncio.fixture
async def persistent_connections():
    """Keep database connections open between messages for this long test, as `CONN_MAX_AGE=None` would:
    reopening SQLite costs several milliseconds per message here and changes nothing that is checked. (The
    connection settings dict is shared by every thread's connection.) PostgreSQL connections come from a
    pool, which must get them back: nothing to do there."""
    if connections["default"].vendor != "sqlite":
        yield
        return
    settings_dict = connections["default"].settings_dict
    before = settings_dict.get("CONN_MAX_AGE", 0)
    settings_dict["CONN_MAX_AGE"] = None
    yield
    settings_dict["CONN_MAX_AGE"] = before
    # The database thread's connection would stay open: PostgreSQL could not drop the test database.
    await database_sync_to_async(connections.close_all)()


@pytest_asyncio.fixture
async def clients(persistent_connections):
    opened = []

    async def open_client(name, table, user=None, *, json_format=True):
        cookie = await database_sync_to_async(session_cookie)(user) if user is not None else None
        path = f"/ws/tables/{table.pk}/" + ("?format=json" if json_format else "")
        client = CommunicatorClient(name, path, cookie=cookie)
        assert await client.connect()
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        await client.close()


class Scanner:
    """Receives everything every client is sent and checks each payload against the truth of its version."""

    def __init__(self, table_id: int, watchers: list[CommunicatorClient]) -> None:
        self.table_id = table_id
        self.watchers = watchers
        self.truths: dict[int, Truth] = {}
        self.checked = Counter()
        self.arrived: dict[CommunicatorClient, Page] = {}  # each HTML client's page as its messages arrive

    async def record_truth(self) -> Truth:
        truth = await database_sync_to_async(read_truth)(self.table_id)
        self.truths[truth.version] = truth
        return truth

    async def settle(self, version: int) -> Truth:
        """Read every connection until it has been sent `version`, then read the truth of that version from
        the database (nothing changes meanwhile: the bots act one at a time) and check every payload."""
        received = []
        for client in self.watchers:
            while True:
                try:
                    text = await client._receive_text(5)
                except TimeoutError:
                    raise AssertionError(
                        f"{client.name} never got version {version}: {received[-3:]}"
                    ) from None
                client.payloads.append(text)
                received.append((client, text))
                if client.json_format:
                    seen, framed = payload_version(client, text), dealer_frame(client, text)
                else:  # the page as the browser puts it together (each message changes some regions)
                    arrived = self.arrived.setdefault(client, Page())
                    arrived.apply(text)
                    whole = arrived.html()
                    seen, framed = html_version(whole), dealer_frame(client, whole)
                if seen is not None and seen >= version and not framed:
                    break  # (the dealer frames of a settled round come first, paced by the server)
        truth = await self.record_truth()
        assert truth.version == version, f"the table is at {truth.version}, expected {version}"
        for client, text in received:
            self.check(client, text)
        return truth

    def check(self, client, text: str) -> None:
        latest = self.truths[max(self.truths)]
        check_secrets(text, latest)
        if client.json_format:
            message = json.loads(text)
            assert message["type"] != "error", f"{client.name}: refused {message}"
            if message["type"] == "state":
                client.state = message
                truth = self.truths[message["v"]]
                if message["table"]["phase"] == "dealer":
                    truth = truth.dealer_frame(len(message["table"]["dealer"]["cards"]))
                check_secrets(text, truth)
                check_json_state(message, truth)
                self.checked["json"] += 1
            return
        assert "flash-" not in text, f"{client.name}: refused {text[:300]}"
        if len(client.payloads) % 10 == 1:
            assert_oob_fragment(text)  # a sample: parsing the structure costs more than all the other checks
        # The page as the browser holds it: each message changes only some of its regions.
        touched = client.page.apply(text)
        if touched & TABLE_REGIONS:
            whole = client.page.html()
            truth = self.truths[html_version(whole)]
            if dealer_frame(client, whole):
                truth = truth.dealer_frame(len(html_regions(whole)[0]["dealer"]))
            check_secrets(text, truth)
            check_html(whole, truth)
            self.checked["html"] += 1


def dealer_frame(client, text: str) -> bool:
    """A state of the `dealer` phase (the dealer's turn of a settled round shown card by card)."""
    if client.json_format:
        message = json.loads(text)
        return message["type"] == "state" and message["table"]["phase"] == "dealer"
    return 'data-phase="dealer"' in text


def payload_version(client, text: str) -> int | None:
    if client.json_format:
        message = json.loads(text)
        return message["v"] if message["type"] == "state" else None
    return html_version(text)


@pytest.mark.parametrize(
    ("preset", "rounds"),
    [
        *[(preset, max(1, round(12 * share))) for preset, share in SHARES.items()],
        *[
            pytest.param(
                preset,
                max(1, round(TOTAL_ROUNDS * share)),
                marks=[pytest.mark.slow, pytest.mark.timeout(900)],  # 45 rounds: minutes on a busy machine
            )
            for preset, share in SHARES.items()
        ],
    ],
)
async def test_no_payload_reveals_hidden_information(
    preset, rounds, make_table, make_user, clients, seeded_shoes
):
    rng = random.Random(f"{preset}-{rounds}")
    seeded_shoes(rng)
    table = await database_sync_to_async(make_table)(preset, min_bet=10, max_bet=100)
    ann, ben = [await database_sync_to_async(make_user)(name) for name in ("ann", "ben")]
    # Two players and two spectators, each in both formats; Ann plays through either of her connections.
    watchers = [
        await clients("spectator-json", table),
        await clients("spectator-html", table, json_format=False),
    ]
    bots = [Bot(await clients("ann-json", table, ann)), Bot(await clients("ben-json", table, ben))]
    bots[0].html = await clients("ann-html", table, ann, json_format=False)
    watchers += [bots[0].json, bots[0].html, bots[1].json]
    scanner = Scanner(table.pk, watchers)
    truth = await scanner.record_truth()
    truth = await scanner.settle(truth.version)

    for seat, bot in enumerate(bots, start=1):
        await bot.json.send({"action": "sit", "seat": seat, "v": truth.version})
        truth = await scanner.settle(truth.version + 1)
    round_ids = set()
    while len(round_ids) < rounds:
        moves = [(bot, bot.decision(rng)) for bot in bots]
        moves = [(bot, move) for bot, move in moves if move is not None]
        assert moves, f"nobody can move in phase {bots[0].json.state['table']['phase']}"
        bot, move = moves[0]
        message = {**move, "v": truth.version}
        sender = bot.html if bot.html is not None and rng.random() < 0.5 else bot.json
        await sender.send(as_form(message) if sender is bot.html else message, paced=True)
        truth = await scanner.settle(truth.version + 1)
        if bots[0].json.state["table"]["phase"] == "settled":
            round_ids.add(bots[0].json.state["table"]["round_id"])

    # Every connection was checked at every version.
    assert scanner.checked["json"] >= 3 * truth.version
    assert scanner.checked["html"] >= 2 * truth.version
    report = await database_sync_to_async(audit_ledger)()
    assert report.ok, report.discrepancies
