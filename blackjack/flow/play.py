"""A round's decisions: bets, the insurance window (insurance, even money, early surrender), the players'
turns, and the deadlines that close each window when its time is up."""

from typing import Any

from blackjack.flow import rounds
from blackjack.flow.state import Player
from blackjack.flow.texts import hand_cards, name, play_text
from blackjack.flow.work import BETTING, INSURANCE, PLAYING, SETTLED, Work
from cards.errors import Refused

_VERBS = {"insurance": "insurance", "even_money": "even money", "surrender": "early surrender"}


def bet(work: Work, player: Player, action: dict[str, Any]) -> None:
    if work.table.phase != BETTING or not work.in_round:
        raise Refused("illegal_action", "Bets are not open now.")
    number = _own_round_seat(work, player, action.get("seat"), prefer=lambda s: s.bet == 0)
    amount = action.get("amount")
    rounds.apply(work, {"action": "bet", "seat": number, "amount": amount}, player=player, seat=number)
    work.seats[number].sitting_out = False
    work.event("bet", f"{name(player)} bets {amount:,} on seat {number}.")
    if rounds.betting_complete(work):
        rounds.close_betting(work, timed_out=False)


def answer(work: Work, player: Player, action: dict[str, Any]) -> None:
    """insurance / even_money (and early surrender in the insurance window) for one or all of your seats."""
    kind = action["action"]
    if work.table.phase != INSURANCE or not work.in_round:
        raise Refused("illegal_action", f"No {kind.replace('_', ' ')} decision is open.")
    explicit = action.get("seat")
    if explicit is not None:
        _check_owner(work, player, explicit)
        numbers = [explicit]
    else:
        numbers = [
            n
            for n, seat_state in work.engine.seats.items()
            if _holds(work, player, n) and kind in seat_state.offers
        ]
        if not numbers:
            raise Refused("illegal_action", f"You have no open {kind.replace('_', ' ')} decision.")
    for number in numbers:
        engine_action = {"action": kind, "seat": number}
        if action.get("accept") is not None:
            engine_action["accept"] = action["accept"]
        rounds.apply(work, engine_action, player=player, seat=number)
        taken = "takes" if engine_action.get("accept", kind == "surrender") else "declines"
        work.event("action", f"{name(player)} {taken} {_VERBS[kind]} (seat {number}).")
    rounds.after_engine(work)


def play(work: Work, player: Player, action: dict[str, Any]) -> None:
    kind = action["action"]
    if kind == "surrender" and work.table.phase == INSURANCE:
        answer(work, player, action)
        return
    if work.table.phase != PLAYING or not work.in_round:
        raise Refused("illegal_action", f"You cannot {kind} now.")
    if action.get("accept") is False:
        raise Refused("illegal_action", "There is no early surrender offer to decline now.")
    number = action.get("seat")
    turn = work.engine.turn
    if number is None:
        if turn is None or not _holds(work, player, turn[0]):
            raise Refused("not_your_turn", "It is not your turn.")
        number = turn[0]
    else:
        _check_owner(work, player, number)
    engine_action = {"action": kind, "seat": number}
    if action.get("hand") is not None:
        engine_action["hand"] = action["hand"]
    hand_index = engine_action.get("hand", turn[1] if turn and turn[0] == number else 0)
    before = hand_cards(work.engine, number, hand_index)
    rounds.apply(work, engine_action, player=player, seat=number)
    work.event("action", play_text(work.engine, player, kind, number, hand_index, before))
    rounds.after_engine(work)


def expire(work: Work, version: int) -> bool:
    """Close the window whose deadline was set for `version`, if that deadline is still the table's and due.
    False: applied already, or the deadline moved (nothing to write)."""
    table = work.table
    if table.version != version or table.deadline is None or table.deadline > work.now:
        return False
    phase = table.phase
    if phase == BETTING and work.in_round:
        work.event("timeout", "Betting time is over.")
        rounds.close_betting(work, timed_out=True)
    elif phase in (INSURANCE, PLAYING) and work.in_round:
        turn = work.engine.turn
        if phase == INSURANCE:
            work.event("timeout", "Insurance time is over: open offers are declined.")
        elif turn is not None:
            who = name(work.owner(turn[0]))
            work.event("timeout", f"{who} ran out of time and stands (seat {turn[0]}).")
        rounds.apply(work, {"action": "timeout"})
        rounds.after_engine(work)
    elif phase == SETTLED:
        for seat in work.seats.values():
            if seat.player and not seat.ready:
                seat.sitting_out = True
        rounds.open_round(work)
    else:
        work.set_deadline(None)  # a deadline without a window to close: drop it
    return True


def _holds(work: Work, player: Player, number: int) -> bool:
    seat = work.seats.get(number)
    return seat is not None and seat.player is not None and seat.player.id == player.id


def _own_round_seat(work: Work, player: Player, explicit, prefer) -> int:
    """The seat the player acts for: `explicit` if it is theirs, else their first seat in the round matching
    `prefer`, else their first seat in the round."""
    if explicit is not None:
        _check_owner(work, player, explicit)
        return explicit
    mine = [n for n in sorted(work.engine.seats) if _holds(work, player, n)]
    if not mine:
        if any(_holds(work, player, n) for n in work.seats):
            raise Refused("illegal_action", "You join the next round.")
        raise Refused("not_your_turn", "Take a seat to play.")
    preferred = [n for n in mine if prefer(work.engine.seats[n])]
    return (preferred or mine)[0]


def _check_owner(work: Work, player: Player, number) -> None:
    """`number` is the player's seat and plays in the round under way."""
    if type(number) is not int or not _holds(work, player, number):
        raise Refused("not_your_turn", f"Seat {number} is not yours.")
    if work.in_round and number not in work.engine.seats:
        raise Refused("not_your_turn", f"Seat {number} joins the next round.")
