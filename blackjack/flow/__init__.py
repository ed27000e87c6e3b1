"""The table flow as pure functions over an in-memory table state (no Django, no I/O, no clock).

`decide(state, command, now, seeds=..., cards=...) -> Outcome` is the whole interface: seats, betting and
ready windows, deadlines, rounds and settlement texts, built on the engine (`blackjack.engine`). The store
(`blackjack.services.store`) loads a `TableState` from the database, calls `decide`, and writes the `Outcome`
in one transaction. Modules: `state` (the values), `work` (one command being decided), `seats`, `rounds`,
`play`, `texts`, `decide`.
"""

from blackjack.flow.decide import WINDOW_ACTIONS, decide, seeded_order, version_accepted
from blackjack.flow.rounds import DEALER_CARD_SECONDS, NEWCOMER_BETTING_SECONDS
from blackjack.flow.seats import DISCONNECT_GRACE
from blackjack.flow.state import (
    Act,
    ChangeSettings,
    Command,
    Expire,
    Outcome,
    Player,
    Present,
    Refusal,
    Release,
    Reopen,
    RoundInfo,
    SeatState,
    Seeds,
    Settings,
    ShoeInfo,
    StandUpAbsent,
    TableState,
    Void,
)

__all__ = [
    "DEALER_CARD_SECONDS",
    "DISCONNECT_GRACE",
    "NEWCOMER_BETTING_SECONDS",
    "WINDOW_ACTIONS",
    "Act",
    "ChangeSettings",
    "Command",
    "Expire",
    "Outcome",
    "Player",
    "Present",
    "Refusal",
    "Release",
    "Reopen",
    "RoundInfo",
    "SeatState",
    "Seeds",
    "Settings",
    "ShoeInfo",
    "StandUpAbsent",
    "TableState",
    "Void",
    "decide",
    "seeded_order",
    "version_accepted",
]
