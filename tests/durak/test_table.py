"""The pure table flow (`durak.table.decide`), no database: the waiting room's ready check, turn timers
and the reconnect grace, with `now` injected."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from cards.errors import Refused
from cards.fairness import client_seed_of, combine_client_seeds, seed_digests
from durak import bot
from durak.bot import actor as bot_to_act
from durak.bots import knowledge
from durak.engine import legal_actions, new_game, shuffled_deck, start_game, throwers
from durak.table import (
    CLOSED,
    PLAYING,
    READY_SECONDS,
    WAITING,
    Act,
    AddBot,
    Close,
    Expire,
    Leave,
    Present,
    Ready,
    Reopen,
    Seat,
    Sit,
    Start,
    Table,
    decide,
    timeout_action,
)
from durak.view import table_view

from .conftest import scripted_deck

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
ALICE, BOB, CAROL = 1, 2, 3
SEEDS = {"fresh_seed": "ab" * 32, "seed": "c" * 64}
COMMITTED = "cd" * 32  # the table's next server seed when it opens


def new_table(seats: int = 3, **options) -> Table:
    fields = {
        "id": 1,
        "name": "t",
        "variant": "podkidnoy",
        "attack": "all_sides",
        "limit": "six",
        "seats": tuple(Seat(n) for n in range(seats)),
        "stake": 0,
        "rated": True,
        "turn_seconds": 20,
        "opener": ALICE,
        "next_server_seed": COMMITTED,
        **options,
    }
    return Table(**fields)


def run(table: Table, *commands, now: datetime = T0) -> Table:
    for command in commands:
        outcome = decide(table, command, now, bot_seconds=1.0, grace_seconds=30)
        assert outcome is not None, command
        table = outcome.table
    return table


def ready(user_id: int) -> Ready:
    return Ready(user_id, **SEEDS)


def start(user_id: int) -> Start:
    return Start(user_id, **SEEDS)


def two_players(**options) -> Table:
    """Alice and Bob playing a 2-player game at a 3-seat table (started by both being ready)."""
    return run(new_table(**options), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), ready(ALICE), ready(BOB))


def refused(table: Table, command, code: str, now: datetime = T0) -> None:
    with pytest.raises(Refused) as caught:
        decide(table, command, now)
    assert caught.value.code == code


# --- the waiting room ---


def test_the_game_starts_when_every_seated_player_is_ready_with_a_seat_left_empty():
    table = run(new_table(), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), ready(ALICE))
    assert table.status == WAITING
    assert table.seats[0].ready
    table = run(table, ready(BOB))
    assert table.status == PLAYING
    assert table.game.players == (ALICE, BOB)
    assert table.game.state.rules.players == 2  # the empty third seat does not play
    assert table.seats[2].empty
    assert not table.in_game(table.seats[2])


def test_a_player_alone_with_no_one_else_does_not_start_by_being_ready():
    table = run(new_table(), Sit(ALICE, "Alice"), ready(ALICE))
    assert table.status == WAITING


def test_the_opener_starts_once_two_seats_are_ready_and_the_unready_player_sits_out():
    table = run(new_table(seats=4), Sit(BOB, "Bob"), Sit(ALICE, "Alice"), Sit(CAROL, "Carol"))
    refused(table, start(ALICE), "not_enough_ready")  # only the opener would be ready
    table = run(table, ready(CAROL))
    refused(table, start(BOB), "not_opener")
    table = run(table, start(ALICE))
    assert table.status == PLAYING
    # The playing seats move to the front in their order; Bob, not ready, sits out after them.
    assert [s.user_id for s in table.seats] == [ALICE, CAROL, BOB, None]
    assert table.game.players == (ALICE, CAROL)
    bob_seat = table.seat_of(BOB)
    assert not table.in_game(bob_seat)
    refused(table, Act(BOB, {"action": "take"}), "not_in_game")
    # Bob leaving frees his seat at once (he is not in the game), the game goes on.
    after = run(table, Leave(BOB))
    assert after.seat_of(BOB) is None
    assert after.status == PLAYING


def test_bots_are_always_ready_and_the_opener_starts_with_one():
    table = run(new_table(), Sit(ALICE, "Alice"), AddBot(ALICE), Sit(BOB, "Bob"))
    table = run(table, start(ALICE))
    assert table.game.players == (ALICE, None)
    assert [s.user_id for s in table.seats] == [ALICE, None, BOB]
    assert table.seats[1].is_bot


def test_a_game_is_rated_only_with_two_players_at_a_rated_table():
    against_a_bot = run(new_table(), Sit(ALICE, "Alice"), AddBot(ALICE), start(ALICE))
    assert not against_a_bot.game.rated  # bots carry no rating: beating one cannot lift a rating
    two_and_a_bot = run(new_table(), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), AddBot(ALICE), ready(BOB))
    two_and_a_bot = run(two_and_a_bot, start(ALICE))
    assert two_and_a_bot.game.players == (ALICE, BOB, None)
    assert two_and_a_bot.game.rated
    assert not two_players(rated=False).game.rated


def test_the_deck_is_the_committed_server_seed_and_every_playing_players_seed():
    table = run(new_table(seats=4), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), Sit(CAROL, "Carol"), AddBot(ALICE))
    assert table.next_server_seed == COMMITTED  # before anyone gives a seed (its hash is in every view)
    fresh = "ef" * 32
    table = run(table, Ready(BOB, fresh, seed="bob's"), Start(ALICE, fresh, seed="alice's"))
    # Carol, not ready, sits out: her seat gave no seed; the bot gives none.
    mixed = combine_client_seeds(["alice's", "bob's"])
    assert (table.game.server_seed, table.game.client_seed) == (COMMITTED, mixed)
    # Each player finds their own seed's digest among the published ones (issue 34, item 6).
    assert table.game.seed_digests == tuple(seed_digests(["bob's", "alice's"]))
    assert client_seed_of(list(table.game.seed_digests)) == mixed
    dealt = start_game(table.game.match, shuffled_deck(server_seed=COMMITTED, client_seed=mixed))
    assert table.game.state.hands == dealt.hands
    assert table.next_server_seed == fresh  # the seed drawn with the deal is the next game's commitment
    other = run(new_table(seats=4), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), Sit(CAROL, "Carol"), AddBot(ALICE))
    other = run(other, Ready(BOB, fresh, seed="bob's"), Start(ALICE, fresh, seed="another"))
    assert other.game.state.hands != table.game.state.hands  # each player's seed changes the deal
    ended = _play_to_the_end(table)
    assert {seat.seed for seat in ended.seats} == {""}  # the next game asks for seeds again
    again = run(ended, Ready(BOB, "01" * 32, seed="b2"), Start(ALICE, "01" * 32, seed="a2"))
    assert again.game.server_seed == fresh


def test_readiness_is_checked_again_between_games_and_players_leave_between_games():
    table = two_players()
    table = _play_to_the_end(table)
    assert table.status == WAITING
    assert not any(seat.ready for seat in table.seats)
    table = run(table, Leave(BOB))
    assert table.seat_of(BOB) is None
    assert table.status == WAITING
    table = run(table, Sit(CAROL, "Carol"), ready(CAROL), ready(ALICE))
    assert table.status == PLAYING
    assert set(table.game.players) == {ALICE, CAROL}
    assert table.game.number == 2


def test_a_player_sits_down_during_a_game_and_plays_the_next():
    table = run(two_players(), Sit(CAROL, "Carol"))
    assert not table.in_game(table.seat_of(CAROL))
    refused(table, ready(CAROL), "game_in_play")
    table = _play_to_the_end(table)
    table = run(table, ready(ALICE), ready(BOB), ready(CAROL))
    assert table.game.state.rules.players == 3


def test_the_match_goes_on_with_the_same_players_and_restarts_with_others():
    table = _play_to_the_end(two_players())
    table = run(table, ready(ALICE), ready(BOB))
    assert len(table.game.match.fools) == 1  # the same players: the match goes on
    table = run(_play_to_the_end(table), Sit(CAROL, "Carol"), ready(ALICE), ready(BOB), ready(CAROL))
    assert table.game.match.fools == ()  # another line-up: a new match


def test_ready_refusals_change_nothing():
    table = run(new_table(), Sit(ALICE, "Alice"), ready(ALICE))
    refused(table, ready(ALICE), "already_ready")
    refused(table, ready(BOB), "not_seated")
    refused(two_players(), ready(ALICE), "game_in_play")


# --- turn timers ---


def test_the_turn_deadline_is_the_player_s_turn_time_and_a_bot_s_is_short():
    table = two_players()
    assert table.turn_deadline == T0 + timedelta(seconds=20)
    assert table.deadline == table.turn_deadline
    bots = run(new_table(), Sit(ALICE, "Alice"), AddBot(ALICE), start(ALICE))
    if bot_to_act(bots.game.state) == 1:
        assert bots.turn_deadline == T0 + timedelta(seconds=1)


def test_an_expiry_before_its_time_or_of_another_version_changes_nothing():
    table = two_players()
    assert decide(table, Expire(table.version), T0 + timedelta(seconds=19)) is None
    assert decide(table, Expire(table.version - 1), T0 + timedelta(seconds=60)) is None


def test_a_leader_who_times_out_leads_the_cheapest_card():
    table = two_players()
    leader = table.to_act()
    outcome = decide(table, Expire(table.version), T0 + timedelta(seconds=20))
    assert outcome.logged.seat == leader
    assert outcome.logged.action["action"] == "attack"
    assert outcome.logged.by_bot


def test_a_defender_who_times_out_takes_and_an_attacker_who_times_out_is_done():
    table = two_players()
    leader = table.to_act()
    card = legal_actions(table.game.state, leader)[0]["card"]
    table = run(table, Act(table.seats[leader].user_id, {"action": "attack", "card": card}))
    defender = table.to_act()
    assert defender != leader
    later = T0 + timedelta(seconds=25)
    outcome = decide(table, Expire(table.version), later)
    assert outcome.logged.action == {"action": "take", "player": defender}
    table = outcome.table
    assert table.to_act() == leader  # may throw in, or be done
    assert table.turn_deadline == later + timedelta(seconds=20)
    outcome = decide(table, Expire(table.version), later + timedelta(seconds=20))
    assert outcome.logged.action == {"action": "done", "player": leader}


def test_an_attacker_who_can_only_be_done_is_done_for_after_the_bots_pause():
    """No card of a rank on the table: "Done" is the only move, so the table says it after a bot's pause
    instead of waiting for the click or the whole turn; an attacker with a card to add has the turn's time."""
    table, now, seen = two_players(), T0, set()
    while table.status == PLAYING and len(seen) < 2:
        seat = table.to_act()
        options = legal_actions(table.game.state, seat)
        kinds = {option["action"] for option in options}
        if "done" in kinds:
            only_done = kinds == {"done"}
            seen.add(only_done)
            assert table.turn_deadline == now + timedelta(seconds=1 if only_done else 20)
        now += timedelta(seconds=1)
        if "done" in kinds and kinds == {"done"}:
            outcome = decide(table, Expire(table.version), now, bot_seconds=1.0, grace_seconds=30)
            assert outcome.logged.action == {"action": "done", "player": seat}
            assert outcome.logged.by_bot
        else:
            move = {k: v for k, v in options[0].items() if k != "player"}
            outcome = decide(
                table, Act(table.seats[seat].user_id, move), now, bot_seconds=1.0, grace_seconds=30
            )
        table = outcome.table
    assert seen == {True, False}  # both kinds of position were met


