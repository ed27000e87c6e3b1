"""The dealer's turn as a moment: the settling command commits the settled round in one write, and viewers are
shown it as `dealer` frames (the hole card turned, then each draw, `DEALER_CARD_SECONDS` apart) before the
`settled` state; the ready window starts once the frames are over.

The flow's timing without a database; the table actor with an injected clock (the frames are a pure function
of the committed round and the time since it settled, alike from the actor's memory and from the database);
a scan of every frame's payloads (JSON and HTML) for what they must not hold yet; the JSON frames in order
through a real Daphne server.
"""

import re
import time
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from blackjack import actors, flow
from blackjack.engine.rules import PRESETS
from blackjack.flow.rounds import DEALER_CARD_SECONDS, dealer_turn_cards
from blackjack.models import TableEvent
from blackjack.rendering import live_html
from blackjack.templatetags.table_ui import card_face
from blackjack.viewmodel import frame_at, read_shared, view_of
from tests.blackjack.conftest import deal_cards
from tests.blackjack.test_table_flow_pure import ANN, BOB, NOW, act, decide, new_table, scripted
from tests.blackjack.wsclient import CommunicatorClient, SocketClient, move, session_cookie

STEP = timedelta(seconds=DEALER_CARD_SECONDS)
READY = timedelta(seconds=10)
# Ann 19 and Bob 16 stand; the dealer's 7 and 5 draw a 2 and a 3: four dealer cards, three frames.
DEALER_DRAWS_TWICE = deal_cards(["Ts", "9h"], ["8c", "8d"], dealer=["7c", "5d"], then=["2h", "3c"])
DEALER_CARDS = ["7c", "5d", "2h", "3c"]


# --- the flow: when the ready window starts ---------------------------------------------------------------


def settle_both_standing(cards, **settings):
    state = new_table(**settings)
    state = act(state, ANN, "sit", seat=1, cards=cards)
    state = act(state, BOB, "sit", seat=2, cards=cards)
    state = act(state, ANN, "bet", amount=100, cards=cards)
    state = act(state, BOB, "bet", amount=50, cards=cards)
    state = act(state, ANN, "stand", cards=cards)
    return decide(state, flow.Act(BOB, {"action": "stand"}, state.version), cards=cards)


def test_the_ready_window_starts_once_the_dealers_turn_has_been_shown():
    outcome = settle_both_standing(scripted(DEALER_DRAWS_TWICE))
    state = outcome.state
    assert state.phase == "settled"
    assert list(state.round.engine.dealer_cards) == DEALER_CARDS
    assert dealer_turn_cards(state.round.engine) == 3  # the hole card, then two draws
    assert state.deadline == NOW + 3 * STEP + READY
    (payments,) = outcome.payments  # the chips move in the settling command, once
    assert payments.payments == [(1, 200, "payout", "seat 1")]
    # The deadline is applied when due, and once.
    early = decide(state, flow.Expire(state.version), at=state.deadline - timedelta(microseconds=1))
    assert not early.changed
    due = decide(state, flow.Expire(state.version), at=state.deadline)
    assert due.state.phase == "betting"
    assert not decide(due.state, flow.Expire(state.version), at=state.deadline).changed


def test_a_round_the_dealer_does_not_play_shows_its_results_at_once():
    # Everyone busts: the dealer turns its hole card but plays nothing out.
    cards = scripted(deal_cards(["Ts", "6h"], dealer=["7c", "Kd"], then=["Ks"]))
    state = act(new_table(), ANN, "sit", seat=1, cards=cards)
    state = act(state, ANN, "bet", amount=100, cards=cards)
    bust = decide(state, flow.Act(ANN, {"action": "hit"}, state.version), cards=cards).state
    assert bust.phase == "settled"
    assert dealer_turn_cards(bust.round.engine) == 0
    assert bust.deadline == NOW + READY
    # A blackjack found at the peek ends the round at the deal.
    cards = scripted(deal_cards(["Ts", "6h"], dealer=["Kc", "Ad"]))
    state = act(new_table(), ANN, "sit", seat=1, cards=cards)
    peeked = decide(state, flow.Act(ANN, {"action": "bet", "amount": 100}, state.version), cards=cards).state
    assert peeked.phase == "settled"
    assert dealer_turn_cards(peeked.round.engine) == 0
    assert peeked.deadline == NOW + READY


