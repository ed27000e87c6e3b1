"""Rebuild a settled round with the engine, one logged action at a time.

The inputs are what the live round used: the rules snapshot, the shoe's card order (recomputed from its seeds;
never stored), the start position, the seats and the action log. Each step keeps only what a spectator saw
after it: the cards dealt so far, the dealer's hole card hidden until the dealer turns it over. The shoe's
order beyond the round's last card never leaves this module.
"""

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext, pgettext
from django.utils.translation import gettext_noop as _

from blackjack.engine.cards import hand_value
from blackjack.engine.round import RoundState, apply, new_round
from blackjack.engine.rules import RuleSet
from cards.errors import Refused

#: A step's words (`describe`), in the active language: "%(who)s" is a seat (its player's name with it).
ACTION_WORDS = {
    "sit_out": _("%(who)s sits out."),
    "hit": _("%(who)s hits."),
    "stand": _("%(who)s stands."),
    "double": _("%(who)s doubles."),
    "split": _("%(who)s splits."),
    "surrender": _("%(who)s surrenders."),
}
#: An offer's answer: (taken, declined).
OFFER_WORDS = {
    "insurance": (_("%(who)s takes insurance."), _("%(who)s declines insurance.")),
    "even_money": (_("%(who)s takes even money."), _("%(who)s declines even money.")),
    "surrender": (_("%(who)s takes early surrender."), _("%(who)s declines early surrender.")),
}


def round_order(rnd) -> tuple[str, ...]:
    """The cards the round `rnd` (a `blackjack.models.Round`) was dealt from, as the live tables compute them:
    its shoe's order, then the discards reshuffled (tests script the shoe in `services._shoe_order`)."""
    from blackjack import services

    return services.round_order(rnd.shoe, rnd.start_position)


def state_for_storage(state: RoundState) -> dict[str, Any]:
    """The engine state as `Round.state` stores it: everything but the shoe."""
    data = state.to_dict()
    del data["shoe"]
    return data


@dataclass
class Step:
    seq: int
    action: dict[str, Any]
    label: str
    cards: list[str]  # dealt during this step, in shoe order
    view: dict[str, Any]  # what everyone at the table saw after it


@dataclass
class Replay:
    steps: list[Step]
    states: list[RoundState]  # states[0] before the first action, states[i] after action i
    dealt: list[str]  # every card of the round, in the order the shoe dealt them
    start_position: int
    end_position: int
    matches_live: bool | None  # None: nothing stored to compare with
    shoe_end: int  # the shoe's card count: positions from here on are its discards, reshuffled
    error: str | None = None

    @property
    def discards_dealt(self) -> int:
        """Cards the round took from the reshuffled discards after running out of the shoe (0 for most)."""
        return max(0, self.end_position - self.shoe_end)

    @property
    def final(self) -> RoundState:
        return self.states[-1]


def replay_round(rnd, actions: list, *, names: dict[int, str] | None = None, order=None) -> Replay:
    """Replay `rnd` (a `blackjack.models.Round` with its shoe) through `actions` (its ActionLog rows, in
    order).

    `names` maps seat numbers to the names shown; `order` is the round's card order (`round_order`) if the
    caller has it.
    An action the engine refuses stops the replay there and is reported in `error`.
    """
    names = names or {}
    order = round_order(rnd) if order is None else order
    state = new_round(
        rules=RuleSet.from_dict(rnd.rules),
        shoe=order,
        position=rnd.start_position,
        seats=rnd.seats,
        min_bet=rnd.min_bet,
        max_bet=rnd.max_bet,
    )
    states = [state]
    steps = [Step(0, {}, gettext("Bets open."), [], spectator_view(state, names))]
    error = None
    for log in actions:
        try:
            after = apply(state, log.action)
        except Refused as exc:
            error = f"action #{log.seq} {log.action} was refused on replay: {exc.message}"
            break
        cards = list(order[state.position : after.position])
        steps.append(
            Step(log.seq, log.action, describe(log.action, after, names), cards, spectator_view(after, names))
        )
        states.append(after)
        state = after
    matches = None
    if error is None and isinstance(rnd.state, dict) and rnd.state.get("phase") == "settled":
        matches = state_for_storage(state) == rnd.state
    elif error is not None:
        matches = False
    return Replay(
        steps=steps,
        states=states,
        dealt=list(order[rnd.start_position : state.position]),
        start_position=rnd.start_position,
        end_position=state.position,
        matches_live=matches,
        shoe_end=len(order) - rnd.start_position,  # after the shoe come its `start_position` discards
        error=error,
    )


def describe(action: dict[str, Any], after: RoundState, names: dict[int, str]) -> str:
    """A logged action in words, in the active language: "Alice (seat 2) doubles."."""
    name = action.get("action")
    seat = action.get("seat")
    if seat is None:
        who = pgettext("blackjack replay: who acted", "The table")
    elif seat in names:
        who = gettext("%(name)s (seat %(seat)s)") % {"name": names[seat], "seat": seat}
    else:
        who = gettext("Seat %(seat)s") % {"seat": seat}
    if name == "bet":
        return gettext("%(who)s bets %(amount)s.") % {"who": who, "amount": action.get("amount")}
    if name == "deal":
        return gettext("Cards are dealt.")
    if name == "timeout":
        return gettext("Time runs out.")
    if name in ("insurance", "even_money") or (name == "surrender" and "accept" in action):
        accepted = action.get("accept", name == "surrender")
        return gettext(OFFER_WORDS[str(name)][0 if accepted else 1]) % {"who": who}
    if name in ACTION_WORDS:
        return gettext(ACTION_WORDS[str(name)]) % {"who": who}
    return f"{who} {name}."


def spectator_view(state: RoundState, names: dict[int, str]) -> dict[str, Any]:
    """The public picture of the round: no shoe, no hole card before it is turned over, no balances."""
    dealer = list(state.dealer_cards)
    if not state.hole_revealed and len(dealer) > 1:
        dealer = [dealer[0]] + [None] * (len(dealer) - 1)
    seats = []
    for number, seat in state.seats.items():
        seats.append(
            {
                "seat": number,
                "player": names.get(number),
                "bet": seat.bet,
                "insurance": seat.insurance,
                "hands": [
                    {
                        "cards": list(hand.cards),
                        "total": hand.total,
                        "soft": hand.soft,
                        "bet": hand.bet,
                        "status": hand.status,
                        "result": hand.result,
                        "payout": hand.payout,
                    }
                    for hand in seat.hands
                ],
            }
        )
    visible = [card for card in dealer if card is not None]
    return {
        "phase": state.phase,
        "turn": list(state.turn) if state.turn else None,
        "dealer": dealer,
        "dealer_total": hand_value(visible)[0] if visible else None,
        "seats": seats,
    }