def test_timeout_action_prefers_take_then_done():
    table = two_players()
    state = table.game.state
    leader = bot_to_act(state)
    assert timeout_action(state, leader)["action"] == "attack"


# --- the reconnect grace ---


def only(*players: int) -> Present:
    """The owner counts sockets of these players only."""
    return Present(frozenset(players))


def test_a_player_who_returns_within_the_grace_keeps_the_seat():
    table = two_players()
    table = run(table, only(ALICE), now=T0 + timedelta(seconds=5))
    bob = table.seat_of(BOB)
    assert bob.gone == T0 + timedelta(seconds=5)
    assert not bob.away
    assert table.deadline == min(table.turn_deadline, T0 + timedelta(seconds=35))
    assert table.turn_deadline == T0 + timedelta(seconds=20)  # a presence does not reset the turn time
    table = run(table, only(ALICE, BOB), now=T0 + timedelta(seconds=30))
    assert table.seat_of(BOB).gone is None
    assert decide(table, only(ALICE, BOB), T0) is None  # a second tab: nothing changes


def test_after_the_grace_the_bot_plays_the_seat_for_the_rest_of_the_game():
    table = two_players(turn_seconds=300)
    table = run(table, only(ALICE), now=T0)
    assert table.deadline == T0 + timedelta(seconds=30)
    outcome = decide(table, Expire(table.version), T0 + timedelta(seconds=30), bot_seconds=1.0)
    table = outcome.table
    assert outcome.seats_changed
    assert table.seat_of(BOB).away
    if table.to_act() == table.seat_of(BOB).number:
        assert table.turn_deadline == T0 + timedelta(seconds=31)  # the bot's short time from now
    # Coming back does not end it: the bot plays to the game's end.
    assert decide(table, only(ALICE, BOB), T0) is None
    refused(table, Act(BOB, {"action": "take"}), "away")
    table = _play_to_the_end(table)
    assert table.seat_of(BOB) is None  # his seat is free after the game
    assert table.game.players == (ALICE, BOB)  # he still settles as the seat did


