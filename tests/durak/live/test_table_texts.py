"""What the Durak table says (issue 33): the last move in words, a player's own result even after leaving the
game, no "None card" for a seat without cards, and a leave that asks first."""

import re

import pytest

from accounts.audit import audit_ledger
from durak import bot
from durak.rendering import region
from durak.table import Act, Leave
from durak.view import table_view
from tests.durak.live.conftest import play_out, seat_and_start

pytestmark = pytest.mark.django_db


def rendered(table, user_id) -> str:
    return str(region("page", {"view": table_view(table, user_id)}))


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_last_move_is_told_in_words_and_a_seat_without_cards_shows_no_count(open_durak, alice, bob):
    table = open_durak(seats=4)
    actor = seat_and_start(table, alice, bob)
    seat = actor.state.to_act()
    player = alice if actor.state.seats[seat].user_id == alice.pk else bob
    move = bot.choose(actor.state.game.state, seat)
    actor.handle(Act(player.pk, {k: v for k, v in move.items() if k != "player"}))
    html = rendered(actor.state, alice.pk)
    card = move["card"]
    face = f"{'10' if card[0] == 'T' else card[0]}{ {'s': '♠', 'h': '♥', 'd': '♦', 'c': '♣'}[card[1]] }"
    assert f"{player.public_name} plays {face}." in text_of(html)
    assert "None card" not in html  # the two empty seats have no count
    # Bob's hand drawn as backs, one a card; Alice sees her own cards, not backs.
    bob_seat = actor.state.seat_of(bob.pk).number
    assert html.count('<span class="back"></span>') == len(actor.state.game.state.hands[bob_seat])
    assert 'data-confirm="Leave this game?' in html  # leaving a game asks first


def test_a_player_who_left_the_game_still_reads_their_own_result(open_durak, alice):
    table = open_durak()
    actor = seat_and_start(table, alice, bots=1)
    actor.handle(Leave(alice.pk))  # the bot plays her seat to the end, and the seat is freed then
    play_out(actor, {})
    view = table_view(actor.state, alice.pk)
    assert actor.state.seat_of(alice.pk) is None
    assert view["game"]["played"] is not None
    text = text_of(rendered(actor.state, alice.pk))
    fool = view["game"]["fool"]
    if fool is None:
        assert "A draw" in text
    elif fool == view["game"]["played"]:
        assert "You are the fool." in text
    else:
        assert "A bot is the fool. You won." in text  # the bot left with the table's close
    assert not re.search(r"(^|[.>]) +is the fool", text)  # never a blank name
    assert "replay" in text  # her replay and deck check links


def test_a_player_surrenders_the_fool_at_once_and_the_stake_settles_as_a_loss(
    open_durak, alice, bob, balance
):
    table = open_durak(stake=100)
    actor = seat_and_start(table, alice, bob)
    assert 'data-send=\'{"action": "surrender"}\'' in rendered(actor.state, alice.pk)
    seat = actor.state.seat_of(alice.pk).number
    actor.handle(Act(alice.pk, {"action": "surrender"}))  # whoever's turn it is
    game = actor.state.game
    assert game.state.finished
    assert game.state.fool == seat
    assert (balance(alice), balance(bob)) == (9_900, 10_100)
    assert "Alice concedes the game." in text_of(rendered(actor.state, bob.pk))
    assert "You are the fool." in text_of(rendered(actor.state, alice.pk))
    assert audit_ledger().ok


def test_every_attacker_who_may_throw_in_reads_that_it_is_their_move(open_durak, alice, bob, make_user):
    """All sides, three players: once the bout is led, a co-attacker with a card to add may throw it in now
    (simultaneous throw-in), so their status says it is their move, not that the table waits for another."""
    carol = make_user("carol")
    table = open_durak(seats=3)
    actor = seat_and_start(table, alice, bob, carol)
    users = {user.pk: user for user in (alice, bob, carol)}

    def adds(seat: int) -> bool:
        return not table_view(actor.state, actor.state.seats[seat].user_id)["game"].get("passing")

    for _ in range(200):  # until a bout is led and an attacker the table does not time has a card to add
        state = actor.state.game.state
        throwers = table_view(actor.state, None)["game"]["throwers"]
        co_attackers = [s for s in throwers if s != actor.state.to_act() and adds(s)]
        if state.table and co_attackers:
            break
        seat = actor.state.to_act()
        move = bot.choose(state, seat)
        actor.handle(Act(actor.state.seats[seat].user_id, {k: v for k, v in move.items() if k != "player"}))
    else:
        raise AssertionError("no co-attacker with a card to add in 200 moves")
    co_attacker = users[actor.state.seats[co_attackers[0]].user_id]
    status = text_of(rendered(actor.state, co_attacker.pk).split('id="durak-seats"')[0])
    assert "Your move" in status
    assert "Waiting for" not in status
