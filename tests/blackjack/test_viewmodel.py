"""The per-viewer view model, on rows written directly (no services): what each viewer sees and may do,
what never leaves the server, and how many queries a view costs."""

import json
import os
import re
import time
from collections import Counter

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import F
from django.utils import timezone

from blackjack.engine import RuleSet, apply, new_deck_order, new_round
from blackjack.engine.rules import PRESETS
from blackjack.models import Phase, Round, RulePreset, Seat, Shoe, Table, TableEvent
from blackjack.rendering import region
from blackjack.viewmodel import (
    TableUnavailable,
    build_table_view,
    lobby_section,
    read_shared,
    view_of,
    viewer_view,
    visible_table,
)
from cards.fairness import new_server_seed, seed_hash
from live import chat

pytestmark = pytest.mark.django_db

CARD = re.compile(r'"([A2-9TJQK][shdc])"')


def front_loaded_shoe(front: list[str], decks: int) -> list[str]:
    """`front` first, then the rest of a `decks`-deck shoe in canonical order."""
    rest = Counter(new_deck_order(decks))
    rest.subtract(front)
    tail = []
    for card in new_deck_order(decks):
        if rest[card] > 0:
            rest[card] -= 1
            tail.append(card)
    return [*front, *tail]


@pytest.fixture
def users(django_user_model):
    return [
        django_user_model.objects.create_user(username=name, display_name=name.title())
        for name in ("alice", "bob", "carol")
    ]


def make_table(*, preset="Vegas Strip", **fields) -> Table:
    rules = PRESETS[preset].to_dict()
    preset_row, _ = RulePreset.objects.get_or_create(name=preset, defaults={"rules": rules})
    return Table.objects.create(name=f"{preset} table", preset=preset_row, min_bet=10, max_bet=500, **fields)


def deal_round(
    table: Table, seated: dict[int, object], front: list[str], *, actions=()
) -> tuple[Round, Shoe]:
    """Seat the players, open a round on a shoe starting with `front`, bet 10 each, deal, apply `actions`."""
    rules = table.ruleset()
    seed = new_server_seed()
    shoe = Shoe.objects.create(
        table=table, server_seed=seed, seed_hash=seed_hash(seed), client_seed="c", decks=rules.decks
    )
    for number, user in seated.items():
        Seat.objects.create(table=table, number=number, user=user)
    order = front_loaded_shoe(front, rules.decks)
    state = new_round(rules=rules, shoe=order, position=0, seats=list(seated), min_bet=10, max_bet=500)
    for number in seated:
        state = apply(state, {"action": "bet", "seat": number, "amount": 10})
    state = apply(state, {"action": "deal"})
    for action in actions:
        state = apply(state, action)
    phase = {"insurance": Phase.INSURANCE, "playing": Phase.PLAYING, "settled": Phase.SETTLED}[state.phase]
    round_ = Round.objects.create(
        table=table,
        number=1,
        shoe=shoe,
        start_position=0,
        seats=list(seated),
        state=state.to_dict(),
        rules=rules.to_dict(),
        min_bet=10,
        max_bet=500,
        phase=phase,
        version=5,
    )
    Table.objects.filter(pk=table.pk).update(current_round=round_, phase=phase, version=5)
    return round_, shoe


def bump_version(table: Table) -> None:
    """What every service does with a change: the next version (the view model keys its cache on it)."""
    Table.objects.filter(pk=table.pk).update(version=F("version") + 1)


def payload_cards(view) -> list[str]:
    return CARD.findall(json.dumps(view))


# Seat 1: 9h 7c (16), seat 2: 5s 6d (11), dealer Th up, Kd in the hole; then 2c 3c 4c 5c are undealt.
FRONT = ["9h", "5s", "Th", "7c", "6d", "Kd", "2c", "3c", "4c", "5c"]


def test_spectator_sees_the_upcard_and_a_null_hole_card(users):
    table = make_table()
    _round, shoe = deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    view = build_table_view(table_id=table.pk, user=AnonymousUser())

    dealer = view["table"]["dealer"]
    assert dealer == {"cards": ["Th", None], "total": 10, "soft": False, "hole_hidden": True}
    assert view["type"] == "state"
    assert view["v"] == 5
    assert view["table"]["phase"] == "playing"
    assert view["table"]["turn"] == {"seat": 1, "hand": 0}
    # Every card in the payload is one that is face up: the hole card and the undealt cards never appear.
    assert sorted(payload_cards(view)) == sorted(["9h", "7c", "5s", "6d", "Th"])
    text = json.dumps(view)
    assert shoe.server_seed not in text
    assert Table.objects.get(pk=table.pk).next_server_seed not in text
    assert view["table"]["shoe"] == {
        "id": shoe.pk,
        "hash": shoe.seed_hash,
        "client_seed": shoe.client_seed,
        "seat_seeds": shoe.seat_seeds,
        "nonce": shoe.nonce,
        "cards_left": 312 - 6,
        "decks": 6,
    }
    assert view["you"]["is_spectator"] is True
    assert view["you"]["allowed"] == []
    assert view["you"]["hint"] is None