def test_a_player_who_leaves_mid_game_is_away_at_once():
    table = run(two_players(), Leave(BOB))
    assert table.seat_of(BOB).away
    refused(table, Leave(BOB), "already_away")


def test_a_spectator_s_presence_changes_nothing():
    assert decide(two_players(), only(ALICE, BOB, CAROL), T0) is None
    assert decide(two_players(), only(ALICE, BOB), T0) is None


def test_every_seated_player_without_a_socket_is_marked_and_an_earlier_mark_keeps_its_time():
    table = run(two_players(), only(), now=T0 + timedelta(seconds=5))
    assert table.seat_of(ALICE).gone == table.seat_of(BOB).gone == T0 + timedelta(seconds=5)
    table = run(table, only(ALICE), now=T0 + timedelta(seconds=9))
    assert table.seat_of(ALICE).gone is None
    assert table.seat_of(BOB).gone == T0 + timedelta(seconds=5)  # his grace runs from his first mark
    assert table.deadline == min(table.turn_deadline, T0 + timedelta(seconds=35))


def test_the_grace_of_a_player_not_in_the_game_does_not_run():
    table = run(two_players(), Sit(CAROL, "Carol"), only(ALICE, BOB))
    assert table.seat_of(CAROL).gone is not None
    assert table.deadline == table.turn_deadline