def test_without_a_hole_card_the_dealers_second_card_is_its_turn():
    cards = scripted(deal_cards(["Ts", "9h"], ["8c", "8d"], dealer=["7c"], then=["Kd"]))
    outcome = settle_both_standing(cards, rules=PRESETS["European"])
    engine = outcome.state.round.engine
    assert list(engine.dealer_cards) == ["7c", "Kd"]
    assert dealer_turn_cards(engine) == 1
    assert outcome.state.deadline == NOW + STEP + READY


# --- the actor, with the clock injected --------------------------------------------------------------------


def play_to_the_dealers_turn(table, alice, bob, scripted_shoe, at):
    """Alice and Bob stand against the dealer of `DEALER_DRAWS_TWICE`, every command at `at`; the actor."""
    scripted_shoe(table, DEALER_DRAWS_TWICE)
    actor = actors.actor_for(table.pk)
    script = [
        (alice, "sit", {"seat": 1}),
        (bob, "sit", {"seat": 2}),
        (alice, "bet", {"amount": 100}),
        (bob, "bet", {"amount": 50}),
        (alice, "stand", {}),
        (bob, "stand", {}),
    ]
    for user, name, args in script:
        version = actor.state.state.version if actor.state is not None else 0
        actor.handle(actors.player_action(user, {"action": name, **args}, version), now=at)
    return actor


def frames(shared, settled_at):
    """The frames shown from the moment the round settled, one per step and a moment after the last."""
    return [frame_at(shared, settled_at + step * STEP + timedelta(milliseconds=1)) for step in range(5)]


@pytest.mark.django_db
def test_the_actor_commits_the_round_once_and_its_frames_follow_the_clock(
    table, alice, bob, scripted_shoe, balance
):
    settled_at = timezone.now().replace(microsecond=0)
    actor = play_to_the_dealers_turn(table, alice, bob, scripted_shoe, settled_at)
    version = actor.state.state.version
    assert balance(alice) == 10_000 + 100
    assert balance(bob) == 10_000 - 50
    shown = frames(actor.view, settled_at)
    phases = [frame.shared.view_table["phase"] for frame in shown]
    assert phases == ["dealer", "dealer", "dealer", "settled", "settled"]
    assert [frame.index for frame in shown] == [0, 1, 2, 3, 3]
    assert [frame.shared.view_table["dealer"]["cards"] for frame in shown] == [
        DEALER_CARDS[:2],
        DEALER_CARDS[:3],
        DEALER_CARDS,
        DEALER_CARDS,
        DEALER_CARDS,
    ]
    assert [frame.next_at for frame in shown] == [settled_at + n * STEP for n in (1, 2, 3)] + [None, None]
    assert all(frame.shared.version == version for frame in shown)
    # The same frames from the database: another process's viewers, or a viewer who connects mid-reveal.
    stored = frames(read_shared(table.pk), settled_at)
    for ours, theirs in zip(shown, stored, strict=True):
        for key in ("phase", "deadline", "dealer", "events", "shoe"):
            assert ours.shared.view_table[key] == theirs.shared.view_table[key], key
        # (Presence aside: the actor counts a player who acted as connected, these tests open no socket.)
        seats = [
            [{**seat, "connected": None} for seat in frame.shared.view_table["seats"]]
            for frame in (ours, theirs)
        ]
        assert seats[0] == seats[1]
    # Nobody decides anything during the dealer's turn; the ready check opens with the settled frame.
    assert view_of(shown[0].shared, alice).view["you"]["allowed_by_seat"] == {"1": []}
    assert view_of(shown[3].shared, alice).view["you"]["allowed_by_seat"] == {"1": ["ready"]}
    # The ready window's deadline, armed by the actor, comes after the frames: applied when due, once.
    deadline = settled_at + 3 * STEP + READY
    assert actor.deadline() == (version, deadline)
    assert actor.expire(version, now=deadline - timedelta(milliseconds=1)) == 0
    assert actor.expire(version, now=deadline) >= 1
    assert actor.state.state.phase == "betting"
    assert actor.expire(version, now=deadline) == 0


