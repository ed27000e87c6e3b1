"""The provably fair Durak deck: the blackjack shoe's commit-reveal seeds and shuffle, on 36 cards.

The server seed (committed by its SHA-256 before the game), the client seed (from the players' seeds,
`tables.engine.shoe.combine_client_seeds`) and the nonce give the deck exactly as `tables.engine.shoe`
describes for a shoe (steps 1, 2, 4, 5 and 6), with the unshuffled order of `cards.new_deck_order`
(6s 6h 6d 6c 7s ... Ac) in place of the 52-card one. Card 0 is dealt first (`game.new_game` says how).
"""

from tables.engine.shoe import shuffled_cards

from .cards import new_deck_order


def shuffled_deck(*, server_seed: str, client_seed: str, nonce: int = 0) -> list[str]:
    """The 36-card deck for these seeds, in dealing order."""
    return shuffled_cards(new_deck_order(), server_seed=server_seed, client_seed=client_seed, nonce=nonce)
