"""`decide(state, command, now)`: the one entry point of the table flow.

Pure: no Django, no I/O, no clock, no global random. The caller passes the time, fresh seeds (`Seeds`) and the
card order of a shoe (`cards`, from its seeds); the result is an `Outcome` with the new state and everything
the store must write. A refusal (`Outcome.refusal`) or an expiry that is no longer due (`changed` False)
comes with the caller's state untouched.
"""

from dataclasses import replace
from datetime import datetime

from blackjack.engine.shoe import dealing_order, shuffled_shoe
from blackjack.flow import play, rounds, seats
from blackjack.flow.state import (
    Act,
    ChangeSettings,
    Command,
    Expire,
    Outcome,
    Present,
    Refusal,
    Release,
    Reopen,
    Seeds,
    ShoeInfo,
    StandUpAbsent,
    TableState,
    Void,
)
from blackjack.flow.work import INSURANCE, Broken, Cards, Work
from cards.errors import Refused

#: The decisions players make side by side in one window.
WINDOW_ACTIONS = ("sit", "leave", "bet", "ready", "insurance", "even_money")

_HANDLERS = {
    "sit": seats.sit,
    "leave": seats.leave,
    "ready": seats.ready,
    "bet": play.bet,
    "insurance": play.answer,
    "even_money": play.answer,
    "hit": play.play,
    "stand": play.play,
    "double": play.play,
    "split": play.play,
    "surrender": play.play,
}


def seeded_order(shoe: ShoeInfo, start: int) -> tuple[str, ...]:
    """The cards a round starting at card `start` of `shoe` is dealt from, computed from the shoe's seeds."""
    order = shuffled_shoe(
        server_seed=shoe.server_seed, client_seed=shoe.client_seed, decks=shoe.decks, nonce=shoe.nonce
    )
    return dealing_order(
        order, start, server_seed=shoe.server_seed, client_seed=shoe.client_seed, nonce=shoe.nonce
    )


def decide(
    state: TableState, command: Command, now: datetime, *, seeds: Seeds, cards: Cards = seeded_order
) -> Outcome:
    """Apply `command` to the table at `now`; see the module's docstring."""
    work = Work(state, now, seeds, cards)
    try:
        if not _run(work, command):
            return Outcome(state=state)
    except Refused as refused:
        return Outcome(state=state, refusal=Refusal(refused.code, refused.message))
    except Broken as broken:
        return Outcome(state=state, broken=(broken.round, broken.reason))
    return work.finish()


def version_accepted(state: TableState, player_id: int, action: str, expected_version) -> bool:
    """Is an action sent against `expected_version` still safe to apply?

    Turn actions (hit, stand, ...) need the current version: they depend on everything on the table.
    The decisions players make side by side in one window (sit, leave, bet, ready, insurance, even money,
    early surrender) may carry a version that only other players' actions in the same window made stale,
    so simultaneous bets are not refused; a repeat of the player's own action (a double click, a retry)
    still is, because the player has acted since that version."""
    if type(expected_version) is not int:
        return False
    if expected_version == state.version:
        return True
    early_surrender = action == "surrender" and state.phase == INSURANCE
    in_window = state.window_version <= expected_version < state.version
    if not (action in WINDOW_ACTIONS or early_surrender) or not in_window:
        return False
    acted_at = state.window_actors.get(str(player_id))
    return acted_at is None or acted_at <= expected_version


def _run(work: Work, command: Command) -> bool:
    """Apply the command to `work`; False when it turns out to change nothing."""
    match command:
        case Act(player=player, action=action, expected_version=expected):
            kind = action.get("action") if isinstance(action, dict) else None
            if not isinstance(kind, str) or (handler := _HANDLERS.get(kind)) is None:
                raise Refused("bad_message", f"Unknown action {kind!r}.")
            if kind != "leave" and player.barred:
                raise Refused("suspended", "Your account is suspended or closed: you cannot play.")
            if not version_accepted(work.table, player.id, kind, expected):
                raise Refused(
                    "stale_version", f"The table has changed (version {work.table.version}); try again."
                )
            handler(work, player, action)
            work.actor = player.id
            return True
        case Expire(version=version):
            return play.expire(work, version)
        case StandUpAbsent():
            return seats.stand_up_absent(work)
        case Present(players=players):
            return seats.mark_present(work, players)
        case Release(player_id=player_id, close=close, notice=notice):
            if close:
                work.table.settings = replace(work.table.settings, is_open=False)
                work.out.lobby = True
                work.event("round", notice or "The table is closing: this is its last round.")
            seats.release(work, player_id)
            return True
        case Reopen():
            work.table.settings = replace(work.table.settings, is_open=True)
            work.out.lobby = True
            work.event("round", "The table is open.")
            return True
        case ChangeSettings(settings=new):
            return _change_settings(work, new)
        case Void():
            return rounds.void(work, command)
    raise TypeError(f"not a table command: {command!r}")


def _change_settings(work: Work, new) -> bool:
    """Staff's new settings (checked by the caller); seats above the new count go, if nobody sits in them."""
    occupied = [number for number in work.occupied() if number > new.seats]
    if occupied:
        raise Refused(
            "seat_taken", f"Seat {occupied[0]} is occupied: it cannot be removed until its player leaves."
        )
    for number in [number for number in work.seats if number > new.seats]:
        del work.seats[number]
        work.out.seats_removed.append(number)
    for number in range(1, new.seats + 1):
        work.seats.setdefault(number, seats.SeatState(number))
    work.table.settings = new
    work.out.lobby = True
    work.event("round", "The table's settings changed; they apply from the next round.")
    return True