def test_a_closed_table_ignores_presence():
    table = run(new_table(), Sit(ALICE, "Alice"), Leave(ALICE))
    assert table.status == CLOSED
    assert decide(table, only(), T0) is None


def _play_to_the_end(table: Table) -> Table:
    """Every turn times out (players take or are done, bots and away seats move) until the game ends."""
    now = T0
    while table.status == PLAYING:
        now = max(now, table.deadline)
        table = decide(table, Expire(table.version), now).table
    return table


def test_timeouts_alone_finish_a_game():
    table = _play_to_the_end(two_players())
    assert table.game.state.finished
    assert table.status == WAITING


# --- nobody holds a table between games (issue 34, item 7) ---


def test_between_games_a_player_without_a_socket_loses_the_seat_after_the_grace():
    table = run(new_table(), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), only(ALICE), now=T0)
    assert table.seat_of(BOB).gone == T0
    assert table.deadline == T0 + timedelta(seconds=30)
    assert decide(table, Expire(table.version), T0 + timedelta(seconds=29), grace_seconds=30) is None
    outcome = decide(table, Expire(table.version), T0 + timedelta(seconds=30), grace_seconds=30)
    assert outcome.seats_changed
    freed = outcome.table
    assert freed.seat_of(BOB) is None
    assert freed.seat_of(ALICE) is not None
    assert freed.status == WAITING
    assert freed.deadline is None
    # The last player gone: the table closes (and leaves the lobby).
    alone = run(freed, only(), now=T0 + timedelta(seconds=40))
    closed = decide(alone, Expire(alone.version), T0 + timedelta(seconds=70), grace_seconds=30).table
    assert closed.status == CLOSED