def test_seat_entries_carry_player_hands_and_flags(users):
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    Seat.objects.filter(table=table, number=1).update(
        disconnected_at=timezone.now()
    )  # her owner counts no socket
    seats = build_table_view(table_id=table.pk, user=AnonymousUser())["table"]["seats"]

    assert [seat["seat"] for seat in seats] == [1, 2, 3, 4, 5, 6, 7]
    first, second, empty = seats[0], seats[1], seats[2]
    assert first["player"] == "alice"
    assert first["display_name"] == "Alice"
    assert first["avatar"] == users[0].avatar
    assert first["is_turn"] is True
    assert first["connected"] is False
    assert second["connected"] is True
    assert second["is_turn"] is False
    assert first["hands"] == [
        {
            "cards": ["9h", "7c"],
            "bet": 10,
            "total": 16,
            "soft": False,
            "status": "active",
            "result": None,
            "payout": None,
            "doubled": False,
            "split": False,
            "is_turn": True,
        }
    ]
    assert second["hands"][0]["is_turn"] is False
    assert empty["player"] is None
    assert empty["hands"] == []
    assert empty["connected"] is False


def test_the_player_whose_turn_it_is_gets_actions_and_a_hint(users):
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    you = build_table_view(table_id=table.pk, user=users[0])["you"]

    assert you["username"] == "alice"
    assert you["balance"] == 10_000
    assert you["seats"] == [1]
    assert you["is_spectator"] is False
    assert you["allowed_by_seat"] == {"1": ["hit", "stand", "double", "surrender"]}
    assert set(you["allowed"]) == {"hit", "stand", "double", "surrender", "leave", "chat", "sit"}
    # 16 against a ten with late surrender allowed: basic strategy surrenders.
    assert you["hint"] == {"seat": 1, "hand": 0, "action": "surrender"}
    assert you["can_sit"] is True


def test_a_player_waiting_for_their_turn_may_not_play(users):
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    you = build_table_view(table_id=table.pk, user=users[1])["you"]

    assert you["allowed_by_seat"] == {"2": []}
    assert set(you["allowed"]) == {"leave", "chat", "sit"}
    assert you["hint"] is None


def test_can_sit_respects_seats_per_player_and_free_seats(users):
    table = make_table(seats=2, seats_per_player=1)
    deal_round(table, {1: users[0]}, ["9h", "Th", "7c", "Kd"])
    assert build_table_view(table_id=table.pk, user=users[0])["you"]["can_sit"] is False
    assert build_table_view(table_id=table.pk, user=users[1])["you"]["can_sit"] is True
    Seat.objects.create(table=table, number=2, user=users[2])
    bump_version(table)
    you = build_table_view(table_id=table.pk, user=users[1])["you"]
    assert you["can_sit"] is False
    assert "sit" not in you["allowed"]


def test_hole_card_shows_once_revealed(users):
    table = make_table()
    # Alice stands on 16; Bob stands on 11; the dealer has 20 and stands.
    deal_round(
        table,
        {1: users[0], 2: users[1]},
        FRONT,
        actions=[{"action": "stand", "seat": 1}, {"action": "stand", "seat": 2}],
    )
    view = build_table_view(table_id=table.pk, user=AnonymousUser())
    assert view["table"]["phase"] == "settled"
    assert view["table"]["dealer"] == {
        "cards": ["Th", "Kd"],
        "total": 20,
        "soft": False,
        "hole_hidden": False,
    }
    results = [seat["hands"][0]["result"] for seat in view["table"]["seats"][:2]]
    assert results == ["lose", "lose"]
    you = build_table_view(table_id=table.pk, user=users[0])["you"]
    assert you["allowed_by_seat"] == {"1": ["ready"]}


def test_dealer_blackjack_after_the_peek_is_shown(users):
    table = make_table()
    deal_round(table, {1: users[0]}, ["9h", "Ks", "7c", "Ah"])
    dealer = build_table_view(table_id=table.pk, user=users[0])["table"]["dealer"]
    assert dealer == {"cards": ["Ks", "Ah"], "total": 21, "soft": True, "hole_hidden": False}


def test_insurance_window_offers_insurance_and_hides_the_hole(users):
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, ["9h", "As", "Ac", "7c", "Kd", "Qh"])
    view = build_table_view(table_id=table.pk, user=users[0])
    assert view["table"]["phase"] == "insurance"
    assert view["table"]["dealer"]["cards"] == ["Ac", None]
    assert "Qh" not in payload_cards(view)
    assert view["you"]["allowed_by_seat"] == {"1": ["insurance"]}
    bob = build_table_view(table_id=table.pk, user=users[1])["you"]
    assert bob["allowed_by_seat"] == {"2": ["even_money"]}


