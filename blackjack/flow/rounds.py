"""Rounds: opening one (with a new shoe when needed), reshaping a betting round, closing the betting window
into the deal, following the engine's phase, settling, and voiding a round that cannot go on."""

from datetime import datetime, timedelta
from typing import Any

from blackjack.engine import round as engine_round
from blackjack.engine.cards import hand_value
from blackjack.engine.round import RoundState
from blackjack.engine.rules import RuleSet
from blackjack.engine.shoe import cut_card_index
from blackjack.flow import seats
from blackjack.flow.state import Payments, Player, RoundInfo, ShoeInfo, Void
from blackjack.flow.texts import count, is_blackjack, name, rank, result_text, window_text
from blackjack.flow.work import BETTING, INSURANCE, PLAYING, SETTLED, WAITING, Broken, Work
from cards.errors import Refused
from cards.fairness import client_seed_of, seed_digests, seed_hash

MAX_MISSED_ROUNDS = 3
#: A player who sits down while bets are open has at least this long to bet (or the window's whole length,
#: if that is shorter): the betting deadline moves out for them, never in.
NEWCOMER_BETTING_SECONDS = 10
#: The dealer's turn is shown one card at a time (the hole card turned, then each draw), this far apart,
#: before the round's results: viewers see it as frames of the settled round (`dealer_turn_cards`).
DEALER_CARD_SECONDS = 0.75


def dealer_turn_cards(state: RoundState) -> int:
    """How many dealer cards the dealer's turn of a settled round turns over, one frame each: every card after
    the upcard when the dealer played; none when its turn decided nothing (every hand bust, surrendered or
    paid already: a blackjack, even money) or a blackjack was found at the peek, where the round shows its
    results at once (the hole card turned in the settled state)."""
    cards = state.dealer_cards
    if state.phase != SETTLED or len(cards) < 2:
        return 0
    if state.rules.dealer_peek:
        hands = (hand for seat in state.seats.values() for hand in seat.hands)
        if not any(hand.status in ("stood", "doubled") for hand in hands):
            return 0
    return len(cards) - 1


def reveal_seconds(state: RoundState) -> float:
    """How long the dealer's turn of the settled round `state` is shown before its results."""
    return dealer_turn_cards(state) * DEALER_CARD_SECONDS


def reveal_end(settled_at: datetime, state: RoundState) -> datetime:
    """When the results of a round settled at `settled_at` are shown (and its ready window begins)."""
    return settled_at + timedelta(seconds=reveal_seconds(state))


def open_round(work: Work) -> None:
    """Start the next betting round for the seated players, or wait when nobody is seated."""
    table, config = work.table, work.table.settings
    numbers = work.occupied()
    if not numbers:
        go_waiting(work)
        return
    rules = config.rules
    shoe = table.shoe
    if shoe is not None and shoe.decks != rules.decks:
        retire_shoe(work, shoe)
        shoe = None
    if shoe is None:
        shoe = new_shoe(work, rules)
    state = engine_round.new_round(
        rules=rules,
        shoe=work.cards(shoe, shoe.position),
        position=shoe.position,
        seats=numbers,
        min_bet=config.min_bet,
        max_bet=config.max_bet,
    )
    work.close_round()
    table.last_round_number += 1
    table.round = RoundInfo(
        id=None,
        number=table.last_round_number,
        shoe=shoe,
        start_position=shoe.position,
        seats=numbers,
        rules=rules.to_dict(),
        min_bet=config.min_bet,
        max_bet=config.max_bet,
        phase=BETTING,
        started_at=work.now,
        engine=state,
    )
    table.phase = BETTING
    work.set_deadline(config.betting_seconds)
    for seat in work.seats.values():
        seat.ready = False
    work.event("round", f"Round {table.round.number}: place your bets ({config.min_bet}-{config.max_bet}).")


def go_waiting(work: Work) -> None:
    work.table.phase = WAITING
    work.set_deadline(None)
    if work.in_round:
        end_empty_round(work)


def end_empty_round(work: Work) -> None:
    """A round closes without a single bet: nothing was dealt and no chips moved."""
    rnd = work.round
    rnd.settled_at = work.now
    rnd.phase = SETTLED
    rnd.deadline = None
    rnd.results = {"seats": [], "empty": True}


