"""Fairness of one round: the shoe's published hash, its seeds once retired, and a server-side check.

`check_round` recomputes the retired shoe from its seeds (the algorithm of `blackjack.engine.shoe`), checks
the published hash, and checks that the cards the round shows (replayed from the action log and compared with
the stored live state) are the shoe's cards from the round's start position on. The browser does the same with
`static/js/verify.js`; this is the same check for tests and for anyone reading the code."""

import shlex
from dataclasses import dataclass

from blackjack.engine.shoe import dealing_order, shuffled_shoe
from cards.errors import Refused
from cards.fairness import seed_hash


@dataclass
class FairnessCheck:
    hash_ok: bool
    cards_ok: bool
    first_mismatch: int | None  # index into the dealt cards
    message: str

    @property
    def ok(self) -> bool:
        return self.hash_ok and self.cards_ok


def verify_command(shoe, *, ran_out_from: int | None = None) -> str | None:
    """The equivalent command line for a retired shoe (None while it is in play); `ran_out_from` is the first
    card of a round that ran out of cards, whose order goes on with the reshuffled discards."""
    if shoe.revealed_seed is None:
        return None
    command = (
        f"python -m blackjack.engine.verify --server-seed {shoe.revealed_seed} "
        f"--client-seed {shlex.quote(shoe.client_seed)} --decks {shoe.decks} --nonce {shoe.nonce}"
    )
    return command if ran_out_from is None else f"{command} --round-start {ran_out_from}"


def check_dealt(*, shoe, start_position: int, dealt: list[str]) -> FairnessCheck:
    """Do `dealt` (the round's cards in dealing order) follow from the retired shoe's seeds?"""
    seed = shoe.revealed_seed
    if seed is None:
        return FairnessCheck(False, False, None, "The shoe is still in play: its seed is not revealed yet.")
    try:
        hash_ok = seed_hash(seed) == shoe.seed_hash
        order = dealing_order(
            shuffled_shoe(server_seed=seed, client_seed=shoe.client_seed, decks=shoe.decks, nonce=shoe.nonce),
            start_position,
            server_seed=seed,
            client_seed=shoe.client_seed,
            nonce=shoe.nonce,
        )
    except Refused as exc:
        return FairnessCheck(False, False, None, exc.message)
    expected = order[start_position : start_position + len(dealt)]
    mismatch = next((i for i, (a, b) in enumerate(zip(dealt, expected, strict=False)) if a != b), None)
    if mismatch is None and len(expected) != len(dealt):
        mismatch = len(expected)
    cards_ok = mismatch is None
    if not hash_ok:
        message = "The seed does not match the hash published before the shoe was dealt."
    elif not cards_ok:
        message = f"Card {mismatch + 1} of the round is not the shoe's card at that position."
    else:
        message = f"The seed matches its hash and all {len(dealt)} cards of the round follow from it."
    return FairnessCheck(hash_ok, cards_ok, mismatch, message)
