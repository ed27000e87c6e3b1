"""Seats: sitting down, leaving, the ready check, players standing up (asked, absent, released, missing
rounds), and the connection marks the grace period is counted from."""

from datetime import timedelta
from typing import Any

from blackjack.flow import rounds
from blackjack.flow.state import Player, SeatState
from blackjack.flow.texts import name
from blackjack.flow.work import BETTING, PLAYING, SETTLED, WAITING, Work
from cards.errors import Refused
from cards.fairness import MAX_PLAYER_SEED, is_player_seed

DISCONNECT_GRACE = timedelta(seconds=30)


def sit(work: Work, player: Player, action: dict[str, Any]) -> None:
    table = work.table
    if not table.settings.is_open:
        raise Refused("table_closed", "This table is closed to new players.")
    number = action.get("seat")
    if type(number) is not int or not 1 <= number <= table.settings.seats:
        raise Refused("bad_message", f"Choose a seat from 1 to {table.settings.seats}.")
    seed = action.get("seed")
    if seed is not None and not is_player_seed(seed):
        raise Refused("bad_message", f"A seed is 1 to {MAX_PLAYER_SEED} letters, digits, '-', '_' or '.'.")
    seat = table.seats.setdefault(number, SeatState(number))
    if seat.player is not None:
        raise Refused("seat_taken", f"Seat {number} is taken.")
    held = sum(1 for other in table.seats.values() if other.player and other.player.id == player.id)
    if held >= table.settings.seats_per_player:
        raise Refused(
            "illegal_action", f"You may hold at most {table.settings.seats_per_player} seat(s) here."
        )
    seat.player = player
    seat.sat_down_at = work.now
    seat.missed_rounds = 0
    seat.sitting_out = False
    seat.ready = True
    seat.leaving_after_round = False
    seat.client_seed = seed if seed is not None else work.seeds.client
    seat.disconnected_at = None
    work.out.lobby = True
    work.event("seat", f"{name(player)} sits down at seat {number}.")
    if table.phase == WAITING:
        rounds.open_round(work)
    elif table.phase == BETTING and work.in_round:
        rounds.reseat_betting_round(work)
        rounds.give_newcomer_time(work)


def leave(work: Work, player: Player, action: dict[str, Any]) -> None:
    mine = _seats_of(work, player.id)
    number = action.get("seat")
    if number is not None:
        mine = [seat for seat in mine if seat.number == number]
    if not mine:
        raise Refused("illegal_action", "You are not seated here.")
    freed = False
    for seat in mine:
        if work.has_stake(seat.number):
            if not seat.leaving_after_round:
                seat.leaving_after_round = True
                work.event("seat", f"{name(player)} will leave seat {seat.number} after this round.")
        else:
            stand_up(work, seat, "leaves")
            freed = True
    if freed:
        after_seats_freed(work)
    _stand_leaving_turn(work, player, {seat.number for seat in mine if seat.leaving_after_round})


def _stand_leaving_turn(work: Work, player: Player, leaving: set[int]) -> None:
    """Leaving during your own turn does not wait for the turn's clock: every hand of the leaving seats whose
    turn it is now stands, one after the other (split hands too), and the round goes on without them. The
    seats are freed after the round, as for any player leaving with chips in play."""
    if work.table.phase != PLAYING or not work.in_round:
        return
    stood = []
    while work.engine.phase == PLAYING and work.engine.turn and work.engine.turn[0] in leaving:
        number, hand = work.engine.turn
        rounds.apply(work, {"action": "stand", "seat": number, "hand": hand}, player=player, seat=number)
        if number not in stood:
            stood.append(number)
    for number in stood:
        work.event("action", f"{name(player)} stands on leaving (seat {number}).")
    if stood:
        rounds.after_engine(work)


