"""Client messages of the Durak table (`/ws/durak/<id>/`): one text frame in, one validated message out.

The frame is read by `live.protocol` (JSON objects of at most 4 KiB, a required `v`: the table version the
sender saw, plain text only) with these fields per action; anything else is refused as `bad_message` and
changes nothing. The table's owner makes the table's command of the result (`durak.remote.command_of`).

| action | keys |
|---|---|
| `sit`, `leave`, `add_bot`, `take`, `done`, `surrender` (concede the game: you are the fool now) | none |
| `ready`, `start` | `seed` (1-64 letters, digits, `-`, `_`, `.`; or None: the server draws one) |
| `attack`, `transfer` | `card` (a card of the 36-card deck, e.g. `7s`, `Th`) |
| `beat` | `card`, and `target` (the attacking card it beats) |
| `chat`, `emote` | the site's (`live.protocol.SITE_FIELDS`) |
"""

from typing import Any

from durak.engine.cards import new_deck_order
from live import protocol
from live.protocol import one_of, seed

_card = one_of("card of the 36-card deck (7s, Th, ...)", frozenset(new_deck_order()))

#: The engine's actions a player sends; the table's own are sit, leave, add_bot, ready and start.
ENGINE_ACTIONS = ("attack", "beat", "transfer", "take", "done", "surrender")
TABLE_ACTIONS = ("sit", "leave", "add_bot", "ready", "start")

FIELDS: protocol.Fields = {
    "sit": {},
    "leave": {},
    "add_bot": {},
    "ready": {"seed": (seed, False)},
    "start": {"seed": (seed, False)},
    "attack": {"card": (_card, True)},
    "transfer": {"card": (_card, True)},
    "beat": {"card": (_card, True), "target": (_card, True)},
    "take": {},
    "done": {},
    "surrender": {},
}


def parse_message(frame: str | bytes, *, html: bool) -> dict[str, Any]:
    """Validate one client frame (see the module docstring)."""
    return protocol.parse(frame, FIELDS, html=html)
