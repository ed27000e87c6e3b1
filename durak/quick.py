"""Quick play: one tap seats a player for a game of a variant, a stake and a number of players. They sit at
a public table of those options with a free seat (the fullest first, so a game starts sooner), or, with none,
at a new table of their own whose other seats bots fill at once: the player starts the game (their seed goes
into the deck with the start), and a player arriving later takes a free seat of a table with room left."""

from cards.errors import Refused
from durak import services
from durak.remote import act_for

#: Tables tried before opening a new one (another player may take the last free seat first).
TRIES = 3


def quick_play(*, user, variant: str, stake: int, players: int) -> int:
    """The id of the table `user` now sits at. Raises `Refused` (`insufficient_chips`, `stake_limit`,
    `suspended`, `too_many_tables`)."""
    if user.barred:
        raise Refused("suspended", "Your account is suspended or closed: you cannot play.")
    services.check_stake(user_id=user.pk, stake=stake)
    services.check_chips(user=user, stake=stake)
    for table in services.quick_tables(user=user, variant=variant, stake=stake, players=players)[:TRIES]:
        try:
            act_for(table.pk, user, "sit")
        except Refused as refused:
            if refused.code not in ("table_full", "stale_version", "game_in_play", "table_closed"):
                raise
            continue
        return table.pk
    table = services.open_table(
        user=user,
        name=f"{user.public_name}'s table",
        variant=variant,
        stake=stake,
        seats=players,
        **services.QUICK_OPTIONS,
    )
    act_for(table.pk, user, "sit")
    for _ in range(players - 1):
        act_for(table.pk, user, "add_bot")
    return table.pk
