"""What a browser's page holds of a table's out-of-band regions, so that its connection is sent only the
regions whose markup changed.

A game's HTML message is a run of top-level elements, each with an `id` and `hx-swap-oob` (and nothing inside
them carries `hx-swap-oob`), which htmx swaps into the page by id. `Held` keeps, for one connection, the
markup of each region as last sent and drops from the next message the regions sent alike before: bytes saved
on the wire and in the browser's swaps; and a region whose inputs (its *key*) are those of the markup held is
not rendered again (`markup`).
"""

import re
from collections.abc import Hashable

#: The start of a top-level element of a message: only those carry `hx-swap-oob`.
SWAPPED = re.compile(r'<[a-zA-Z][\w-]*\s[^>]*?\bhx-swap-oob="')
ID = re.compile(r'\bid="([^"]+)"')


def swapped(message: str) -> list[str]:
    """The top-level elements of a message, each from its start tag to the next one's."""
    starts = [found.start() for found in SWAPPED.finditer(message)]
    ends = [*starts[1:], len(message)]
    return [message[start:end].rstrip() for start, end in zip(starts, ends, strict=True)]


class Held:
    """One connection's page: each region's markup as last sent."""

    def __init__(self) -> None:
        self.regions: dict[str, str] = {}
        self.keys: dict[str, Hashable] = {}  # the inputs of a held region's markup, where the game gave them

    def markup(self, region: str, key: Hashable) -> str | None:
        """The held markup of `region` if it was made from the same inputs `key`, else None (render it)."""
        return self.regions.get(region) if region in self.keys and self.keys[region] == key else None

    def changed(
        self, message: str, *, always: tuple[str, ...] = (), keys: dict[str, Hashable] | None = None
    ) -> str:
        """`message` without the regions the page holds alike (but those in `always`), recorded as held with
        the `keys` of its regions: call it only for a message that is then sent."""
        fresh = not self.regions  # a fresh page gets the whole message, as it is
        self.keys.update(keys or {})
        parts = []
        for element in swapped(message):
            found = ID.search(element, 0, element.index(">"))
            region = found.group(1) if found else None
            if fresh or region is None or region in always or self.regions.get(region) != element:
                parts.append(element)
                if region is not None:
                    self.regions[region] = element
        return message if fresh else "\n".join(parts)
