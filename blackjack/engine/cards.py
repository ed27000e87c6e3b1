"""Cards as two-character strings: rank from `A23456789TJQK`, suit from `shdc` (e.g. `As`, `Td`, `9h`)."""

from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "shdc"

#: Blackjack value of every card, aces counted as 1.
RANK_VALUES: dict[str, int] = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10} | {str(n): n for n in range(2, 10)}
CARD_VALUES: dict[str, int] = {rank + suit: RANK_VALUES[rank] for rank in RANKS for suit in SUITS}


def card_value(card: str) -> int:
    """The card's value: ace 1, ten and faces 10, others their number."""
    return CARD_VALUES[card]


def total_of_values(values: Iterable[int]) -> tuple[int, bool]:
    """Best total of card values (aces given as 1) and whether an ace counts as 11 in it."""
    total = 0
    has_ace = False
    for value in values:
        total += value
        if value == 1:
            has_ace = True
    if has_ace and total <= 11:
        return total + 10, True
    return total, False


def hand_value(cards: Iterable[str]) -> tuple[int, bool]:
    """Best total of a hand and the soft flag (True when an ace counts as 11)."""
    return total_of_values(CARD_VALUES[card] for card in cards)


def is_blackjack(cards: Iterable[str]) -> bool:
    """Two cards totalling 21. Whether a split hand can be a blackjack is the round's decision (it cannot)."""
    cards = list(cards)
    return len(cards) == 2 and hand_value(cards)[0] == 21


def new_deck_order(decks: int) -> list[str]:
    """The unshuffled shoe: `decks` copies of the deck, each in rank-major order (As, Ah, Ad, Ac, 2s, ...)."""
    deck = [rank + suit for rank in RANKS for suit in SUITS]
    return deck * decks