def ready(work: Work, player: Player, action: dict[str, Any]) -> None:
    mine = _seats_of(work, player.id)
    if not mine:
        raise Refused("illegal_action", "You are not seated here.")
    if work.table.phase not in (SETTLED, BETTING):
        raise Refused("illegal_action", "There is nothing to get ready for now.")
    for seat in mine:
        seat.ready = True
        seat.sitting_out = False
    work.event("seat", f"{name(player)} is ready.")
    if work.table.phase == SETTLED and all_ready(work):
        rounds.open_round(work)


def release(work: Work, player_id: int | None) -> None:
    """Stand up `player_id` (everyone if None): at once where no chips of theirs are in play, else after the
    round (`leaving_after_round`)."""
    freed = False
    for seat in work.seats.values():
        if not seat.player or (player_id is not None and seat.player.id != player_id):
            continue
        if work.has_stake(seat.number):
            seat.leaving_after_round = True
        else:
            stand_up(work, seat, "leaves")
            freed = True
    if freed:
        after_seats_freed(work)


def stand_up(work: Work, seat: SeatState, verb: str) -> None:
    work.event("seat", f"{name(seat.player)} {verb} seat {seat.number}.")
    seat.player = None
    seat.sat_down_at = None
    seat.missed_rounds = 0
    seat.sitting_out = False
    seat.ready = False
    seat.leaving_after_round = False
    seat.client_seed = ""
    seat.disconnected_at = None
    work.out.lobby = True


def after_seats_freed(work: Work) -> None:
    """Seats were freed outside play: reshape a betting round, or close the table's round loop if empty."""
    phase = work.table.phase
    if phase == BETTING and work.in_round:
        rounds.reseat_betting_round(work)
        if work.in_round and rounds.betting_complete(work):
            rounds.close_betting(work, timed_out=False)
    elif phase == SETTLED:
        if not work.occupied():
            rounds.go_waiting(work)
        elif all_ready(work):
            rounds.open_round(work)


def all_ready(work: Work) -> bool:
    """The ready check can close: every seated player the table waits for (not sitting out) is ready, and
    there is at least one."""
    waited_for = [seat for seat in work.seats.values() if seat.player and not seat.sitting_out]
    return bool(waited_for) and all(seat.ready for seat in waited_for)


def stand_up_absent(work: Work) -> bool:
    """Stand up players gone longer than the grace period, outside play. True if anyone stood up."""
    if work.table.phase not in (WAITING, BETTING, SETTLED):
        return False
    gone = [seat for seat in work.seats.values() if seat.player and _gone(work, seat)]
    gone = [seat for seat in gone if not work.has_stake(seat.number)]
    for seat in gone:
        stand_up(work, seat, "lost the connection and left")
    if gone:
        after_seats_freed(work)
    return bool(gone)


def free_seats_after_round(work: Work, played) -> None:
    """A round is over (settled or voided): free the seats of players leaving after it (who asked to, were
    suspended, or whose table closed) and of those whose connection is gone; ask its other players again
    whether they are ready (newcomers since the deal stay ready)."""
    played = set(played)
    for seat in work.seats.values():
        if not seat.player:
            continue
        if seat.leaving_after_round:
            stand_up(work, seat, "leaves")
        elif _gone(work, seat):
            stand_up(work, seat, "lost the connection and left")
        elif seat.number in played:
            seat.ready = False


def mark_present(work: Work, players: frozenset[int]) -> bool:
    """Clear the marks of the seats of `players` and mark the other seated players' disconnected now (a mark
    already set keeps its time); True if any seat changed."""
    changed = False
    for seat in work.seats.values():
        if not seat.player:
            continue
        if seat.player.id in players and seat.disconnected_at is not None:
            seat.disconnected_at, changed = None, True
        elif seat.player.id not in players and seat.disconnected_at is None:
            seat.disconnected_at, changed = work.now, True
    return changed


def _gone(work: Work, seat: SeatState) -> bool:
    return seat.disconnected_at is not None and seat.disconnected_at <= work.now - DISCONNECT_GRACE


def _seats_of(work: Work, player_id: int) -> list[SeatState]:
    return [seat for seat in work.seats.values() if seat.player and seat.player.id == player_id]