def test_no_hole_card_game_shows_one_dealer_card(users):
    table = make_table(preset="European")
    deal_round(table, {1: users[0]}, ["9h", "Th", "7c", "Kd"])
    view = build_table_view(table_id=table.pk, user=users[0])
    assert view["table"]["dealer"] == {"cards": ["Th"], "total": 10, "soft": False, "hole_hidden": False}
    assert "Kd" not in payload_cards(view)
    assert view["table"]["rules"] == RuleSet(dealer_peek=False, double_on="9-11", surrender="none").to_dict()
    assert "no hole card" in view["table"]["rules_summary"]


def test_table_without_a_round_is_waiting(users):
    table = make_table()
    view = build_table_view(table_id=table.pk, user=users[0])
    assert view["table"]["phase"] == "waiting"
    assert view["table"]["dealer"] == {"cards": [], "total": None, "soft": False, "hole_hidden": False}
    assert view["table"]["turn"] is None
    assert view["table"]["shoe"] is None
    assert view["table"]["round_id"] is None
    assert view["you"]["allowed"] == ["chat", "sit"]
    assert all(seat["player"] is None for seat in view["table"]["seats"])


def test_events_are_the_latest_oldest_first_and_no_view_carries_the_chat(users):
    table = make_table()
    for n in range(40):
        TableEvent.objects.create(table=table, kind=TableEvent.Kind.BET, text=f"event {n}")
        chat.post(game="blackjack", table_id=table.pk, user=users[n % 2], text=f"line {n}")
    view = build_table_view(table_id=table.pk, user=AnonymousUser())["table"]
    assert [event["text"] for event in view["events"]] == [f"event {n}" for n in range(10, 40)]
    assert view["events"][0]["kind"] == "bet"
    assert "chat" not in view  # the site's: `live.chat`


def test_query_count_does_not_grow_with_seats_or_events(users, django_assert_num_queries):
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1], 3: users[2]}, [*FRONT[:2], "9c", *FRONT[2:]])
    for n in range(40):
        TableEvent.objects.create(table=table, kind=TableEvent.Kind.ACTION, text=f"event {n}")
    # A view read from the database: table + round + shoe + preset, seats + users + wallets, events; a
    # logged-in viewer without a seat also reads their balance.
    with django_assert_num_queries(3):
        first = build_table_view(table_id=table.pk, user=users[0])
    with django_assert_num_queries(3):
        build_table_view(table_id=table.pk, user=AnonymousUser())
    dave = type(users[0]).objects.create_user(username="dave")
    with django_assert_num_queries(4):
        watcher = build_table_view(table_id=table.pk, user=dave)
    assert watcher["table"] == first["table"]
    assert watcher["you"]["seats"] == []
    assert first["you"]["seats"] == [1]


def test_every_viewer_of_a_version_is_built_from_its_shared_part_without_a_query(
    users, django_assert_num_queries
):
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    shared = read_shared(table.pk)
    with django_assert_num_queries(0):
        first = view_of(shared, users[0])
        second = view_of(shared, users[1])
        spectator = view_of(shared, AnonymousUser())
        watcher = view_of(shared, users[2], balance=1234)  # told the balance (they hold no seat here)
    assert second.view == build_table_view(table_id=table.pk, user=users[1])
    assert second.view["you"]["seats"] == [2]
    assert second.view["you"]["balance"] == users[1].wallet.balance == 10_000
    assert spectator.view["you"]["is_spectator"] is True
    assert spectator.view["you"]["balance"] is None
    assert watcher.view["you"]["balance"] == 1234
    assert second.view["table"] is first.view["table"]


def test_the_json_of_a_view_reuses_the_shared_encoding_and_equals_the_view(users):
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1]}, FRONT)
    found = viewer_view(table_id=table.pk, user=users[0])
    assert json.loads(found.json()) == found.view
    assert found.shared.table_json in found.json()


def test_a_new_version_is_read_afresh(users):
    table = make_table()
    deal_round(table, {1: users[0]}, ["9h", "Th", "7c", "Kd"])
    before = build_table_view(table_id=table.pk, user=AnonymousUser())
    Table.objects.filter(pk=table.pk).update(name="Renamed")
    bump_version(table)
    view = build_table_view(table_id=table.pk, user=AnonymousUser())
    assert view["table"]["name"] == "Renamed"
    assert view["v"] == before["v"] + 1


