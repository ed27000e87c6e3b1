"""The sentences of the table's event log: what a play, a result, a window or a shoe reads as."""

from blackjack.engine.cards import hand_value
from blackjack.engine.round import RoundState
from blackjack.flow.state import Player

_RANK_NAMES = {
    "A": "aces", "2": "twos", "3": "threes", "4": "fours", "5": "fives", "6": "sixes", "7": "sevens",
    "8": "eights", "9": "nines", "T": "tens", "J": "jacks", "Q": "queens", "K": "kings",
}  # fmt: skip


def name(player: Player | None) -> str:
    return "A player" if player is None else player.name


def count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def rank(card: str) -> str:
    return {"A": "A", "T": "10", "J": "J", "Q": "Q", "K": "K"}.get(card[0], card[0])


def is_blackjack(cards: list[str]) -> bool:
    return len(cards) == 2 and hand_value(cards)[0] == 21


def window_text(state: RoundState) -> str:
    """What the decisions before the dealer's check are: insurance and even money against an ace, early
    surrender (where the rules have it) against an ace or a ten."""
    early = state.rules.surrender == "early"
    if state.dealer_cards[0][0] != "A":
        return "Dealer shows a ten: early surrender is offered."
    if early:
        return "Dealer shows an ace: insurance, even money and early surrender are offered."
    return "Dealer shows an ace: insurance and even money are offered."


def hand_cards(state: RoundState, number: int, index) -> list[str]:
    seat_state = state.seats.get(number)
    if seat_state is None or type(index) is not int or not 0 <= index < len(seat_state.hands):
        return []
    return list(seat_state.hands[index].cards)


def play_text(
    state: RoundState, player: Player, action: str, number: int, index: int, before: list[str]
) -> str:
    who = name(player)
    hands = state.seats[number].hands
    hand = hands[index] if 0 <= index < len(hands) else None
    total = hand.total if hand is not None else 0
    new_cards = hand.cards[len(before) :] if hand is not None else []
    drawn = f" {' '.join(new_cards)}" if new_cards else ""
    if action == "hit":
        text = f"{who} hits:{drawn}, {total}"
    elif action == "double":
        text = f"{who} doubles on {hand_value(before)[0]}:{drawn}, {total}"
    elif action == "split":
        # "splits a pair of kings", not "splits Ks": that would read as the king of spades. A king and a queen
        # are no pair of anything: two tens.
        if len(before) == 2 and before[0][0] == before[1][0]:
            text = f"{who} splits a pair of {_RANK_NAMES[before[0][0]]}"
        else:
            text = f"{who} splits two tens" if before else f"{who} splits"
    elif action == "surrender":
        return f"{who} surrenders (seat {number})."
    else:
        text = f"{who} stands on {hand_value(before)[0]}"
    if hand is not None and hand.status == "bust":
        text += " - bust"
    return f"{text} (seat {number})."


def result_text(player: Player, number: int, seat_state, net: int) -> str:
    """ "Ann wins 150 (blackjack, seat 1)."; insurance, a side bet, is named with what it did."""
    results = [hand.result or "" for hand in seat_state.hands]
    if seat_state.insurance:
        paid = f"pays {seat_state.insurance_payout:,}" if seat_state.insurance_payout else "lost"
        results.append(f"insurance {paid}")
    details = f"({', '.join(results)}, seat {number})"
    if net > 0:
        return f"{name(player)} wins {net:,} {details}."
    if net < 0:
        return f"{name(player)} loses {-net:,} {details}."
    return f"{name(player)} breaks even {details}."
