"""How a card is drawn, for every game's pages: a card code ("As", "Td"; rank from `A23456789TJQK`, suit from
`shdc`) to its corner rank, suit symbol and colour. Its spoken name, in the viewer's language, is
`live.faces`'s; the English names here are what the load tester reads pages by."""

SUIT_SYMBOLS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}
SUIT_NAMES = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}
RANK_LABELS = {"A": "A", "T": "10", "J": "J", "Q": "Q", "K": "K"} | {str(n): str(n) for n in range(2, 10)}
_NUMBER_NAMES = ("Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")
RANK_NAMES = {"A": "Ace", "T": "Ten", "J": "Jack", "Q": "Queen", "K": "King"} | {
    str(n): name for n, name in zip(range(2, 10), _NUMBER_NAMES, strict=True)
}


def card_face(card: str | None) -> dict:
    """How to draw a card code; None (a face-down card) gives the card back."""
    if not card:
        return {"hidden": True}
    rank, suit = card[0], card[1]
    return {
        "hidden": False,
        "rank": RANK_LABELS[rank],
        "suit": SUIT_SYMBOLS[suit],
        "colour": "red" if suit in "hd" else "black",
    }
