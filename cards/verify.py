"""What every game's deck check (`python -m <game>.engine.verify`) shares: the seed options and the client
seed they give."""

import argparse

from cards.fairness import combine_client_seeds


def add_seed_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """The seed options every deck check takes: the revealed server seed, and the client seed or the players'
    seeds it is made of."""
    parser.add_argument("--server-seed", required=True, help="the revealed server seed, 64 hex characters")
    client = parser.add_mutually_exclusive_group(required=True)
    client.add_argument("--client-seed", help=f"the {what}'s client seed, as shown by the table")
    client.add_argument(
        "--player-seed",
        action="append",
        help="one player's seed (repeat for each); combined as the table does",
    )


def client_seed_of_args(args: argparse.Namespace) -> str:
    """The client seed the options give: as given, or combined from the players' seeds."""
    return args.client_seed if args.player_seed is None else combine_client_seeds(args.player_seed)
