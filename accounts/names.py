# ruff: noqa: RUF001  (the look-alike letters below are the point of this module)
"""Text that players show each other (display names, chat): invisible characters removed, and a skeleton of
a name for telling look-alikes apart.

Invisible characters are Unicode's format characters (category Cf): the bidirectional overrides, embeddings
and isolates that make a line display in another order than it reads (U+202E turns "gnp.exe" into
"exe.png"), the zero-width space, joiners and word joiner, the byte-order mark, the language tags. None of
them is visible, so none may be used to make two names or two lines differ that look the same.

`skeleton(name)` maps a name to the form two look-alike names share: NFKC (full-width and other
compatibility forms become plain letters), case folded, invisible characters and marks removed, and the
Cyrillic and Greek letters that look like Latin ones replaced by those (a small table in the spirit of
Unicode's confusables list, UTS #39, for the scripts our players use), with digits that pass for letters.
Two names with the same skeleton would pass for each other at a table.
"""

import unicodedata

# Cyrillic and Greek letters (lower case: the skeleton is case folded first) that look like a Latin letter,
# and digits and signs that pass for one.
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j",
        "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "г": "r", "ѕ": "s", "т": "t",
        "ц": "u", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "з": "3", "ь": "b", "п": "n",
        # Greek
        "α": "a", "β": "b", "ϲ": "c", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "μ": "u", "ϳ": "j",
        # Latin look-alikes within Latin and digits
        "ı": "i", "ł": "l", "ø": "o", "0": "o", "1": "l", "|": "l", "5": "s",
    }
)  # fmt: skip


def strip_invisible(text: str) -> str:
    """`text` without format characters (bidi controls, zero-width characters, tags)."""
    if text.isascii():
        return text
    return "".join(char for char in text if unicodedata.category(char) != "Cf")


def skeleton(name: str) -> str:
    """The form look-alike names share (see the module docstring)."""
    folded = unicodedata.normalize("NFKC", strip_invisible(name)).casefold()
    # Accents and other combining marks off (a name with "é" passes for one with "e"), then the letters.
    bare = "".join(char for char in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(char))
    return " ".join(bare.translate(_CONFUSABLES).split())