def test_lobby_lists_public_open_tables_with_seats_taken(users):
    public = make_table()
    make_table(preset="Downtown", is_private=True)
    make_table(preset="European", is_open=False)
    Seat.objects.create(table=public, number=1, user=users[0])
    Seat.objects.create(table=public, number=4, user=users[1])
    Seat.objects.create(table=public, number=5, user=None)
    lobby = lobby_section(1)
    assert [row["id"] for row in lobby["tables"]] == [public.pk]
    row = lobby["tables"][0]
    assert {key: row[key] for key in ("name", "min_bet", "max_bet", "seats", "seats_taken", "phase")} == {
        "name": "Vegas Strip table",
        "min_bet": 10,
        "max_bet": 500,
        "seats": 7,
        "seats_taken": 2,
        "phase": "waiting",
    }
    assert row["rules"] == PRESETS["Vegas Strip"].to_dict()


def test_who_may_watch_a_table(users):
    public = make_table()
    private = make_table(preset="Downtown", is_private=True, created_by=users[2])
    closed = make_table(preset="European", is_open=False)
    Seat.objects.create(table=private, number=2, user=users[1])
    Seat.objects.create(table=closed, number=1, user=users[1])
    anonymous = AnonymousUser()

    assert visible_table(table_id=public.pk, user=anonymous) == public
    with pytest.raises(TableUnavailable):
        visible_table(table_id=999_999, user=anonymous)
    with pytest.raises(TableUnavailable):
        visible_table(table_id=private.pk, user=users[0])
    with pytest.raises(TableUnavailable):
        visible_table(table_id=private.pk, user=anonymous, private_token="wrong")
    assert visible_table(table_id=private.pk, user=anonymous, private_token=private.private_token) == private
    assert visible_table(table_id=private.pk, user=users[1]) == private  # holds a seat
    assert visible_table(table_id=private.pk, user=users[2]) == private  # opened it
    with pytest.raises(TableUnavailable):
        visible_table(table_id=closed.pk, user=users[0])
    assert visible_table(table_id=closed.pk, user=users[1]) == closed


@pytest.mark.skipif(
    not os.environ.get("VIEW_BENCHMARK"), reason="benchmark: set VIEW_BENCHMARK=1 (and use -s)"
)
@pytest.mark.django_db(transaction=True)
def test_view_building_benchmark(users):
    """Prints what one view costs: the first viewer of a version, each further viewer, the HTML rendering,
    and a viewer on a new database connection (CONN_MAX_AGE=0: consumers reopen it for every message)."""
    table = make_table()
    deal_round(table, {1: users[0], 2: users[1], 3: users[2]}, [*FRONT[:2], "9c", *FRONT[2:]])
    for n in range(30):
        TableEvent.objects.create(table=table, kind=TableEvent.Kind.ACTION, text=f"event {n}")
    runs = 50

    def per_view(body) -> float:
        started = time.perf_counter()
        for _ in range(runs):
            body()
        return (time.perf_counter() - started) / runs * 1000

    def first_viewer():
        build_table_view(table_id=table.pk, user=users[0])

    view = build_table_view(table_id=table.pk, user=users[1])
    figures = {
        "first viewer of a version": per_view(first_viewer),
        "each further viewer": per_view(lambda: build_table_view(table_id=table.pk, user=users[1])),
        "spectator": per_view(lambda: build_table_view(table_id=table.pk, user=AnonymousUser())),
        "JSON encoding": per_view(lambda: json.dumps(view)),
        "HTML rendering (live.jinja)": per_view(lambda: region("page", {"view": view, "user": users[1]})),
        "further viewer, new connection": per_view(
            lambda: (connection.close(), build_table_view(table_id=table.pk, user=users[1]))
        ),
    }
    for name, milliseconds in figures.items():
        print(f"{name:32} {milliseconds:7.2f} ms")


def test_avatar_urls_follow_a_change_of_the_static_settings(table, alice, act, settings):
    act(table, alice, "sit", seat=1)
    seat = build_table_view(table_id=table.pk, user=alice)["table"]["seats"][0]
    assert seat["avatar_url"] == f"/static/avatars/{alice.avatar}.svg"
    settings.STATIC_URL = "/assets/"
    seat = build_table_view(table_id=table.pk, user=alice)["table"]["seats"][0]
    assert seat["avatar_url"] == f"/assets/avatars/{alice.avatar}.svg"


def test_a_shared_part_keeps_the_version_it_was_built_of():
    """An actor keeps its table's row and updates it in place at its next commit, while the shared part of
    the previous version may still be on its way to viewers: that part still says its own version (it said
    the newer one, so a viewer could take the older content for the newer version and skip the real one)."""
    table = make_table()
    shared = read_shared(table.pk)
    version = shared.version
    shared.table.version += 1  # the actor's next commit
    assert shared.version == version
    assert view_of(shared, AnonymousUser()).version == version
