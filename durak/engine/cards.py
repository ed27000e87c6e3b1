"""Cards of the 36-card deck as two-character strings: rank from `6789TJQKA`, suit from `shdc` (`Th` = ten of
hearts), the notation of the blackjack engine."""

RANKS = "6789TJQKA"
SUITS = "shdc"

#: Rank strength: 6 is 0, ace is 8.
RANK_ORDER: dict[str, int] = {rank: index for index, rank in enumerate(RANKS)}
CARDS = frozenset(rank + suit for rank in RANKS for suit in SUITS)


def new_deck_order() -> list[str]:
    """The unshuffled deck: ranks 6 7 8 9 T J Q K A, within a rank the suits s h d c (6s 6h ... Ac)."""
    return [rank + suit for rank in RANKS for suit in SUITS]


def rank_of(card: str) -> int:
    """The card's strength, 0 (six) to 8 (ace)."""
    return RANK_ORDER[card[0]]


def beats(defence: str, attack: str, trump_suit: str) -> bool:
    """Does `defence` beat `attack`: a higher card of the same suit, or a trump on a non-trump."""
    if defence[1] == attack[1]:
        return RANK_ORDER[defence[0]] > RANK_ORDER[attack[0]]
    return defence[1] == trump_suit


def card_key(card: str, trump_suit: str) -> tuple[int, int, int]:
    """Sort key for cheapness: non-trumps before trumps, then by rank, then by suit order s h d c."""
    return (card[1] == trump_suit, RANK_ORDER[card[0]], SUITS.index(card[1]))
