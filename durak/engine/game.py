"""The rules of play: `new_game`, `apply(state, action) -> state`, `legal_actions` and `replay`.

Actions are dictionaries, each with "action" and "player" (a seat number):
    {"action": "attack", "player": P, "card": C}       lead a bout, or add a card of a rank on the table
    {"action": "beat", "player": P, "card": C, "target": A}   the defender covers attacking card A with C
    {"action": "take", "player": P}                     the defender will pick the table up
    {"action": "done", "player": P}                     an attacker has nothing more to add (until a beat,
                                                        a take or a transfer)
    {"action": "transfer", "player": P, "card": C}      perevodnoy: the defender passes the attack on
A refused action raises Refused with a code (`game_over`, `not_your_turn`, `not_in_hand`, `cannot_beat`,
`rank_not_on_table`, `limit_reached`, `passport_card`, `must_take`, `cannot_transfer`, `illegal_action`,
`bad_message`) and changes nothing: states are values.

Throwing in is simultaneous: once the bout is led, every attacker in `throwers(state)` (all those the attack
type allows who have cards and have not said done) may add a card or say done, in any order; the caller
serialises the actions, so the first to arrive takes the bout's last free place.
"""

from collections.abc import Iterable
from typing import Any

from cards.errors import Refused

from .cards import CARDS, RANK_ORDER, SUITS, beats
from .rules import HAND_SIZE, PASSPORT, PASSPORT_RANKS, PEREVODNOY, DurakRules
from .state import GameState, evolve, next_active, seat_after, thrower, throwers

ACTIONS = ("attack", "beat", "take", "done", "transfer", "surrender")


def new_game(
    rules: DurakRules,
    deck: Iterable[str],
    *,
    first_attacker: int | None = None,
    previous_fool: int | None = None,
    passports: Iterable[str] | None = None,
) -> GameState:
    """Deal `deck` (36 cards, card 0 first): card k goes to seat k mod players until everyone has 6; the next
    card is the trump, turned and put under the talon (the rest). With 6 players no card is left: the trump is
    the last card dealt, which stays in the last seat's hand.

    The first attacker is `first_attacker` if given, else the player to the left of `previous_fool` (the
    previous game's fool at this table), else the holder of the lowest trump, else (no trump in any hand) the
    holder of the lowest card by rank, then suit in the order s h d c. `passports` (passport variant only) are
    the players' passport ranks, all "6" by default.
    """
    deck = tuple(deck)
    players = rules.players
    if len(deck) != len(CARDS) or set(deck) != CARDS:
        raise Refused("bad_message", "a deck is the 36 cards 6 to A, each once")
    if first_attacker is not None and previous_fool is not None:
        raise Refused("bad_message", "give the first attacker or the previous fool, not both")
    for seat in (first_attacker, previous_fool):
        if seat is not None and (type(seat) is not int or not 0 <= seat < players):
            raise Refused("bad_message", f"a seat is 0 to {players - 1}")
    passports = _passports(rules, passports)
    dealt = HAND_SIZE * players
    hands = tuple(deck[seat:dealt:players] for seat in range(players))
    if dealt < len(deck):
        trump, talon = deck[dealt], (*deck[dealt + 1 :], deck[dealt])
    else:
        trump, talon = deck[-1], ()
    if first_attacker is None:
        first_attacker = (
            (previous_fool + 1) % players if previous_fool is not None else _lowest(hands, trump[1])
        )
    return GameState(
        rules=rules,
        hands=hands,
        talon=talon,
        trump=trump,
        discard=(),
        table=(),
        attacker=first_attacker,
        defender=(first_attacker + 1) % players,
        done=(),
        taking=False,
        limit=rules.bout_limit(HAND_SIZE, first_bout=True),
        bout=0,
        out=(),
        passports=passports,
        promoted=(),
        finished=False,
        fool=None,
    )


