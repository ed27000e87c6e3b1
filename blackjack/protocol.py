"""Client messages of the table protocol (shared/PROTOCOL.md): one text frame in, one validated action out.

`parse_message(frame, html=...)` turns a frame into a plain dict that `blackjack.services.perform` (or
`post_chat` for `chat`, `post_emote` for `emote`) receives, or raises `Refused(code, message)`; it
raises nothing else, whatever the input. Every result has the keys `action` and `v` plus, per action:

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

import json
import unicodedata
from typing import Any

from accounts.names import strip_invisible
from cards.errors import Refused
from cards.fairness import MAX_PLAYER_SEED, is_player_seed

#: The largest frame the server reads, in bytes of UTF-8.
MAX_FRAME_BYTES = 4096
#: Amounts above this are refused outright (no balance is that large; it also keeps ints small for the DB).
MAX_AMOUNT = 10**12
#: Versions are database integers.
MAX_VERSION = 2**63 - 1
#: A chat line's size in bytes of UTF-8 (not characters: 300 "€" are 900 bytes), so that the 30 lines a table
#: view lists stay small in any script.
MAX_CHAT_BYTES = 300
MIN_SEAT, MAX_SEAT = 1, 7
MIN_HAND, MAX_HAND = 0, 3

PLAY_ACTIONS = ("hit", "stand", "double", "split", "surrender")
ACTIONS = ("sit", "leave", "bet", "ready", "insurance", "even_money", *PLAY_ACTIONS, "chat", "emote")
#: Quick reactions at the table (`emote`): the key a client sends -> what the page shows.
EMOTES = {
    "thumbs_up": "\N{THUMBS UP SIGN}",
    "gg": "GG",
    "nice_hand": "Nice hand",
    "ouch": "Ouch",
    "good_luck": "Good luck",
    "party": "\N{PARTY POPPER}",
}

#: Error codes of shared/PROTOCOL.md that the parser and the consumer produce themselves.
BAD_MESSAGE = "bad_message"
BAD_AMOUNT = "bad_amount"
NOT_AUTHENTICATED = "not_authenticated"
RATE_LIMITED = "rate_limited"

_TRUE_WORDS = frozenset({"true", "on", "yes", "1"})
_FALSE_WORDS = frozenset({"false", "off", "no", "0"})
# Characters a chat line may not hold: control characters (NUL breaks PostgreSQL text, others break
# the log layout) and unpaired surrogates (not encodable as UTF-8).
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cs"})


def parse_message(frame: str | bytes, *, html: bool) -> dict[str, Any]:
    """Validate one client frame; return the action dict described in the module docstring."""
    data = _decode(frame)
    action = data.get("action")
    if action is None:
        raise Refused(BAD_MESSAGE, "the message has no 'action' field")
    if not isinstance(action, str) or action not in ACTIONS:
        raise Refused(BAD_MESSAGE, f"unknown action {_show(action)}; actions: {', '.join(ACTIONS)}")
    fields = _FIELDS[action]
    if not html:
        unknown = sorted(key for key in data if key not in fields and key not in ("action", "v", "HEADERS"))
        if unknown:
            raise Refused(BAD_MESSAGE, f"unknown field(s) for {action!r}: {', '.join(unknown)}")
    result: dict[str, Any] = {"action": action, "v": _version(data, html)}
    for name, (parse, required) in fields.items():
        value = data.get(name)
        if html and value == "":
            value = None
        if value is None:
            if required:
                raise Refused(BAD_MESSAGE, f"{action!r} needs the field {name!r}")
            result[name] = None
        else:
            result[name] = parse(value, html)
    return result


def _decode(frame: str | bytes) -> dict[str, Any]:
    if isinstance(frame, bytes | bytearray):
        if len(frame) > MAX_FRAME_BYTES:
            raise Refused(BAD_MESSAGE, f"message too large (over {MAX_FRAME_BYTES} bytes)")
        try:
            frame = bytes(frame).decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(BAD_MESSAGE, "message is not UTF-8 text") from None
    elif not isinstance(frame, str):
        raise Refused(BAD_MESSAGE, "message must be text")
    elif len(frame) > MAX_FRAME_BYTES or len(frame.encode("utf-8", "surrogatepass")) > MAX_FRAME_BYTES:
        raise Refused(BAD_MESSAGE, f"message too large (over {MAX_FRAME_BYTES} bytes)")
    try:
        data = json.loads(frame)
    except (ValueError, RecursionError):
        raise Refused(BAD_MESSAGE, "message is not valid JSON") from None
    if not isinstance(data, dict):
        raise Refused(BAD_MESSAGE, "message must be a JSON object")
    return data


def _version(data: dict[str, Any], html: bool) -> int:
    value = data.get("v")
    if value is None or (html and value == ""):
        raise Refused(BAD_MESSAGE, "the message has no version 'v' (the state version you last saw)")
    number = _int_or_none(value, html)
    if number is None or not 0 <= number <= MAX_VERSION:
        raise Refused(BAD_MESSAGE, f"'v' must be a non-negative integer, not {_show(value)}")
    return number


def _int_or_none(value: Any, html: bool) -> int | None:
    """The int a field holds: a JSON int (never a bool), or for forms a string of ASCII digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if html and isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        # Length cap: a huge digit string would be slow to convert and is out of range anyway.
        if digits and digits.isascii() and digits.isdigit() and len(digits) <= 19:
            return int(text)
    return None


