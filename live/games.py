"""The game registry: how the site learns its games.

Each game's app registers one `Game` in its `AppConfig.ready()`; the site's shared parts (the lobby, the
routing and URLs, the wallet's guard on the daily grant, staff's suspension, the profile and history, the
demo tables) ask the registry and never name a game. A new game is a new app that registers itself here.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Upkeep:
    """A game's periodic work on each server's clock (`live.clock`): `work()` every `seconds`."""

    seconds: float
    work: Callable[[], object]
    what: str


@dataclass(frozen=True, kw_only=True)
class Game:
    """What the site needs of one game. `name` is its key everywhere (ledger rows and floats, URLs, the
    lobby's filter); `label` what players read."""

    name: str
    label: str
    #: The game's live table actor (`live.table.TableActor`): its map of actors, lease renewal and sweep.
    actor: type
    #: The shared view part of a table's stored version (an object with its `version`), read from the
    #: database for the viewers of a process that did not commit it (`live.fanout`); raises the table model's
    #: `DoesNotExist`.
    read_view: Callable[[int], Any]
    #: The chips a player has staked at this game's tables that are not settled yet (by user id).
    chips_in_play: Callable[[int], int]
    #: Stand a user up at every table of this game (staff suspended or closed the account): returns the
    #: number of tables changed; raises `cards.errors.Refused` when a table's owner could not be reached.
    release_user: Callable[[Any], int]
    #: Run once when a server's clock starts: tables that cannot be resumed are put right (how many).
    recover: Callable[[], int] | None = None
    #: Periodic work on each server's clock.
    upkeep: tuple[Upkeep, ...] = ()


_games: dict[str, Game] = {}


def register(game: Game) -> None:
    """Add a game (from its app's `ready()`); registering a name again replaces it (tests)."""
    _games[game.name] = game


def unregister(name: str) -> None:
    """Remove a game (tests that register one of their own)."""
    _games.pop(name, None)


def get(name: str) -> Game:
    """The game registered as `name` (KeyError if none)."""
    return _games[name]


def all_games() -> Iterator[Game]:
    """Every registered game, in the order they registered (INSTALLED_APPS order)."""
    return iter(list(_games.values()))
