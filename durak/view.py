"""What one viewer may see of a live Durak table, built from the table in memory (pure).

The game part is the engine's `view_for` for the viewer's seat (a spectator's: no hand), so a player never
receives another's hand or the talon's order. The server seed is shown only once the game is over.
"""

from typing import Any

from cards.fairness import seed_hash
from durak.engine import view_for
from durak.table import Table


def table_view(table: Table, user_id: int | None) -> dict[str, Any]:
    mine = table.seat_of(user_id)
    seat = mine.number if mine is not None else None
    game = table.game
    counts = [len(hand) for hand in game.state.hands] if game is not None else []
    passports = table.match.passports if table.match is not None else ()
    view: dict[str, Any] = {
        "type": "state",
        "v": table.version,
        "table": {
            "id": table.id,
            "name": table.name,
            "variant": table.variant,
            "attack": table.attack,
            "limit": table.limit,
            "seats": len(table.seats),
            "free": sum(s.empty for s in table.seats),
            "stake": table.stake,
            "rated": table.rated,
            "turn_seconds": table.turn_seconds,
            "bot_level": table.bot_level,
            "status": table.status,
            # The next game's server seed is committed before anyone gives a seed for it.
            "next_seed_hash": seed_hash(table.next_server_seed),
        },
        "seats": [
            {
                "seat": s.number,
                "name": s.name,
                "empty": s.empty,
                "bot": s.is_bot,
                "away": s.away,
                "ready": s.is_ready,
                "gone": s.gone is not None,
                "playing": table.in_game(s),
                "you": s.number == seat,
                "cards": counts[s.number] if s.number < len(counts) else None,
                "passport": passports[s.number] if _in_match(table, s, passports) else None,
            }
            for s in table.seats
        ],
        "you": {
            "seat": seat,
            "away": mine.away if mine is not None else False,
            "playing": mine is not None and table.in_game(mine),
            # May concede the game in play (`surrender`): in it, not away, not out yet.
            "can_surrender": mine is not None
            and table.in_game(mine)
            and not mine.away
            and game is not None
            and not game.state.finished
            and mine.number not in game.state.out,
            "ready": mine.is_ready if mine is not None else False,
            "opener": user_id is not None and user_id == table.opener,
        },
        "to_act": table.to_act(),
        "match": table.match.to_dict() if table.match is not None else None,
        "deadline": table.turn_deadline.isoformat() if table.turn_deadline is not None else None,
        "game": None,
    }
    if game is not None:
        # Only the player the game dealt this seat to sees its hand (not who sat there after the game).
        playing = seat is not None and seat < len(game.players) and game.players[seat] == user_id
        player = seat if playing else None
        # The seat the viewer played this game from, even after leaving it (their result and payout).
        played = game.players.index(user_id) if user_id is not None and user_id in game.players else None
        last, bout = game.last, game.last_bout
        rating = game.ratings[played] if played is not None and played < len(game.ratings) else None
        view["game"] = {
            **view_for(game.state, player),
            "id": game.id,
            "number": game.number,
            "seed_hash": game.server_seed_hash,
            "client_seed": game.client_seed,
            "seed_digests": list(game.seed_digests),
            "server_seed": game.server_seed if game.state.finished else None,
            "pot": game.stake * sum(user is not None for user in game.players),
            "payouts": list(game.payouts),
            "played": played,
            # Each playing seat's player as the game had them (one who left is no longer at the table).
            "names": [_player_name(table, number, user) for number, user in enumerate(game.players)],
            "bots": [user is None for user in game.players],
            # What the pot paid this viewer (None: they did not play this game, or it is not over).
            "paid_you": game.payouts[played] if played is not None and game.payouts else None,
            # The chips the viewer won (or lost, below zero) in it: what the pot paid them less their stake.
            "net_you": game.payouts[played] - game.stake if played is not None and game.payouts else None,
            # The last move, which every viewer is told ("Bob beats 7h with 9h"; `by_bot` for a player's
            # seat: the time ran out, or the bot plays for them).
            "last": {"seat": last.seat, "action": last.action, "by_bot": last.by_bot} if last else None,
            # The last bout that closed, its cards as they lay face up (public), shown until the next closes;
            # `took` is the seat that picked them up (None: beaten off).
            "last_bout": {
                "pairs": [list(pair) for pair in bout.pairs],
                "took": bout.took,
                "cards": bout.cards,
            }
            if bout
            else None,
            # The viewer's rating before and after this game once settled (None: unrated, or not theirs).
            "rating_you": {"before": rating[0], "after": rating[1]} if rating else None,
        }
        allowed = view["game"]["allowed"]
        if allowed and all(option["action"] == "done" for option in allowed):
            # Nothing to add: the table says "done" for the player after a bot's pause (`durak.table`), so
            # no button (a click would race it); `passing` tells the page why.
            view["game"]["allowed"] = []
            view["game"]["passing"] = True
    return view


def _player_name(table: Table, number: int, user_id: int | None) -> str:
    seat = table.seats[number] if number < len(table.seats) else None
    if seat is not None and (seat.user_id == user_id and (user_id is not None or seat.is_bot)):
        return seat.name
    return "A bot" if user_id is None else "A player who left"


def _in_match(table: Table, seat, passports) -> bool:
    """Whether the seat's player is the one the match's last deal gave this seat (the match's passports
    are per playing seat: a seat sitting the game out, or taken since, has none)."""
    game = table.game
    if game is None or seat.empty or seat.number >= min(len(game.players), len(passports)):
        return False
    return game.players[seat.number] == seat.user_id
