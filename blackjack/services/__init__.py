"""Every write of the live tables: seats, bets, play, deadlines, chat, opening tables, recovery.

The table flow itself is pure (`blackjack.flow.decide`); this package is its persistence side. Each public
function is keyword-only and runs one command per table in one `transaction.atomic` (`store.run`): lock the
table row and load its state, `decide`, then write the outcome: the round and table rows, the chips through
`accounts.services`, the action log and the table's event log, the new `Table.version`, and the broadcast and
the round's history registered with `transaction.on_commit`. A refusal raises `cards.errors.Refused(code,
message)` and leaves nothing behind.

Deadlines are applied by their table's owner (`blackjack.actors`, `live.clock`), keyed on the table version
they were set for, so a deadline is applied once whoever comes first. The shoe's card order is never stored:
it is recomputed from the shoe's seeds whenever a round is loaded (`round_order`), and stripped from the saved
engine state.

Modules: `store` (load, write, one transaction), `actions` (players, chat, recovery),
`staff` (opening tables, a settings change), `floats` (each table's house float), `quarantine` (stopping a
table whose commands keep failing). The names below are the package's public interface."""

import secrets
from functools import lru_cache

from blackjack.engine.shoe import dealing_order, shuffled_shoe
from blackjack.flow import DISCONNECT_GRACE, WINDOW_ACTIONS, version_accepted
from blackjack.services.actions import (
    perform,
    recover_tables,
    void_round,
)
from blackjack.services.load import RoundBroken
from blackjack.services.staff import (
    OPEN_TABLE_MAX_BET,
    OPEN_TABLE_MIN_BET,
    TABLE_SETTINGS,
    WINDOW_SETTINGS,
    create_table,
    open_table,
    open_table_bounds,
    table_max_bet_cap,
)
from cards.fairness import new_server_seed

__all__ = [
    "DISCONNECT_GRACE",
    "OPEN_TABLE_MAX_BET",
    "OPEN_TABLE_MIN_BET",
    "TABLE_SETTINGS",
    "WINDOW_ACTIONS",
    "WINDOW_SETTINGS",
    "RoundBroken",
    "create_table",
    "new_server_seed",
    "open_table",
    "open_table_bounds",
    "perform",
    "recover_tables",
    "round_order",
    "table_max_bet_cap",
    "version_accepted",
    "void_round",
]


def _new_client_seed() -> str:
    """A seat's contribution to the next shoe's client seed (combined over the seated players), for a player
    who sat down without a seed of their own."""
    return secrets.token_hex(16)


def _shoe_order(shoe) -> list[str]:
    """The shoe's card order, recomputed from its seeds (a `Shoe` row or a `blackjack.flow.ShoeInfo`).
    Server-side only: never send it, never store it. (Tests replace this function to script the cards;
    nothing a client sends can reach it.)"""
    return list(_order_of(shoe.server_seed, shoe.client_seed, shoe.decks, shoe.nonce))


@lru_cache(maxsize=512)
def _order_of(server_seed: str, client_seed: str, decks: int, nonce: int) -> tuple[str, ...]:
    """Every action loads its round, so the shuffle of a shoe in play is kept per process (keyed on all its
    seeds) instead of being recomputed each time."""
    return tuple(shuffled_shoe(server_seed=server_seed, client_seed=client_seed, decks=decks, nonce=nonce))


def round_order(shoe, start: int) -> tuple[str, ...]:
    """The cards a round beginning at card `start` of `shoe` is dealt from: the shoe's order, then the
    discards reshuffled should the round run out (`blackjack.engine.shoe`, step 7). Server-side only, like the
    order."""
    return _round_order_of(tuple(_shoe_order(shoe)), start, shoe.server_seed, shoe.client_seed, shoe.nonce)


@lru_cache(maxsize=512)
def _round_order_of(
    order: tuple[str, ...], start: int, server_seed: str, client_seed: str, nonce: int
) -> tuple[str, ...]:
    return dealing_order(order, start, server_seed=server_seed, client_seed=client_seed, nonce=nonce)
