"""What a player at the table may know, and the worlds consistent with it.

Public at every moment: the player's own hand, the table, the discard pile, every hand's size, the talon's
size and the trump card (face up under the talon until someone draws it). Public from the game's history:
the cards a player picked up from the table (they stay known until played) and who drew the trump card.
`Seen` holds that history's part, the same for everyone at the table; `observe` updates it from an action
and the states around it, reading only what everyone saw (card counts, the table, the action).

`unseen` is what a player cannot place; `sample` deals it at random to the other hands and the talon, the
way it could lie: a determinization for the `hard` bot. Neither looks at another hand or the talon's order.
"""

import random
from dataclasses import dataclass
from typing import Any

from durak.engine.cards import CARDS, card_key
from durak.engine.state import GameState


@dataclass(frozen=True, slots=True)
class Seen:
    """Per seat, the cards everyone knows to be in that hand."""

    known: tuple[frozenset[str], ...]


def start(state: GameState) -> Seen:
    """The knowledge at the deal: with 6 players the trump is the last seat's last card, dealt face up."""
    known = [frozenset[str]() for _ in state.hands]
    if not state.talon and not state.discard and not state.table:
        known[-1] = frozenset({state.trump})
    return Seen(tuple(known))


def guess(state: GameState) -> Seen:
    """The knowledge of a player who joined now (no history): with two players, a trump card no longer
    under the talon and not played is in the opponent's hand; nothing else."""
    known = [frozenset[str]() for _ in state.hands]
    if state.rules.players == 2 and state.trump not in state.talon:
        public = set(state.discard) | {card for pair in state.table for card in pair if card is not None}
        if state.trump not in public:
            # The trump is in one of the two hands; who holds it is public, a seat knows whether it has it.
            for seat in range(2):
                known[seat] = frozenset({state.trump})
    return Seen(tuple(known))


def observe(seen: Seen, before: GameState, action: dict[str, Any], after: GameState) -> Seen:
    """The knowledge after `action` took `before` to `after`: a played card leaves the known cards, the
    cards a defender picks up join them, the trump card joins the hand of whoever drew it last, and an empty
    hand (its size is public) knows nothing."""
    known = list(seen.known)
    player, card = action["player"], action.get("card")
    if card is not None:
        known[player] = known[player] - {card}
    if after.bout != before.bout:  # the bout closed with this action
        table = {c for pair in before.table for c in pair if c is not None}
        if action["action"] == "attack" and card is not None:
            table.add(card)
        if before.taking or action["action"] == "take":
            known[before.defender] = known[before.defender] | table
        if before.trump in before.talon and before.trump not in after.talon:
            holder = _last_to_draw(before, action, table)
            known[holder] = known[holder] | {before.trump}
    return Seen(tuple(cards if hand else frozenset() for hand, cards in zip(after.hands, known, strict=True)))


def _last_to_draw(before: GameState, action: dict[str, Any], table: set[str]) -> int:
    """Who drew the talon's last card when the bout that `action` closed was refilled, from the hands' sizes
    and the refill order (the principal attacker, the others clockwise, the defender last)."""
    players = before.rules.players
    sizes = [len(hand) for hand in before.hands]
    if action.get("card") is not None:
        sizes[action["player"]] -= 1
    if before.taking or action["action"] == "take":
        sizes[before.defender] += len(table)
    order = [(before.attacker + step) % players for step in range(players)]
    order = [seat for seat in order if seat != before.defender and seat not in before.out] + [before.defender]
    left, last = len(before.talon), order[0]
    for seat in order:
        need = min(max(0, 6 - sizes[seat]), left)
        if need:
            left -= need
            last = seat
    return last


def public_cards(state: GameState) -> set[str]:
    """The cards everyone sees where they are: the table and the discard pile."""
    return set(state.discard) | {card for pair in state.table for card in pair if card is not None}


def consistent(seen: Seen, state: GameState, player: int) -> Seen:
    """`seen` cut to what can hold for `player`: no known card in their own hand or face up, and no hand
    known to hold more cards than its size (a caller's stale knowledge must not deal an impossible world)."""
    mine = set(state.hands[player])
    excluded = public_cards(state) | mine
    known = []
    for seat, cards in enumerate(seen.known):
        if seat == player:
            known.append(frozenset(mine))
            continue
        cards = cards - excluded
        if len(cards) > len(state.hands[seat]):
            cards = frozenset()
        known.append(cards)
    # A card known in two hands (impossible) is known in neither.
    for seat, cards in enumerate(known):
        others = set().union(*(c for s, c in enumerate(known) if s not in (seat, player)))
        if seat != player and cards & others:
            known[seat] = cards - others
    return Seen(tuple(known))


def unseen(state: GameState, player: int, seen: Seen | None = None) -> set[str]:
    """The cards `player` cannot place (in some other hand, or in the talon), with `seen` as given."""
    placed = public_cards(state)
    placed.update(state.hands[player])
    if seen is not None:
        for seat, cards in enumerate(seen.known):
            if seat != player:
                placed |= cards
    if state.trump in state.talon:
        placed.add(state.trump)
    return set(CARDS - placed)


def sample(state: GameState, player: int, seen: Seen, rng: random.Random) -> GameState:
    """A world `player` cannot tell from the real one: the unseen cards dealt at random to the other hands'
    unknown places and to the talon (whose last card stays the trump while it is there). Reads only the
    hands' and the talon's sizes of what `player` does not see."""
    seen = consistent(seen, state, player)
    pool = sorted(unseen(state, player, seen), key=lambda card: card_key(card, state.trump_suit))
    rng.shuffle(pool)
    hands = []
    for seat, hand in enumerate(state.hands):
        if seat == player:
            hands.append(hand)
            continue
        known = sorted(seen.known[seat], key=lambda card: card_key(card, state.trump_suit))
        free = len(hand) - len(known)
        hands.append((*known, *pool[:free]))
        del pool[:free]
    talon = (*pool, state.trump) if state.trump in state.talon else tuple(pool)
    assert len(talon) == len(state.talon), "the unseen cards fill the unknown places exactly"
    return GameState(
        rules=state.rules,
        hands=tuple(hands),
        talon=talon,
        trump=state.trump,
        discard=state.discard,
        table=state.table,
        attacker=state.attacker,
        defender=state.defender,
        done=state.done,
        taking=state.taking,
        limit=state.limit,
        bout=state.bout,
        out=state.out,
        passports=state.passports,
        promoted=state.promoted,
        finished=state.finished,
        fool=state.fool,
    )