def test_a_player_who_comes_back_within_the_grace_keeps_the_seat_between_games():
    table = run(new_table(), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), only(ALICE), now=T0)
    table = run(table, only(ALICE, BOB), now=T0 + timedelta(seconds=10))
    assert table.seat_of(BOB).gone is None
    assert table.deadline is None


def test_the_unready_stand_up_once_the_ready_deadline_passes():
    table = run(new_table(), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), Sit(CAROL, "Carol"), ready(ALICE))
    deadline = T0 + timedelta(seconds=READY_SECONDS)
    assert table.ready_deadline == deadline == table.deadline
    table = run(table, ready(BOB), now=T0 + timedelta(seconds=5))
    assert table.ready_deadline == deadline  # it runs from the first ready seat
    assert decide(table, Expire(table.version), deadline - timedelta(seconds=1)) is None
    outcome = decide(table, Expire(table.version, fresh_seed="ef" * 32), deadline)
    # Carol stood up; Alice and Bob, both ready, play.
    assert outcome.started
    assert outcome.table.seat_of(CAROL) is None
    assert outcome.table.status == PLAYING
    assert outcome.table.game.players == (ALICE, BOB)
    assert outcome.table.next_server_seed == "ef" * 32
    assert outcome.table.ready_deadline is None


def test_a_lone_ready_player_beside_an_idle_one_keeps_the_seat_and_waits():
    table = run(new_table(), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), ready(ALICE))
    deadline = table.ready_deadline
    outcome = decide(table, Expire(table.version, fresh_seed="ef" * 32), deadline)
    assert not outcome.started
    assert outcome.table.seat_of(BOB) is None
    assert outcome.table.seat_of(ALICE).ready
    assert outcome.table.ready_deadline is None  # nobody unready left: nothing to wait for


def test_after_a_game_with_a_bot_the_players_have_the_ready_deadline_to_play_again():
    table = _play_to_the_end(run(new_table(), Sit(ALICE, "Alice"), AddBot(ALICE), start(ALICE)))
    assert table.status == WAITING
    assert table.ready_deadline is not None  # the bot is ready at once


# --- staff close and reopen a table ---


def test_staff_close_a_table_between_games_at_once():
    table = run(new_table(), Sit(ALICE, "Alice"), AddBot(ALICE), Close())
    assert table.status == CLOSED
    assert all(seat.empty for seat in table.seats)
    refused(table, Sit(BOB, "Bob"), "table_closed")
    table = run(table, Reopen())
    assert table.status == WAITING
    assert run(table, Sit(BOB, "Bob")).seat_of(BOB) is not None


def test_staff_close_a_table_in_a_game_when_the_game_ends():
    table = run(two_players(), Close())
    assert table.status == PLAYING
    assert table.closing
    refused(table, Sit(CAROL, "Carol"), "table_closed")
    assert decide(table, Close(), T0) is None  # closing already
    ended = _play_to_the_end(table)
    assert ended.status == CLOSED
    assert all(seat.empty for seat in ended.seats)
    kept = _play_to_the_end(run(two_players(), Close(), Reopen()))
    assert kept.status == WAITING
    assert not kept.closing