@pytest.mark.django_db
def test_no_dealer_frame_holds_a_card_not_yet_shown_results_or_balances_after_payment(
    table, alice, bob, scripted_shoe, balance
):
    settled_at = timezone.now().replace(microsecond=0)
    actor = play_to_the_dealers_turn(table, alice, bob, scripted_shoe, settled_at)
    paid = balance(alice)
    assert paid == 10_100
    settlement = list(
        TableEvent.objects.filter(
            table=table, kind__in=("dealer", "result"), created_at=settled_at
        ).values_list("text", flat=True)
    )
    assert len(settlement) == 3  # the dealer's total, and each seat's result
    viewers = [alice, bob, AnonymousUser()]
    shown = frames(actor.view, settled_at)
    for frame in shown[:3]:
        hidden = DEALER_CARDS[frame.index + 2 :]
        for user in viewers:
            found = view_of(frame.shared, user, balance=paid if user == alice else None)
            for payload in (found.json(), found.json(lean=True)):
                for card in hidden:
                    assert f'"{card}"' not in payload
                assert '"result":"' not in payload
                assert not re.search(r'"payout":\d', payload)
                assert not re.search(r'"insurance_payout":[1-9]', payload)
                assert '"balance":10100' not in payload
                assert all(text not in payload for text in settlement)
            html = live_html(found, user=user)
            for card in hidden:
                assert card_face(card)["label"] not in html
            assert "round-banner" not in html
            assert 'class="result' not in html
            assert "10100" not in html
            assert "10,100" not in html
            assert all(text not in html for text in settlement)
            if user == alice:
                assert found.view["you"]["balance"] == 10_000 - 100
    # The settled frame shows everything (so the scan above can fail): the last card, results, payment.
    found = view_of(shown[3].shared, alice, balance=paid)
    assert '"3c"' in found.json()
    assert '"result":"win"' in found.json()
    assert '"balance":10100' in found.json()
    html = live_html(found, user=alice)
    assert "round-banner" in html
    assert card_face("3c")["label"] in html
    assert all(text in found.json() for text in settlement)


# --- through Daphne: the JSON frames, in order and paced ---------------------------------------------------