def _passports(rules: DurakRules, passports: Iterable[str] | None) -> tuple[str, ...]:
    if rules.variant != PASSPORT:
        if passports is not None:
            raise Refused("bad_message", "passports belong to the passport variant")
        return ()
    passports = tuple(passports) if passports is not None else ("6",) * rules.players
    if len(passports) != rules.players or not all(
        isinstance(rank, str) and len(rank) == 1 and rank in PASSPORT_RANKS for rank in passports
    ):
        raise Refused("bad_message", f"one passport rank ({' '.join(PASSPORT_RANKS)}) per player")
    return passports


def _lowest(hands: tuple[tuple[str, ...], ...], trump_suit: str) -> int:
    """The holder of the lowest trump, or of the lowest card (rank, then suit s h d c) without trumps."""
    best = None
    for seat, hand in enumerate(hands):
        for card in hand:
            key = (card[1] != trump_suit, RANK_ORDER[card[0]], SUITS.index(card[1]))
            if best is None or key < best[0]:
                best = (key, seat)
    assert best is not None  # every hand is dealt cards
    return best[1]


def apply(state: GameState, action: Any) -> GameState:
    """The state after `action`, or Refused if it is refused."""
    name, player, card, target = _parse(state, action)
    if state.finished:
        raise Refused("game_over", "the game is over")
    if name == "take":
        return _take(state, player)
    if name == "done":
        return _done(state, player)
    if name == "surrender":
        return _surrender(state, player)
    assert card is not None  # `_parse` refuses an attack, a beat or a transfer without its card
    if name == "attack":
        return _attack(state, player, card)
    if name == "beat":
        assert target is not None  # and a beat without its target
        return _beat(state, player, card, target)
    return _transfer(state, player, card)


def _parse(state: GameState, action: Any) -> tuple[str, int, str | None, str | None]:
    if not isinstance(action, dict) or action.get("action") not in ACTIONS:
        raise Refused("bad_message", f"an action is an object whose action is one of {', '.join(ACTIONS)}")
    name, player = action["action"], action.get("player")
    if type(player) is not int or not 0 <= player < state.rules.players:
        raise Refused("bad_message", f"player is a seat number, 0 to {state.rules.players - 1}")
    card = target = None
    if name in ("attack", "beat", "transfer"):
        card = action.get("card")
        if card not in CARDS:
            raise Refused("bad_message", "card is a card like 6s, Th or Ad")
    if name == "beat":
        target = action.get("target")
        if target not in CARDS:
            raise Refused("bad_message", "target is the attacking card to beat, like 6s")
    return name, player, card, target


def _without(hand: tuple[str, ...], card: str) -> tuple[str, ...]:
    index = hand.index(card)
    return hand[:index] + hand[index + 1 :]