def reseat_betting_round(work: Work) -> None:
    """Rebuild the betting round for the seats occupied now (someone sat down or left before the deal), with
    the bets already placed (the action log replays to the same state: a seat with a bet cannot leave)."""
    numbers = work.occupied()
    if not numbers:
        go_waiting(work)
        return
    rnd, old = work.round, work.engine
    try:
        state = engine_round.new_round(
            rules=RuleSet.from_dict(rnd.rules),
            shoe=old.shoe,
            position=rnd.start_position,
            seats=numbers,
            min_bet=rnd.min_bet,
            max_bet=rnd.max_bet,
        )
        for number in numbers:
            placed = old.seats.get(number)
            if placed is not None and placed.bet:
                engine_round.apply_in_place(state, {"action": "bet", "seat": number, "amount": placed.bet})
    except Refused as exc:
        raise Broken(rnd, f"replay of the betting round failed: {exc}") from None
    work.engine = state
    rnd.seats = numbers


def give_newcomer_time(work: Work) -> None:
    """Someone sat down during betting: leave them `NEWCOMER_BETTING_SECONDS` to bet, at most the betting
    window's normal length."""
    table = work.table
    seconds = min(NEWCOMER_BETTING_SECONDS, table.settings.betting_seconds)
    earliest = work.now + timedelta(seconds=seconds)
    if table.deadline is not None and table.deadline < earliest:
        table.deadline = earliest


def new_shoe(work: Work, rules: RuleSet) -> ShoeInfo:
    """Shuffle the shoe whose server seed the table drew ahead (its hash shown since), with the client seed of
    the players seated now, and take the next shoe's seed from the command's fresh seeds."""
    table = work.table
    digests = seed_digests(
        [seat.client_seed for seat in work.seats.values() if seat.player and seat.client_seed]
    )
    shoe = ShoeInfo(
        id=None,
        table_id=table.id,
        server_seed=table.next_server_seed,
        seed_hash=seed_hash(table.next_server_seed),
        client_seed=client_seed_of(digests),
        seat_seeds=digests,
        decks=rules.decks,
        cut_index=cut_card_index(rules.decks, rules.penetration),
        created_at=work.now,
    )
    table.next_server_seed = work.seeds.server
    table.shoe = shoe
    work.touch_shoe(shoe)
    work.event(
        "shoe",
        f"New shoe of {count(rules.decks, 'deck')}; seed hash {shoe.seed_hash[:16]}..., client seed "
        f"{shoe.client_seed[:16]}... from {count(len(digests), 'player seed')}.",
    )
    return shoe


def retire_shoe(work: Work, shoe: ShoeInfo, *, announce: bool = True) -> None:
    shoe.retired_at = work.now
    work.touch_shoe(shoe)
    if work.table.shoe is shoe:
        work.table.shoe = None
    if announce:
        work.event("shoe", f"Shoe retired; its server seed is now revealed ({shoe.server_seed[:16]}...).")


def apply(
    work: Work, action: dict[str, Any], *, player: Player | None = None, seat: int | None = None
) -> None:
    """Apply one engine action, move the chips its stakes changed, and log it."""
    before = {number: seat_state.stake for number, seat_state in work.engine.seats.items()}
    try:
        new = engine_round.apply(work.engine, action)
    except Refused as exc:
        if exc.code == "shoe_exhausted":
            raise Broken(work.round, exc.message) from None
        raise Refused(exc.code, exc.message) from None
    for number, seat_state in new.seats.items():
        delta = seat_state.stake - before.get(number, 0)
        if delta:
            work.move(number, delta, f"seat {number}" if delta > 0 else f"seat {number}: bet lowered")
    work.engine = new
    work.log(action, player=player, seat=seat)


def after_engine(work: Work) -> None:
    """Follow the engine's phase: set the window's deadline, or settle."""
    table, config = work.table, work.table.settings
    phase = work.engine.phase
    if phase == INSURANCE:
        if table.phase != INSURANCE:
            table.phase = INSURANCE
            work.set_deadline(config.insurance_seconds)
            work.event("dealer", window_text(work.engine))
    elif phase == PLAYING:
        table.phase = PLAYING
        work.set_deadline(config.turn_seconds)
    elif phase == SETTLED:
        settle(work)


def betting_complete(work: Work) -> bool:
    """Someone has bet and every seated player the table waits for (not sitting out) has bet."""
    bets = work.engine.seats
    if not any(seat_state.bet for seat_state in bets.values()):
        return False
    return all(bets[n].bet or work.seats[n].sitting_out for n in work.occupied() if n in bets)


