"""Client frames of every game's table socket: one text frame in, one validated message out, or a refusal.

`parse(frame, fields, html=...)` turns a frame into a plain dict with the keys `action` and `v` (the table
version the sender saw, required but for the site's own actions: a resent frame is then applied once) plus the
fields of its action, or
raises `cards.errors.Refused` (`bad_message`, or a field parser's own code); it raises nothing else, whatever
the input. A game describes its actions as a table of fields (`Fields`: action -> field -> (parser,
required)); the site's own actions, `chat` and `emote`, are in every game's (`SITE_FIELDS`).

Two formats share the same fields. JSON clients (`?format=json`) must send real JSON types: a string where an
int belongs is refused, and unknown fields are refused so that a typo does not silently drop an argument. The
htmx client sends form values, which are always strings, plus a `HEADERS` object: with `html=True` the digits
of an int field are converted, an empty optional field counts as absent, and fields the form adds on its own
are ignored. `HEADERS` is ignored in both formats. Text that reaches the database or another process is plain:
no control characters (NUL breaks PostgreSQL text), no unpaired surrogates (not UTF-8), bounded in bytes.
"""

import json
import unicodedata
from collections.abc import Callable
from typing import Any

from accounts.names import strip_invisible
from cards.errors import Refused
from cards.fairness import MAX_PLAYER_SEED, is_player_seed

#: The largest frame the server reads, in bytes of UTF-8.
MAX_FRAME_BYTES = 4096
#: Versions are database integers.
MAX_VERSION = 2**63 - 1
#: A chat line's size in bytes of UTF-8 (not characters: 300 "€" are 900 bytes).
MAX_CHAT_BYTES = 300
#: Quick reactions at a table (`emote`): the key a client sends -> what the page shows.
EMOTES = {
    "thumbs_up": "\N{THUMBS UP SIGN}",
    "gg": "GG",
    "nice_hand": "Nice hand",
    "ouch": "Ouch",
    "good_luck": "Good luck",
    "party": "\N{PARTY POPPER}",
}

BAD_MESSAGE = "bad_message"
RATE_LIMITED = "rate_limited"

_TRUE_WORDS = frozenset({"true", "on", "yes", "1"})
_FALSE_WORDS = frozenset({"false", "off", "no", "0"})
# Characters a text may not hold: control characters (NUL breaks PostgreSQL text, others break the log
# layout) and unpaired surrogates (not encodable as UTF-8).
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cs"})

#: A field's parser: the value the client sent and whether it came from a form -> the value, or Refused.
Parser = Callable[[Any, bool], Any]
#: action -> field -> (parser, required)
Fields = dict[str, dict[str, tuple[Parser, bool]]]


def parse(frame: str | bytes, fields: Fields, *, html: bool) -> dict[str, Any]:
    """Validate one client frame against a game's `fields` (and the site's, `SITE_FIELDS`)."""
    data = _decode(frame)
    action = data.get("action")
    actions = {**fields, **SITE_FIELDS}
    if action is None:
        raise Refused(BAD_MESSAGE, "the message has no 'action' field")
    if not isinstance(action, str) or action not in actions:
        raise Refused(BAD_MESSAGE, f"unknown action {show(action)}; actions: {', '.join(actions)}")
    wanted = actions[action]
    if not html:
        unknown = sorted(key for key in data if key not in wanted and key not in ("action", "v", "HEADERS"))
        if unknown:
            raise Refused(BAD_MESSAGE, f"unknown field(s) for {action!r}: {', '.join(unknown)}")
    # A chat line or a reaction changes no table version: it needs none.
    site = action in SITE_FIELDS and data.get("v") in (None, "")
    result: dict[str, Any] = {"action": action, "v": None if site else _version(data, html)}
    for name, (parser, required) in wanted.items():
        value = data.get(name)
        if html and value == "":
            value = None
        if value is None:
            if required:
                raise Refused(BAD_MESSAGE, f"{action!r} needs the field {name!r}")
            result[name] = None
        else:
            result[name] = parser(value, html)
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
    elif len(frame) > MAX_FRAME_BYTES or frame_size(frame) > MAX_FRAME_BYTES:
        raise Refused(BAD_MESSAGE, f"message too large (over {MAX_FRAME_BYTES} bytes)")
    try:
        data = json.loads(frame)
    except (ValueError, RecursionError):
        raise Refused(BAD_MESSAGE, "message is not valid JSON") from None
    if not isinstance(data, dict):
        raise Refused(BAD_MESSAGE, "message must be a JSON object")
    return data


def frame_size(text: str) -> int:
    """A text frame's size in bytes of UTF-8 (unpaired surrogates, which the parser refuses, count too)."""
    return len(text.encode("utf-8", "surrogatepass"))


def _version(data: dict[str, Any], html: bool) -> int:
    value = data.get("v")
    if value is None or (html and value == ""):
        raise Refused(BAD_MESSAGE, "the message has no version 'v' (the state version you last saw)")
    number = whole_number(value, html)
    if number is None or not 0 <= number <= MAX_VERSION:
        raise Refused(BAD_MESSAGE, f"'v' must be a non-negative integer, not {show(value)}")
    return number


def whole_number(value: Any, html: bool) -> int | None:
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


def ranged(name: str, low: int, high: int) -> Parser:
    """A parser of an int field from `low` to `high`."""

    def parse(value: Any, html: bool) -> int:
        number = whole_number(value, html)
        if number is None or not low <= number <= high:
            raise Refused(BAD_MESSAGE, f"{name!r} must be an integer from {low} to {high}, not {show(value)}")
        return number

    return parse


def yes_or_no(value: Any, html: bool) -> bool:
    """A parser of a true-or-false field (`accept`)."""
    if isinstance(value, bool):
        return value
    if html and isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise Refused(BAD_MESSAGE, f"'accept' must be true or false, not {show(value)}")


def one_of(name: str, values: frozenset[str] | dict[str, Any]) -> Parser:
    """A parser of a field whose value is one of `values` (a card, an emote...)."""

    def parse(value: Any, html: bool) -> str:
        if not isinstance(value, str) or value not in values:
            raise Refused(BAD_MESSAGE, f"{show(value)} is not a {name}")
        return value

    return parse


def chat_text(value: Any, html: bool) -> str:
    if not isinstance(value, str):
        raise Refused(BAD_MESSAGE, f"'text' must be a string, not {show(value)}")
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


def emote(value: Any, html: bool) -> str:
    if not isinstance(value, str) or value not in EMOTES:
        raise Refused(BAD_MESSAGE, f"unknown emote {show(value)}; emotes: {', '.join(EMOTES)}")
    return value


def seed(value: Any, html: bool) -> str:
    """A player's own seed for the next deal (`cards.fairness.is_player_seed`)."""
    if not is_player_seed(value):
        raise Refused(
            BAD_MESSAGE,
            f"'seed' must be 1 to {MAX_PLAYER_SEED} letters, digits, '-', '_' or '.', not {show(value)}",
        )
    return value


def show(value: Any) -> str:
    """A short, safe description of a client value for an error message."""
    if isinstance(value, str):
        shown = repr(value[:20] + ("..." if len(value) > 20 else ""))
        return shown.encode("ascii", "backslashreplace").decode("ascii")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**20:
        return "a huge number"
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return f"a JSON {'array' if isinstance(value, list) else 'object'}"


#: The site's own actions, at every game's table.
SITE_FIELDS: Fields = {
    "chat": {"text": (chat_text, True)},
    "emote": {"emote": (emote, True)},
}
