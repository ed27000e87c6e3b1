"""The game registry: how the site learns its games.

Each game's app registers one `Game` in its `AppConfig.ready()`; the site's shared parts (the lobby, the
routing and URLs, the wallet's guard on the daily grant, staff's suspension, the profile and history, the
demo tables) ask the registry and never name a game. A new game is a new app that registers itself here.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


class ActorClass(Protocol):
    """What the site's shared parts (`live.clock`, `live.quarantine`) use of a game's table actor class (a
    `live.table.TableActor` subclass, the class object itself): spelled out here because the registry
    imports nothing of the runtime. Read-only, so that a game's narrower class attributes match."""

    @property
    def game(self) -> str: ...

    @property
    def model(self) -> type[Any]:
        """The game's table rows: a Django model, which this stdlib-only module cannot name."""
        ...

    @property
    def passes(self) -> tuple[type[BaseException], ...]: ...

    def stop(self, *, table_id: int, reason: str) -> bool: ...

    def stop_stuck(self, *, table_id: int, reason: str) -> None: ...

    def renew_leases(self, *, now: datetime | None = None) -> set[int]: ...

    def sweep(self, *, now: datetime | None = None) -> int: ...


@dataclass(frozen=True)
class Upkeep:
    """A game's periodic work on each server's clock (`live.clock`): `work()` every `seconds`."""

    seconds: float
    work: Callable[[], object]
    what: str


@dataclass(frozen=True, kw_only=True)
class Lobby:
    """A game's section of the lobby (`lobby/`): the same template for the page and every live update."""

    #: Renders the section as one out-of-band element; its context is `section` (what `rows` gave) and
    #: `user`.
    template: str
    #: The game's part of the JSON lobby message for one page of the lobby (`?page=N`), under keys of its own.
    rows: Callable[[int], dict[str, Any]]
    #: Rendered once below the sections on the lobby page (not live): a key to the game's rule codes, say.
    footer: str | None = None


@dataclass(frozen=True, kw_only=True)
class Pages:
    """A game's pages that the site's menu, tabs and profile link to (URL names; None: the game has none)."""

    history: str | None = None
    leaderboard: str | None = None
    guide: str | None = None


@dataclass(frozen=True, kw_only=True)
class Game:
    """What the site needs of one game. `name` is its key everywhere (ledger rows and floats, URLs, the
    lobby's filter); `label` what players read."""

    name: str
    label: str
    #: The game's live table actor (`live.table.TableActor`): its map of actors, lease renewal and sweep.
    actor: ActorClass
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
    #: The game's URL patterns (a module's name) and where they are mounted ("durak/"; "" at the root).
    urls: str
    url_prefix: str = ""
    #: The route of a table's socket (`"ws/durak/<int:table_id>/"`) and its consumer
    #: (`live.consumer.TableConsumer`).
    socket: str
    consumer: type
    lobby: Lobby
    pages: Pages = Pages()
    #: A player's section of their profile and public page, as HTML: `profile(user, owner)` (`owner`: the
    #: player is looking at their own).
    profile: Callable[[Any, bool], str] | None = None
    #: Create the game's demo tables (idempotent: what exists is left alone); `say` prints a line.
    seed_demo: Callable[[Callable[[str], None]], None] | None = None


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