def close_betting(work: Work, *, timed_out: bool) -> None:
    """Deal (seats without a bet sit out), or end the round empty when nobody bet.

    A seat that missed the window counts a missed round and, if others did bet, sits out: later betting
    windows and ready checks do not wait for it until its player bets or says ready. When nobody bet, the
    table waited for everyone alike, so nobody is marked sitting out (the next window waits for all again)."""
    bettors = {n for n, seat_state in work.engine.seats.items() if seat_state.bet}
    for number in work.occupied():
        seat = work.seats[number]
        if number in bettors:
            seat.missed_rounds = 0
            continue
        if number not in work.engine.seats:
            continue
        seat.missed_rounds += 1
        seat.sitting_out = seat.sitting_out or bool(bettors)
        if seat.missed_rounds >= MAX_MISSED_ROUNDS:
            seats.stand_up(work, seat, f"missed {MAX_MISSED_ROUNDS} rounds and leaves")
        elif timed_out and bettors:
            work.event("timeout", f"{name(seat.player)} sits out this round (seat {number}).")
    if not bettors:
        end_empty_round(work)
        work.event("round", f"Round {work.round.number}: no bets.")
        open_round(work)
        return
    apply(work, {"action": "timeout" if timed_out else "deal"})
    work.event("deal", f"Cards are dealt. Dealer shows {rank(work.engine.dealer_cards[0])}.")
    for number, seat_state in work.engine.seats.items():
        if seat_state.hands and seat_state.hands[0].status == "blackjack":
            work.event("deal", f"{name(work.owner(number))} has blackjack (seat {number}).")
    after_engine(work)


def settle(work: Work) -> None:
    """Pay the settled round, record its results, retire the shoe at the cut card, free leaving seats and open
    the ready window (or wait, if nobody is left). The round's history is recorded after commit."""
    table, rnd, state = work.table, work.round, work.engine
    dealer_total, _ = hand_value(state.dealer_cards)
    if dealer_total > 21:
        work.event("dealer", f"Dealer busts with {dealer_total}.")
    else:
        work.event(
            "dealer", f"Dealer has {'blackjack' if is_blackjack(state.dealer_cards) else dealer_total}."
        )
    results, payments = [], []
    for number, seat_state in state.seats.items():
        if not seat_state.stake:
            continue
        player = work.owner(number)
        assert player is not None  # a seat with a stake is freed only after the round is settled
        if seat_state.returned:
            pushes = all(hand.result == "push" for hand in seat_state.hands) and not seat_state.insurance
            payments.append(
                (player.id, seat_state.returned, "refund" if pushes else "payout", f"seat {number}")
            )
        net = seat_state.returned - seat_state.stake
        results.append(
            {
                "seat": number,
                "user_id": player.id,
                "username": player.username,
                "stake": seat_state.stake,
                "returned": seat_state.returned,
                "net": net,
                "insurance": seat_state.insurance,
                "hands": [
                    {"cards": hand.cards, "bet": hand.bet, "result": hand.result, "payout": hand.payout}
                    for hand in seat_state.hands
                ],
            }
        )
        work.event("result", result_text(player, number, seat_state, net))
    if payments:
        work.out.payments.append(Payments(rnd, payments))
    rnd.results = {"seats": results, "dealer": {"cards": state.dealer_cards, "total": dealer_total}}
    rnd.settled_at = work.now
    rnd.phase = SETTLED
    rnd.deadline = None
    work.out.settled = rnd
    shoe = rnd.shoe
    shoe.position = state.position
    shoe_cards = len(state.shoe) - state.start_position  # the rest of `state.shoe` is the reshuffled discards
    if shoe.cut_index is None or shoe.position >= min(shoe.cut_index, shoe_cards):
        retire_shoe(work, shoe)
    else:
        work.touch_shoe(shoe)
    seats.free_seats_after_round(work, state.seats)
    if work.occupied():
        # The ready window begins once the dealer's turn has been shown: players get all of it.
        table.phase = SETTLED
        table.deadline = reveal_end(work.now, state) + timedelta(seconds=table.settings.ready_seconds)
    else:
        go_waiting(work)


def void(work: Work, command: Void) -> bool:
    """Void a round that cannot go on: refund every net stake, retire its shoe (its position is unknown) and,
    if it is the table's current round, open the next one. False if the round was over already."""
    rnd = work.table.round
    current = rnd is not None and rnd.id == command.round.id
    if rnd is None or not current:
        rnd = command.round.copy(command.round.shoe.copy())
    if rnd.is_over:
        return False
    refunds = sorted(command.refunds.items())
    if refunds:
        work.out.payments.append(
            Payments(rnd, [(user, amount, "refund", "void") for user, amount in refunds])
        )
    rnd.voided = True
    rnd.settled_at = work.now
    rnd.phase = SETTLED
    rnd.deadline = None
    rnd.results = {"voided": True, "reason": command.reason[:500], "refunds": {str(u): a for u, a in refunds}}
    work.out.rounds.append(rnd)
    if rnd.shoe.retired_at is None:
        retire_shoe(work, rnd.shoe, announce=False)
    work.event("round", f"Round {rnd.number} was voided; every stake was refunded.", rnd)
    if current:
        seats.free_seats_after_round(work, rnd.seats)
        open_round(work)
    return True
