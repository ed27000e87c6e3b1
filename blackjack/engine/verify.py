"""Check a retired shoe: print its seed hash and its full card order.

    python -m blackjack.engine.verify --server-seed HEX --client-seed TEXT --decks N [--nonce K] [--json]
    python -m blackjack.engine.verify --server-seed HEX --player-seed A --player-seed B ... --decks N
    python -m blackjack.engine.verify ... --round-start S   (a round that began at card S, ran out of cards)

Compare the hash with the one the table published before the shoe was dealt, and the cards with those dealt.
With `--round-start S` the order printed goes on after the shoe's last card with the discards (cards before S)
reshuffled, as a round that began at card S and ran out was dealt (`blackjack.engine.shoe`, step 7).
`--player-seed` (repeatable) builds the client seed from the players' seeds as the table does. Invalid input
prints a message and exits with status 2. The algorithm is described in `blackjack.engine.shoe`.
"""

import argparse
import json
import sys

from cards.errors import Refused
from cards.fairness import seed_hash
from cards.verify import add_seed_arguments, client_seed_of_args

from .shoe import dealing_order, shuffled_shoe


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m blackjack.engine.verify", description="Recompute a provably fair shoe from its seeds."
    )
    add_seed_arguments(parser, "shoe")
    parser.add_argument("--decks", type=int, required=True, help="number of decks in the shoe (1-8)")
    parser.add_argument("--nonce", type=int, default=0, help="the shoe's nonce (default 0)")
    parser.add_argument(
        "--round-start",
        type=int,
        help="the first card (0-based) of a round that ran out of cards: add the reshuffled discards it used",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    client_seed = client_seed_of_args(args)
    try:
        digest = seed_hash(args.server_seed)
        cards = shuffled_shoe(
            server_seed=args.server_seed, client_seed=client_seed, decks=args.decks, nonce=args.nonce
        )
        if args.round_start is not None:
            cards = list(
                dealing_order(
                    cards,
                    args.round_start,
                    server_seed=args.server_seed,
                    client_seed=client_seed,
                    nonce=args.nonce,
                )
            )
    except Refused as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {exc.message}", file=sys.stderr)
        return 2
    if args.json:
        report = {
            "server_seed_hash": digest,
            "client_seed": client_seed,
            "decks": args.decks,
            "nonce": args.nonce,
            "round_start": args.round_start,
            "cards": cards,
        }
        print(json.dumps(report))
    else:
        print(f"server seed SHA-256: {digest}")
        print(f"client seed: {client_seed}")
        print(f"decks: {args.decks}  nonce: {args.nonce}  cards: {len(cards)}")
        width = len(str(len(cards)))
        for number, card in enumerate(cards, start=1):
            print(f"{number:>{width}}  {card}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
