"""Check a Durak game's deck: print the seed hash, the deck in dealing order and how it was dealt.

    python -m durak.engine.verify --server-seed HEX --client-seed TEXT --players N [--nonce K] [--json]
    python -m durak.engine.verify --server-seed HEX --player-seed A --player-seed B ... --players N

Compare the hash with the one the table published before the game and the hands, trump and talon with the
game's. `--player-seed` (repeatable) builds the client seed from the players' seeds as the table does.
Invalid input prints a message and exits with status 2. The algorithm: `durak.engine.deck`.
"""

import argparse
import json
import sys

from cards.errors import Refused
from cards.fairness import seed_hash
from cards.verify import add_seed_arguments, client_seed_of_args

from .deck import shuffled_deck
from .game import new_game
from .rules import DurakRules


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m durak.engine.verify",
        description="Recompute a provably fair Durak deck from its seeds.",
    )
    add_seed_arguments(parser, "game")
    parser.add_argument("--players", type=int, required=True, help="number of players dealt (2-6)")
    parser.add_argument("--nonce", type=int, default=0, help="the game's nonce (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    client_seed = client_seed_of_args(args)
    try:
        digest = seed_hash(args.server_seed)
        deck = shuffled_deck(server_seed=args.server_seed, client_seed=client_seed, nonce=args.nonce)
        game = new_game(DurakRules(players=args.players), deck)
    except Refused as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {exc.message}", file=sys.stderr)
        return 2
    report = {
        "server_seed_hash": digest,
        "client_seed": client_seed,
        "nonce": args.nonce,
        "deck": deck,
        "hands": [list(hand) for hand in game.hands],
        "trump": game.trump,
        "talon": list(game.talon),
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"server seed SHA-256: {digest}")
    print(f"client seed: {client_seed}")
    print(f"nonce: {args.nonce}  players: {args.players}")
    print(f"deck: {' '.join(deck)}")
    for seat, hand in enumerate(game.hands):
        print(f"seat {seat}: {' '.join(hand)}")
    print(f"trump: {game.trump}")
    print(f"talon (top first, the trump last): {' '.join(game.talon) or '(none)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