def _amount(value: Any, html: bool) -> int:
    number = _int_or_none(value, html)
    if number is None:
        raise Refused(BAD_AMOUNT, f"the amount must be a whole number of chips, not {_show(value)}")
    if not 1 <= number <= MAX_AMOUNT:
        raise Refused(BAD_AMOUNT, f"the amount must be between 1 and {MAX_AMOUNT} chips, not {number}")
    return number


def _ranged(name: str, low: int, high: int):
    def parse(value: Any, html: bool) -> int:
        number = _int_or_none(value, html)
        if number is None or not low <= number <= high:
            raise Refused(
                BAD_MESSAGE, f"{name!r} must be an integer from {low} to {high}, not {_show(value)}"
            )
        return number

    return parse


def _accept(value: Any, html: bool) -> bool:
    if isinstance(value, bool):
        return value
    if html and isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise Refused(BAD_MESSAGE, f"'accept' must be true or false, not {_show(value)}")


def _text(value: Any, html: bool) -> str:
    if not isinstance(value, str):
        raise Refused(BAD_MESSAGE, f"'text' must be a string, not {_show(value)}")
    # Bidi overrides and zero-width characters would make a line display otherwise than it reads.
    text = strip_invisible(value).strip()
    if not text:
        raise Refused(BAD_MESSAGE, "the chat message is empty")
    if any(unicodedata.category(char) in _FORBIDDEN_CATEGORIES for char in text):
        raise Refused(BAD_MESSAGE, "the chat message contains control characters")
    size = len(text.encode("utf-8"))
    if size > MAX_CHAT_BYTES:
        raise Refused(BAD_MESSAGE, f"the chat message is too long ({size} > {MAX_CHAT_BYTES} bytes of UTF-8)")
    return text


def _emote(value: Any, html: bool) -> str:
    if not isinstance(value, str) or value not in EMOTES:
        raise Refused(BAD_MESSAGE, f"unknown emote {_show(value)}; emotes: {', '.join(EMOTES)}")
    return value


def _seed(value: Any, html: bool) -> str:
    if not is_player_seed(value):
        raise Refused(
            BAD_MESSAGE,
            f"'seed' must be 1 to {MAX_PLAYER_SEED} letters, digits, '-', '_' or '.', not {_show(value)}",
        )
    return value


def _show(value: Any) -> str:
    """A short, safe description of a client value for an error message."""
    if isinstance(value, str):
        shown = repr(value[:20] + ("..." if len(value) > 20 else ""))
        return shown.encode("ascii", "backslashreplace").decode("ascii")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**20:
        return "a huge number"
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return f"a JSON {'array' if isinstance(value, list) else 'object'}"


_seat = _ranged("seat", MIN_SEAT, MAX_SEAT)
_hand = _ranged("hand", MIN_HAND, MAX_HAND)
_PLAY_FIELDS = {"seat": (_seat, False), "hand": (_hand, False)}

# Per action: field name -> (parser, required).
_FIELDS: dict[str, dict[str, tuple[Any, bool]]] = {
    "sit": {"seat": (_seat, True), "seed": (_seed, False)},
    "leave": {"seat": (_seat, False)},
    "bet": {"amount": (_amount, True), "seat": (_seat, False)},
    "ready": {},
    "insurance": {"accept": (_accept, True), "seat": (_seat, False)},
    "even_money": {"accept": (_accept, True), "seat": (_seat, False)},
    **dict.fromkeys(PLAY_ACTIONS, _PLAY_FIELDS),
    # Early surrender is offered in the insurance window and answered yes or no, like insurance.
    "surrender": {**_PLAY_FIELDS, "accept": (_accept, False)},
    "chat": {"text": (_text, True)},
    "emote": {"emote": (_emote, True)},
}