def _with_hand(state: GameState, player: int, hand: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return (*state.hands[:player], hand, *state.hands[player + 1 :])


def _check_in_hand(state: GameState, player: int, card: str) -> None:
    if card not in state.hands[player]:
        raise Refused("not_in_hand", f"{card} is not in your hand")


def _is_passport_card(state: GameState, player: int, card: str) -> bool:
    return bool(state.passports) and card[0] == state.passports[player]


def _attack(state: GameState, player: int, card: str) -> GameState:
    if not state.table:
        if player != state.attacker:
            raise Refused("not_your_turn", "the principal attacker leads the bout")
    else:
        _check_thrower(state, player)
        if card[0] not in {c[0] for pair in state.table for c in pair if c is not None}:
            raise Refused("rank_not_on_table", "only cards of a rank already on the table may be added")
        if len(state.table) >= state.limit:
            raise Refused("limit_reached", f"this bout holds at most {state.limit} attacking cards")
    _check_in_hand(state, player, card)
    if _is_passport_card(state, player, card):
        raise Refused("passport_card", "a card of your passport rank cannot attack")
    state = evolve(
        state,
        hands=_with_hand(state, player, _without(state.hands[player], card)),
        table=(*state.table, (card, None)),
    )
    return _settle(state)


def _must_take(state: GameState) -> bool:
    """Passport variant: has the defender been attacked with their passport rank?"""
    return bool(state.passports) and any(
        attack[0] == state.passports[state.defender] for attack, _ in state.table
    )


def _beat(state: GameState, player: int, card: str, target: str) -> GameState:
    if player != state.defender:
        raise Refused("not_your_turn", "only the defender beats cards")
    if state.taking:
        raise Refused("illegal_action", "you are taking the cards")
    slot = next(
        (i for i, (attack, defence) in enumerate(state.table) if attack == target and defence is None), None
    )
    if slot is None:
        raise Refused("illegal_action", f"{target} is not an unbeaten attacking card")
    _check_in_hand(state, player, card)
    if _must_take(state):
        raise Refused("must_take", "you were attacked with your passport rank: you must take")
    if _is_passport_card(state, player, card) and card[1] != state.trump_suit:
        raise Refused("passport_card", "a card of your passport rank defends only if it is a trump")
    if not beats(card, target, state.trump_suit):
        raise Refused("cannot_beat", f"{card} does not beat {target}")
    table = (*state.table[:slot], (target, card), *state.table[slot + 1 :])
    state = evolve(
        state, hands=_with_hand(state, player, _without(state.hands[player], card)), table=table, done=()
    )
    return _settle(state)


def _take(state: GameState, player: int) -> GameState:
    if player != state.defender:
        raise Refused("not_your_turn", "only the defender takes")
    if state.taking:
        raise Refused("illegal_action", "you are already taking")
    if all(defence is not None for _, defence in state.table):
        raise Refused("illegal_action", "there is no unbeaten card to take")
    return _settle(evolve(state, taking=True, done=()))


def _done(state: GameState, player: int) -> GameState:
    if not state.table:
        raise Refused(
            "not_your_turn" if player != state.attacker else "illegal_action", "the bout must be led"
        )
    _check_thrower(state, player)
    return _settle(evolve(state, done=tuple(sorted((*state.done, player)))))


def _check_thrower(state: GameState, player: int) -> None:
    if player not in throwers(state):
        if player in state.done:
            raise Refused("not_your_turn", "you said done: you may add again after the next beat or take")
        raise Refused("not_your_turn", "only an attacker with cards may add cards")


def _surrender(state: GameState, player: int) -> GameState:
    """A player still in the game concedes it, whoever's turn it is: they are the fool at once and the game
    ends, every other player still in it going out after those out already (in seat order). The cards stay
    where they are. Not among `legal_actions` (no policy chooses it); always open to a player in the game."""
    if player in state.out:
        raise Refused("illegal_action", "you are out of this game already")
    rest = tuple(seat for seat in range(state.rules.players) if seat not in state.out and seat != player)
    return evolve(state, finished=True, fool=player, out=(*state.out, *rest))


def _transfer(state: GameState, player: int, card: str) -> GameState:
    if state.rules.variant != PEREVODNOY:
        raise Refused("illegal_action", "only perevodnoy allows a transfer")
    if player != state.defender:
        raise Refused("not_your_turn", "only the defender transfers")
    if state.taking or not state.table or any(defence is not None for _, defence in state.table):
        raise Refused("cannot_transfer", "a transfer comes before any card is beaten or taken")
    if card[0] != state.table[0][0][0]:
        raise Refused("cannot_transfer", "a transfer needs a card of the attacking rank")
    _check_in_hand(state, player, card)
    successor = next_active(state, player)
    hands = _with_hand(state, player, _without(state.hands[player], card))
    limit = state.rules.bout_limit(len(hands[successor]), first_bout=state.bout == 0)
    if len(state.table) + 1 > limit:
        raise Refused("cannot_transfer", "the next player cannot be attacked with that many cards")
    return evolve(
        state,
        hands=hands,
        table=(*state.table, (card, None)),
        attacker=player,
        defender=successor,
        done=(),
        limit=limit,
    )


def _settle(state: GameState) -> GameState:
    """Close the bout if nothing more can happen in it: every card beaten or the defender taking, and the
    limit reached or every attacker done."""
    if not state.taking and any(defence is None for _, defence in state.table):
        return state
    if len(state.table) < state.limit and thrower(state) is not None:
        return state
    return _close(state)


def _close(state: GameState) -> GameState:
    """End the bout: the defender picks up (and loses the turn) or the cards are beaten off; refill; players
    without cards once the talon is empty go out; a new bout or the end of the game."""
    players = state.rules.players
    cards_on_table = tuple(card for pair in state.table for card in pair if card is not None)
    hands = list(state.hands)
    discard = state.discard
    if state.taking:
        hands[state.defender] = hands[state.defender] + cards_on_table
    else:
        discard = discard + cards_on_table
    talon = state.talon
    # Refill: the principal attacker, the others clockwise from them, the defender last.
    order = [(state.attacker + step) % players for step in range(players)]
    order = [seat for seat in order if seat != state.defender and seat not in state.out] + [state.defender]
    for seat in order:
        need = HAND_SIZE - len(hands[seat])
        if need > 0 and talon:
            hands[seat], talon = hands[seat] + talon[:need], talon[need:]
    out, promoted = list(state.out), list(state.promoted)
    if not talon:
        for seat in order:
            hand = hands[seat]
            if hand and state.passports and all(card[0] == state.passports[seat] for card in hand):
                discard, hands[seat] = discard + hand, ()
                promoted.append(seat)
            if not hands[seat]:
                out.append(seat)
    closed = {
        "hands": tuple(hands),
        "talon": talon,
        "discard": discard,
        "table": (),
        "done": (),
        "taking": False,
        "bout": state.bout + 1,
        "out": tuple(out),
        "promoted": tuple(promoted),
    }
    remaining = [seat for seat in range(players) if seat not in out]
    if len(remaining) <= 1:
        return evolve(state, **closed, finished=True, fool=remaining[0] if remaining else None)
    # After a take the defender loses the turn; after a defence they lead (if they are still in).
    lead = state.defender
    if state.taking or lead in out:
        lead = seat_after(players, out, lead)
    defender = seat_after(players, out, lead)
    limit = state.rules.bout_limit(len(hands[defender]), first_bout=False)
    return evolve(state, **closed, attacker=lead, defender=defender, limit=limit)


def legal_actions(state: GameState, player: int) -> list[dict[str, Any]]:
    """Every action `player` may take now, in a fixed order (the bot and the views use it)."""
    if state.finished or player in state.out:
        return []
    actions: list[dict[str, Any]] = []
    hand = state.hands[player]
    passport = state.passports[player] if state.passports else None
    if not state.table:
        if player == state.attacker:
            actions.extend(
                {"action": "attack", "player": player, "card": c} for c in hand if c[0] != passport
            )
        return actions
    if player in throwers(state):
        if len(state.table) < state.limit:
            ranks = {card[0] for pair in state.table for card in pair if card is not None}
            actions.extend(
                {"action": "attack", "player": player, "card": c}
                for c in hand
                if c[0] in ranks and c[0] != passport
            )
        actions.append({"action": "done", "player": player})
    if player == state.defender and not state.taking:
        unbeaten = [attack for attack, defence in state.table if defence is None]
        if not unbeaten:
            return actions
        if not _must_take(state):
            trump_suit = state.trump_suit
            for target in unbeaten:
                actions.extend(
                    {"action": "beat", "player": player, "card": c, "target": target}
                    for c in hand
                    if beats(c, target, trump_suit) and (c[0] != passport or c[1] == trump_suit)
                )
        if state.rules.variant == PEREVODNOY and len(unbeaten) == len(state.table):
            successor = next_active(state, player)
            room = state.rules.bout_limit(len(state.hands[successor]), first_bout=state.bout == 0)
            if len(state.table) + 1 <= room:
                rank = state.table[0][0][0]
                actions.extend(
                    {"action": "transfer", "player": player, "card": c} for c in hand if c[0] == rank
                )
        actions.append({"action": "take", "player": player})
    return actions


def replay(
    rules: DurakRules,
    deck: Iterable[str],
    actions: Iterable[dict[str, Any]],
    *,
    first_attacker: int | None = None,
    previous_fool: int | None = None,
    passports: Iterable[str] | None = None,
) -> GameState:
    """The state after `actions` from a new game with these arguments: the same as the live state."""
    state = new_game(
        rules, deck, first_attacker=first_attacker, previous_fool=previous_fool, passports=passports
    )
    for action in actions:
        state = apply(state, action)
    return state
