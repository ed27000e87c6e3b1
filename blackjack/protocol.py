"""Client messages of the table protocol (shared/PROTOCOL.md): one text frame in, one validated action out.

`parse_message(frame, html=...)` turns a frame into a plain dict that the table's owner receives (the site's
own `chat` and `emote` go to `live.chat`), or raises `cards.errors.Refused(code, message)`; it raises nothing
else, whatever the input (the frame is read by `live.protocol`, with this game's fields). Every result has the
keys `action` and `v` plus, per action:

| action | keys |
|---|---|
| `sit` | `seat` (int 1-7), `seed` (1-64 letters, digits, `-`, `_`, `.`; or None: the server draws one) |
| `leave` | `seat` (int 1-7 or None: every seat of yours) |
| `ready` | none |
| `bet` | `amount` (int 1..10**12), `seat` (int 1-7 or None) |
| `insurance`, `even_money` | `accept` (bool), `seat` (int 1-7 or None: every seat of yours with the offer) |
| `hit`, `stand`, `double`, `split`, `surrender` | `seat` (int 1-7 or None), `hand` (int 0-3 or None) |
| `surrender` | also `accept` (bool or None): answers early surrender in the insurance window |
| `chat` | `text` (str, invisible format characters removed, stripped, 1-300 bytes of UTF-8) |
| `emote` | `emote` (str, a key of `EMOTES`) |

Two formats share the same fields. JSON clients (`?format=json`) must send real JSON types: a string where an
int belongs is `bad_message` (or `bad_amount` for the amount), and unknown fields are refused so that a typo
does not silently drop an argument. The htmx client sends form values, which are always strings, plus a
`HEADERS` object: with `html=True` the digits of `v`, `seat`, `hand` and `amount` and the words of `accept`
are converted, an empty optional field counts as absent, and fields the form adds on its own are ignored.
`HEADERS` is ignored in both formats.
"""

from typing import Any

from cards.errors import Refused
from live import protocol
from live.protocol import ranged, seed, show, whole_number, yes_or_no

#: Amounts above this are refused outright (no balance is that large; it also keeps ints small for the DB).
MAX_AMOUNT = 10**12
MIN_SEAT, MAX_SEAT = 1, 7
MIN_HAND, MAX_HAND = 0, 3

PLAY_ACTIONS = ("hit", "stand", "double", "split", "surrender")
ACTIONS = ("sit", "leave", "bet", "ready", "insurance", "even_money", *PLAY_ACTIONS)

#: Error codes of shared/PROTOCOL.md that the parser and the consumer produce themselves.
BAD_AMOUNT = "bad_amount"
NOT_AUTHENTICATED = "not_authenticated"
RATE_LIMITED = "rate_limited"


def parse_message(frame: str | bytes, *, html: bool) -> dict[str, Any]:
    """Validate one client frame; return the action dict described in the module docstring."""
    return protocol.parse(frame, FIELDS, html=html)


def _amount(value: Any, html: bool) -> int:
    number = whole_number(value, html)
    if number is None:
        raise Refused(BAD_AMOUNT, f"the amount must be a whole number of chips, not {show(value)}")
    if not 1 <= number <= MAX_AMOUNT:
        raise Refused(BAD_AMOUNT, f"the amount must be between 1 and {MAX_AMOUNT} chips, not {number}")
    return number


_seat = ranged("seat", MIN_SEAT, MAX_SEAT)
_hand = ranged("hand", MIN_HAND, MAX_HAND)
_PLAY_FIELDS = {"seat": (_seat, False), "hand": (_hand, False)}

# Per action: field name -> (parser, required).
FIELDS: protocol.Fields = {
    "sit": {"seat": (_seat, True), "seed": (seed, False)},
    "leave": {"seat": (_seat, False)},
    "bet": {"amount": (_amount, True), "seat": (_seat, False)},
    "ready": {},
    "insurance": {"accept": (yes_or_no, True), "seat": (_seat, False)},
    "even_money": {"accept": (yes_or_no, True), "seat": (_seat, False)},
    **dict.fromkeys(PLAY_ACTIONS, _PLAY_FIELDS),
    # Early surrender is offered in the insurance window and answered yes or no, like insurance.
    "surrender": {**_PLAY_FIELDS, "accept": (yes_or_no, False)},
}