def dealer_draws_twice(order):
    """Seats 1 and 2 stand on hard 17-20; the dealer (2-6 up) draws at least twice (no ace before then)."""
    from tests.browser.table_support import value

    a1, b1, up, a2, b2, hole, first, _second = order[:8]
    no_ace = 1 not in {value(card) for card in (a1, b1, up, a2, b2, hole, first)}
    return (
        no_ace
        and 17 <= value(a1) + value(a2) <= 20
        and 17 <= value(b1) + value(b2) <= 20
        and value(up) + value(hole) + value(first) < 17
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_daphne_sends_the_dealer_frames_in_order_then_the_settled_state(
    live_site, make_table, alice, bob
):
    from tests.browser.table_support import stack_shoe

    table = await database_sync_to_async(make_table)()
    await database_sync_to_async(stack_shoe)(table, dealer_draws_twice)
    path = live_site.replace("http://", "ws://", 1) + f"/ws/tables/{table.pk}/?format=json"
    clients = []
    for user in (alice, bob, None):
        cookie = await database_sync_to_async(session_cookie)(user) if user is not None else None
        client = SocketClient(getattr(user, "username", "spectator"), path, cookie=cookie, origin=live_site)
        await client.connect()
        await client.receive()
        clients.append(client)
    a, b, watcher = clients
    try:
        await move(a, "sit", seat=1, others=[b, watcher])
        await move(b, "sit", seat=2, others=[a, watcher])
        await move(a, "bet", amount=10, others=[b, watcher])
        await move(b, "bet", amount=10, others=[a, watcher])
        await move(a, "stand", others=[b, watcher])
        sent = time.monotonic()
        await b.act("stand")
        received = []  # the spectator's states: (version, phase, dealer cards, results, when)
        while not received or received[-1][1] != "settled":
            message = await watcher.receive()
            if message["type"] == "state":
                table_view = message["table"]
                results = [hand["result"] for seat in table_view["seats"][:2] for hand in seat["hands"]]
                cards = table_view["dealer"]["cards"]
                received.append((message["v"], table_view["phase"], cards, results, time.monotonic()))
        # Every frame is of the version the settling command made.
        assert {version for version, *_ in received} == {b.version + 1}
        phases = [phase for _, phase, *_ in received]
        dealer = received[-1][2]
        assert len(dealer) >= 4
        assert phases == ["dealer"] * (len(dealer) - 1) + ["settled"]
        assert [cards for _, _, cards, _, _ in received[:-1]] == [
            dealer[:n] for n in range(2, len(dealer) + 1)
        ]
        assert all(results == [None, None] for *_, results, _ in received[:-1])
        assert all(received[-1][3])
        # Frame n is due n * DEALER_CARD_SECONDS after the settling command, sent at `sent`: none may arrive
        # sooner (a busy machine only delays frames, so this bound holds however loaded it is).
        early = [
            (n, round(moment - sent, 3))
            for n, (*_, moment) in enumerate(received)
            if moment < sent + n * DEALER_CARD_SECONDS - 0.05
        ]
        assert not early, early
    finally:
        for client in clients:
            await client.close()


# --- a viewer who connects during the dealer's turn ---------------------------------------------------------


def settle_now(table, alice, bob, scripted_shoe):
    """Play the round of `DEALER_DRAWS_TWICE` to its settlement through the services (real time)."""
    from blackjack import services

    scripted_shoe(table, DEALER_DRAWS_TWICE)
    script = [(alice, "sit", {"seat": 1}), (bob, "sit", {"seat": 2}), (alice, "bet", {"amount": 100})]
    script += [(bob, "bet", {"amount": 50}), (alice, "stand", {}), (bob, "stand", {})]
    for user, name, args in script:
        table.refresh_from_db()
        action = {"action": name, **args}
        services.perform(table_id=table.pk, user=user, action=action, expected_version=table.version)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_viewer_who_connects_during_the_dealers_turn_gets_the_frame_of_the_moment_then_the_rest(
    make_table, alice, bob, scripted_shoe, monkeypatch
):
    # A slower pace than the site's, so that a busy machine still connects before the frames are over.
    for module in ("blackjack.flow.rounds", "blackjack.viewmodel"):
        monkeypatch.setattr(f"{module}.DEALER_CARD_SECONDS", 2.0)
    table = await database_sync_to_async(make_table)()
    await database_sync_to_async(settle_now)(table, alice, bob, scripted_shoe)
    shared = await database_sync_to_async(read_shared)(table.pk)
    before = frame_at(shared, timezone.now()).index
    watcher = CommunicatorClient("spectator", f"/ws/tables/{table.pk}/?format=json")
    assert await watcher.connect()
    try:
        first = await watcher.receive()
        after = frame_at(shared, timezone.now()).index
        assert after < 3, "the test connected too late to see a dealer frame"
        shown = len(first["table"]["dealer"]["cards"])
        assert first["table"]["phase"] == "dealer"
        assert before + 2 <= shown <= after + 2  # the frame of the moment it connected
        seen = [shown]
        while watcher.state["table"]["phase"] == "dealer":
            message = await watcher.receive()
            seen.append(len(message["table"]["dealer"]["cards"]))
        assert seen == [*range(shown, len(DEALER_CARDS) + 1), len(DEALER_CARDS)]
        assert watcher.state["table"]["phase"] == "settled"
        assert watcher.state["v"] == first["v"]
    finally:
        await watcher.close()
