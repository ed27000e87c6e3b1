"""A card's face as every game's pages draw it: `cards.faces` (pure: rank, suit, colour) with its spoken name,
what a screen reader reads out, in the viewer's language by Django's i18n ("Queen of hearts"; in Russian
"Дама червей")."""

from django.utils.translation import gettext, pgettext_lazy

from cards.faces import card_face as drawn

RANK_NAMES = {
    "A": pgettext_lazy("a card's rank, spoken", "Ace"),
    "K": pgettext_lazy("a card's rank, spoken", "King"),
    "Q": pgettext_lazy("a card's rank, spoken", "Queen"),
    "J": pgettext_lazy("a card's rank, spoken", "Jack"),
    "T": pgettext_lazy("a card's rank, spoken", "Ten"),
    "9": pgettext_lazy("a card's rank, spoken", "Nine"),
    "8": pgettext_lazy("a card's rank, spoken", "Eight"),
    "7": pgettext_lazy("a card's rank, spoken", "Seven"),
    "6": pgettext_lazy("a card's rank, spoken", "Six"),
    "5": pgettext_lazy("a card's rank, spoken", "Five"),
    "4": pgettext_lazy("a card's rank, spoken", "Four"),
    "3": pgettext_lazy("a card's rank, spoken", "Three"),
    "2": pgettext_lazy("a card's rank, spoken", "Two"),
}
SUIT_NAMES = {
    "s": pgettext_lazy("a card's suit, spoken after its rank", "spades"),
    "h": pgettext_lazy("a card's suit, spoken after its rank", "hearts"),
    "d": pgettext_lazy("a card's suit, spoken after its rank", "diamonds"),
    "c": pgettext_lazy("a card's suit, spoken after its rank", "clubs"),
}


def card_face(card: str | None) -> dict:
    """How to draw a card code (None: the card's back), its `label` in the active language."""
    face = drawn(card)
    if not card:
        return {**face, "label": gettext("Face-down card")}
    names = {"rank": RANK_NAMES[card[0]], "suit": SUIT_NAMES[card[1]]}
    return {**face, "label": gettext("%(rank)s of %(suit)s") % names}