def test_the_site_s_own_table_stays_open_when_its_last_player_leaves_and_a_player_s_closes():
    """The demo tables (no opener) wait for the next players with their bots gone; a table a player opened
    leaves the lobby once nobody holds a seat."""
    site = run(new_table(opener=None), Sit(ALICE, "Alice"), AddBot(ALICE), Leave(ALICE))
    assert site.status == WAITING
    assert all(seat.empty for seat in site.seats)
    own = run(new_table(), Sit(ALICE, "Alice"), AddBot(ALICE), Leave(ALICE))
    assert own.status == CLOSED


# --- the simultaneous throw-in at the table ---

THREE = [
    ["6s", "7h", "8d", "9s", "Ts", "Js"],
    ["7s", "8h", "9d", "Qs", "Qh", "Qd"],
    ["6h", "6d", "7d", "8s", "9h", "Th"],
]


def scripted(table: Table, hands: list[list[str]], *, first: int = 0) -> Table:
    """The table's game with a scripted deal (trump clubs, none dealt), `first` leading."""
    rules = table.game.state.rules
    state = new_game(rules, scripted_deck(hands, trump="Ac", talon=[]), first_attacker=first)
    game = replace(table.game, state=state, seen=knowledge.start(state))
    return replace(table, game=game)


def three_players(hands: list[list[str]] = THREE, bot_seat: bool = False) -> Table:
    """Alice, Bob and Carol (or a bot at seat 2) at a 3-seat all-sides table, Alice leading 6s and Bob
    beating it with 7s: the bout is open to Alice and seat 2 at once."""
    if bot_seat:
        table = run(new_table(), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), AddBot(ALICE))
        table = run(table, ready(ALICE), ready(BOB))
    else:
        table = run(new_table(), Sit(ALICE, "Alice"), Sit(BOB, "Bob"), Sit(CAROL, "Carol"))
        table = run(table, ready(ALICE), ready(BOB), ready(CAROL))
    table = scripted(table, hands)
    table = run(table, Act(ALICE, {"action": "attack", "card": "6s"}))
    return run(table, Act(BOB, {"action": "beat", "card": "7s", "target": "6s"}))


def test_a_co_attacker_throws_in_without_waiting_for_the_attacker_to_be_done():
    table = three_players()
    assert throwers(table.game.state) == [0, 2]
    table = run(table, Act(CAROL, {"action": "attack", "card": "6h"}))
    assert table.game.state.table[-1] == ("6h", None)
    assert table.to_act() == 1  # the defender answers
    refused(table, Act(BOB, {"action": "attack", "card": "8h"}), "not_your_turn")


def test_the_players_adding_cards_share_one_deadline_and_are_all_done_when_it_passes():
    table = three_players()
    deadline = T0 + timedelta(seconds=20)
    assert (table.to_act(), table.turn_deadline) == (0, deadline)
    # Carol says done: Alice's time runs on, not restarted.
    table = run(table, Act(CAROL, {"action": "done"}), now=T0 + timedelta(seconds=5))
    assert (table.to_act(), table.turn_deadline) == (0, deadline)
    outcome = decide(table, Expire(table.version), deadline)
    assert outcome.logged.action == {"action": "done", "player": 0}
    assert outcome.table.game.state.table == ()  # every attacker done: the bout is beaten off


def test_when_the_time_runs_out_every_attacker_not_done_is_done_at_once():
    table = three_players()
    deadline = table.turn_deadline
    outcome = decide(table, Expire(table.version), deadline)
    assert outcome.logged.action == {"action": "done", "player": 0}
    table = outcome.table
    assert (table.to_act(), table.turn_deadline, table.deadline) == (2, deadline, deadline)  # due already
    outcome = decide(table, Expire(table.version), deadline)
    assert outcome.logged.action == {"action": "done", "player": 2}
    assert outcome.table.game.state.table == ()
    assert outcome.table.turn_deadline == deadline + timedelta(seconds=20)  # Bob leads, with his own time


