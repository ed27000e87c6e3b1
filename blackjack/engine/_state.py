"""The data of a round: hands, seats and the round itself, with fast copies and JSON round-trips.

Private to the engine: `round.py` holds the rules of play and is the public face.
"""

from typing import Any

from cards.errors import Refused

from .cards import CARD_VALUES
from .rules import RuleSet

# Phases of a round.
BETTING, INSURANCE, PLAYING, SETTLED = "betting", "insurance", "playing", "settled"

# Hand statuses. ACTIVE hands still await a decision (or their second card after a split); every other
# status is final for the player.
ACTIVE = "active"
STOOD = "stood"
DOUBLED = "doubled"
BUST = "bust"
BLACKJACK = "blackjack"
SURRENDERED = "surrendered"
CHARLIE = "charlie"
SUITED_678 = "suited_678"
EVEN_MONEY = "even_money"


class Hand:
    """One player hand. `hard` sums the card values with aces as 1; `has_ace` marks a possible soft total."""

    __slots__ = ("bet", "cards", "doubled", "hard", "has_ace", "payout", "result", "split", "status")

    def __init__(self, cards: list[str], bet: int, *, split: bool = False) -> None:
        self.cards = cards
        self.bet = bet
        hard = 0
        has_ace = False
        for card in cards:
            value = CARD_VALUES[card]
            hard += value
            if value == 1:
                has_ace = True
        self.hard = hard
        self.has_ace = has_ace
        self.split = split  # came from a split: never a blackjack
        self.doubled = False
        self.status = ACTIVE
        self.result: str | None = None
        self.payout: int | None = None

    def add(self, card: str) -> None:
        value = CARD_VALUES[card]
        self.cards.append(card)
        self.hard += value
        if value == 1:
            self.has_ace = True

    @property
    def total(self) -> int:
        hard = self.hard
        return hard + 10 if self.has_ace and hard <= 11 else hard

    @property
    def soft(self) -> bool:
        return self.has_ace and self.hard <= 11

    def copy(self) -> "Hand":
        new = Hand.__new__(Hand)
        new.cards = self.cards.copy()
        new.bet = self.bet
        new.hard = self.hard
        new.has_ace = self.has_ace
        new.split = self.split
        new.doubled = self.doubled
        new.status = self.status
        new.result = self.result
        new.payout = self.payout
        return new

    def to_dict(self) -> dict[str, Any]:
        return {
            "cards": list(self.cards),
            "bet": self.bet,
            "total": self.total,
            "soft": self.soft,
            "status": self.status,
            "split": self.split,
            "doubled": self.doubled,
            "result": self.result,
            "payout": self.payout,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Hand":
        hand = cls(list(data["cards"]), data["bet"], split=data["split"])
        hand.doubled = data["doubled"]
        hand.status = data["status"]
        hand.result = data["result"]
        hand.payout = data["payout"]
        return hand


class Seat:
    """One seat in the round: its bet, hands and money.

    `stake` is every chip the seat has put on the table this round (bet, doubles, splits, insurance);
    `returned` is every chip handed back at settlement (stakes back plus winnings).
    `offers` lists the decisions still awaited from this seat in the insurance window.
    """

    __slots__ = (
        "bet",
        "hands",
        "insurance",
        "insurance_payout",
        "number",
        "offers",
        "returned",
        "sitting_out",
        "stake",
    )

    def __init__(self, number: int) -> None:
        self.number = number
        self.bet = 0
        self.sitting_out = False
        self.hands: list[Hand] = []
        self.insurance = 0
        self.insurance_payout = 0
        self.offers: list[str] = []
        self.stake = 0
        self.returned = 0

    def copy(self) -> "Seat":
        new = Seat.__new__(Seat)
        new.number = self.number
        new.bet = self.bet
        new.sitting_out = self.sitting_out
        new.hands = [hand.copy() for hand in self.hands]
        new.insurance = self.insurance
        new.insurance_payout = self.insurance_payout
        new.offers = self.offers.copy()
        new.stake = self.stake
        new.returned = self.returned
        return new

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.number,
            "bet": self.bet,
            "sitting_out": self.sitting_out,
            "hands": [hand.to_dict() for hand in self.hands],
            "insurance": self.insurance,
            "insurance_payout": self.insurance_payout,
            "offers": list(self.offers),
            "stake": self.stake,
            "returned": self.returned,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Seat":
        seat = cls(data["seat"])
        seat.bet = data["bet"]
        seat.sitting_out = data["sitting_out"]
        seat.hands = [Hand.from_dict(hand) for hand in data["hands"]]
        seat.insurance = data["insurance"]
        seat.insurance_payout = data["insurance_payout"]
        seat.offers = list(data["offers"])
        seat.stake = data["stake"]
        seat.returned = data["returned"]
        return seat


class RoundState:
    """One round of blackjack as a value. Build it with `round.new_round`; change it with `round.apply`.

    `shoe` is the whole shoe order, followed by the discards reshuffled for a round that runs out
    (`shoe.dealing_order`; a tuple, shared between copies and never changed), `start_position` the
    index of the round's first card and `position` the index of the next card to deal. `seats` maps seat
    number to `Seat`, in seat order. The dealer's hole card is in `dealer_cards` from the deal on (peek game);
    `hole_revealed` says whether clients may see every dealer card.
    """

    __slots__ = (
        "dealer_cards",
        "hole_revealed",
        "max_bet",
        "min_bet",
        "phase",
        "position",
        "rules",
        "seats",
        "shoe",
        "start_position",
        "turn_hand",
        "turn_seat",
    )

    def __init__(
        self,
        *,
        rules: RuleSet,
        shoe: tuple[str, ...],
        position: int,
        seats: list[int],
        min_bet: int,
        max_bet: int,
    ) -> None:
        self.rules = rules
        self.shoe = shoe
        self.start_position = position
        self.position = position
        self.min_bet = min_bet
        self.max_bet = max_bet
        self.phase = BETTING
        self.seats = {number: Seat(number) for number in seats}
        self.dealer_cards: list[str] = []
        self.hole_revealed = False
        self.turn_seat: int | None = None
        self.turn_hand: int | None = None

    @property
    def turn(self) -> tuple[int, int] | None:
        """(seat, hand) whose decision is awaited, or None outside the playing phase."""
        if self.turn_seat is None or self.turn_hand is None:
            return None
        return self.turn_seat, self.turn_hand

    def copy(self) -> "RoundState":
        new = RoundState.__new__(RoundState)
        new.rules = self.rules
        new.shoe = self.shoe
        new.start_position = self.start_position
        new.position = self.position
        new.min_bet = self.min_bet
        new.max_bet = self.max_bet
        new.phase = self.phase
        new.seats = {number: seat.copy() for number, seat in self.seats.items()}
        new.dealer_cards = self.dealer_cards.copy()
        new.hole_revealed = self.hole_revealed
        new.turn_seat = self.turn_seat
        new.turn_hand = self.turn_hand
        return new

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of everything, including the shoe and the hole card: never send it to a client."""
        return {
            "rules": self.rules.to_dict(),
            "shoe": "".join(self.shoe),
            "start_position": self.start_position,
            "position": self.position,
            "min_bet": self.min_bet,
            "max_bet": self.max_bet,
            "phase": self.phase,
            "seats": [seat.to_dict() for seat in self.seats.values()],
            "dealer_cards": list(self.dealer_cards),
            "hole_revealed": self.hole_revealed,
            "turn": None if self.turn is None else list(self.turn),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RoundState":
        try:
            shoe = data["shoe"]
            state = cls(
                rules=RuleSet.from_dict(data["rules"]),
                shoe=tuple(shoe[i : i + 2] for i in range(0, len(shoe), 2)),
                position=data["start_position"],
                seats=[],
                min_bet=data["min_bet"],
                max_bet=data["max_bet"],
            )
            state.position = data["position"]
            state.phase = data["phase"]
            state.seats = {seat["seat"]: Seat.from_dict(seat) for seat in data["seats"]}
            state.dealer_cards = list(data["dealer_cards"])
            state.hole_revealed = data["hole_revealed"]
            turn = data["turn"]
            state.turn_seat, state.turn_hand = (None, None) if turn is None else turn
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise Refused("bad_message", f"not a saved round: {exc!r}") from None
        return state

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RoundState):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<RoundState {self.phase} seats={list(self.seats)} dealer={self.dealer_cards} turn={self.turn}>"
        )