def test_a_throw_in_gives_the_defender_a_new_deadline():
    table = three_players()
    later = T0 + timedelta(seconds=7)
    table = run(table, Act(CAROL, {"action": "attack", "card": "7d"}), now=later)
    assert (table.to_act(), table.turn_deadline) == (1, later + timedelta(seconds=20))


def test_a_bot_adding_cards_moves_first_then_the_players_have_their_time():
    table = three_players(bot_seat=True)
    assert table.seats[2].is_bot
    assert (table.to_act(), table.turn_deadline) == (2, T0 + timedelta(seconds=1))
    outcome = decide(table, Expire(table.version), T0 + timedelta(seconds=1))
    assert outcome.logged.seat == 2
    assert outcome.logged.by_bot


def test_a_player_with_nothing_to_add_is_passed_after_the_pause_and_the_others_keep_their_turn():
    hands = [THREE[0], THREE[1], ["Kh", "Kd", "Ah", "Ad", "As", "Ks"]]
    table = three_players(hands)
    assert (table.to_act(), table.turn_deadline) == (2, T0 + timedelta(seconds=1))
    view = table_view(table, CAROL)
    assert view["game"]["passing"]
    assert view["game"]["allowed"] == []
    assert table_view(table, ALICE)["game"]["allowed"] == [
        {"action": "attack", "player": 0, "card": "7h"},
        {"action": "done", "player": 0},
    ]
    later = T0 + timedelta(seconds=1)
    outcome = decide(table, Expire(table.version), later)
    assert outcome.logged.action == {"action": "done", "player": 2}
    assert (outcome.table.to_act(), outcome.table.turn_deadline) == (0, later + timedelta(seconds=20))


def test_every_attacker_who_may_add_sees_the_cards_and_done_and_who_else_may_add():
    table = three_players()
    for user in (ALICE, CAROL):
        game = table_view(table, user)["game"]
        assert {option["action"] for option in game["allowed"]} == {"attack", "done"}
        assert game["throwers"] == [0, 2]
        assert "passing" not in game
    assert table_view(table, BOB)["game"]["allowed"] == []


# --- the bots' memory at the table ---


def test_the_table_remembers_the_cards_picked_up_and_its_bot_plays_with_them(monkeypatch):
    """Alice takes the bot's lead: everyone now knows those cards are in her hand, and the bot's next
    decisions are given that knowledge (as `durak.bot.play` gives it)."""
    table = run(new_table(), Sit(ALICE, "Alice"), AddBot(ALICE), start(ALICE))
    hands = [["7s", "8h", "9d", "Qs", "Qh", "Qd"], ["6s", "6h", "7h", "8d", "9s", "Ts"]]
    table = scripted(table, hands, first=1)
    assert table.to_act() == 1
    assert table.seats[1].is_bot
    given = []
    choose = bot.choose

    def spy(state, seat, rng=None, level="normal", seen=None):
        given.append(seen)
        return choose(state, seat, rng, level, seen)

    monkeypatch.setattr(bot, "choose", spy)
    now = table.deadline
    table = decide(table, Expire(table.version), now).table  # the bot leads
    lead = table.game.state.table[0][0]
    table = run(table, Act(ALICE, {"action": "take"}), now=now)
    while table.game.state.taking:  # the bot throws in or is done
        now = table.deadline
        table = decide(table, Expire(table.version), now).table
    taken = {card for card in table.game.state.hands[0] if card not in hands[0]}
    assert lead in taken
    assert table.game.seen.known[0] == frozenset(taken)
    assert table.to_act() == 1  # Alice took: the bot leads again
    given.clear()
    decide(table, Expire(table.version), table.deadline)
    assert given
    assert given[-1].known[0] == frozenset(taken)
