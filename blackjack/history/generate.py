"""Fill a database with realistic play, fast: `python manage.py generate_history --users N --rounds M`.

Every generated round is real: it is played by the engine (`new_round` / `apply_in_place`, the live code) on
provably fair shoes (seeds, hashes, cut card, retirement), by players following basic strategy with a
personal error rate, and its rows are the ones live play writes: `Round` (engine state without the shoe,
rules, results), the `ActionLog` that replays it, the history rows (`PlayerRound`, `Mistake`, `PlayerStats`,
`PeriodStats`), and double-entry ledger entries with unbroken balance chains (welcome grants from the issuer,
top-ups when a player runs low, one stake and one payout transfer per seat and round), so `audit_ledger`
stays clean. A shoe still in play at the end keeps its seed secret.

Simplification: live play writes one stake transfer per chip movement (bet, double, split, insurance); the
generator writes one per seat and round for the total stake. The sums and chains are the same kind.

Speed: rows are streamed in batches; on PostgreSQL with `COPY ... FROM STDIN` (psycopg 3), elsewhere with
`bulk_create`. Primary keys are assigned here (from the current maximum) and the sequences reset at the end,
so the run must have the database to itself (no live tables playing meanwhile): the house and issuer
balance chains continue from their current balance.
"""

import datetime
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connection, transaction
from django.utils import timezone

from accounts.avatars import AVATAR_CHOICES
from accounts.models import LedgerEntry, Wallet
from blackjack import services
from blackjack.engine.cards import hand_value
from blackjack.engine.round import allowed_actions, apply_in_place, new_round
from blackjack.engine.rules import PRESETS
from blackjack.engine.shoe import cut_card_index, dealing_order, shuffled_shoe
from blackjack.engine.strategy import PLAYING_ACTIONS, basic_strategy
from blackjack.history.bulk import COLUMNS, Ledger, Writer, next_id, reset_sequences
from blackjack.history.coach import judge
from blackjack.history.recording import add_to_stats, period_starts, player_round_fields
from blackjack.history.records import Mistake, PeriodStats, PlayerRound, PlayerStats
from blackjack.history.replay import state_for_storage
from blackjack.models import ActionLog, Phase, Round, RulePreset, Shoe, Table
from cards.errors import Refused
from cards.fairness import client_seed_of, seed_digests, seed_hash

BATCH_ROUNDS = 5_000


@dataclass
class Player:
    id: int
    username: str
    wallet_id: int
    balance: int
    error_rate: float
    unit: int  # preferred bet, in table minimums


@dataclass
class OpenShoe:
    row: Shoe
    order: tuple[str, ...]


def generate(
    *,
    users: int,
    rounds: int,
    tables: int | None = None,
    days: int = 60,
    seed: int = 1,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Create `users` players and play `rounds` rounds among them over the last `days` days."""
    say = progress or (lambda text: None)
    rng = random.Random(seed)
    started = time.perf_counter()
    now = timezone.now().replace(microsecond=0)
    begin = now - datetime.timedelta(days=days)
    writer = Writer()
    with transaction.atomic():
        # The tables first: opening one funds its float from the house, through the ledger.
        table_rows = _create_tables(tables or max(3, min(200, users // 200)), rng, begin)
        house = Wallet.objects.select_for_update().get(kind=Wallet.Kind.HOUSE)
        issuer = Wallet.objects.select_for_update().get(kind=Wallet.Kind.ISSUER)
        ledger = Ledger(writer, next_id(LedgerEntry), house, issuer)
        players = _create_players(users, rng, begin, ledger)
        say(f"{len(players)} players created")
        stats: dict[int, PlayerStats] = {p.id: PlayerStats(user_id=p.id) for p in players}
        periods: dict[tuple, list[int]] = {}
        play = _Play(writer, ledger, rng, players, table_rows, stats, periods)
        step = (now - begin) / max(rounds, 1)
        for k in range(rounds):
            play.round(table_rows[k % len(table_rows)], begin + step * (k + 1))
            if (k + 1) % BATCH_ROUNDS == 0:
                writer.flush()
                play.flush_shoes()
                say(f"{k + 1:,} rounds ({(k + 1) / (time.perf_counter() - started):,.0f}/s)")
        play.finish()
        for (user_id, period, start), (count, hands, net) in periods.items():
            writer.add(PeriodStats, (user_id, period, start, count, hands, net))
        writer.flush()
        PlayerStats.objects.bulk_create([s for s in stats.values() if s.rounds], batch_size=2000)
        Wallet.objects.bulk_update(
            [Wallet(pk=p.wallet_id, balance=p.balance) for p in players], ["balance"], batch_size=2000
        )
        house.save(update_fields=["balance"])
        issuer.save(update_fields=["balance"])
        _suspend_a_few(players, rng)
        reset_sequences([get_user_model(), Wallet, LedgerEntry, Shoe, Round, ActionLog])
    if connection.vendor == "postgresql":
        say("analyzing the tables (planner statistics for the new rows)")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "rows": dict(writer.written),
        "rounds_per_second": rounds / elapsed if elapsed else None,
    }


def _create_players(count: int, rng: random.Random, begin, ledger: Ledger) -> list[Player]:
    user_model = get_user_model()
    first_user = next_id(user_model)
    first_wallet = next_id(Wallet)
    avatars = [value for value, _ in AVATAR_CHOICES]
    password = make_password(None)  # unusable: generated players cannot log in
    users = [
        user_model(
            pk=first_user + i,
            username=f"gen{first_user + i:06d}",
            display_name=f"Player {first_user + i}",
            avatar=rng.choice(avatars),
            password=password,
            date_joined=begin,
        )
        for i in range(count)
    ]
    user_model.objects.bulk_create(users, batch_size=2000)  # bulk_create sends no signal: wallets follow
    Wallet.objects.bulk_create(
        [
            Wallet(pk=first_wallet + i, kind=Wallet.Kind.PLAYER, user_id=user.pk, balance=0, created_at=begin)
            for i, user in enumerate(users)
        ],
        batch_size=2000,
    )
    players = []
    for i, user in enumerate(users):
        skill = rng.random()
        error_rate = 0.01 + 0.02 * rng.random() if skill < 0.6 else 0.05 + 0.05 * rng.random()
        if skill > 0.9:
            error_rate = 0.15 + 0.15 * rng.random()
        player = Player(
            user.pk, user.username, first_wallet + i, 0, error_rate, rng.choice((1, 1, 2, 2, 5, 10))
        )
        ledger.move(
            player, settings.STARTING_CHIPS, ledger.issuer, LedgerEntry.Kind.GRANT, begin, "Welcome grant"
        )
        players.append(player)
    return players


def _create_tables(count: int, rng: random.Random, begin) -> list[Table]:
    presets = {}
    for name, rules in PRESETS.items():
        presets[name], _ = RulePreset.objects.get_or_create(name=name, defaults={"rules": rules.to_dict()})
    rows = []
    for n in range(count):
        name = rng.choice(list(PRESETS))
        min_bet = rng.choice((5, 10, 10, 25, 100))
        table = services.create_table(
            name=f"{name} #{n + 1}",
            preset=presets[name],
            min_bet=min_bet,
            max_bet=min_bet * 50,
            created_at=begin,
        )
        rows.append(table)
    return rows


class _Play:
    def __init__(self, writer, ledger, rng, players, tables, stats, periods) -> None:
        self.writer = writer
        self.ledger = ledger
        self.rng = rng
        self.players = players
        self.stats = stats
        self.periods = periods
        self.shoes: dict[int, OpenShoe] = {}
        self.retired: list[Shoe] = []
        self.next_shoe = next_id(Shoe)
        self.next_round = next_id(Round)
        self.next_log = next_id(ActionLog)
        self.numbers = {t.pk: 0 for t in tables}
        self.versions = {t.pk: t.version for t in tables}
        self.rules = {t.pk: t.ruleset() for t in tables}

    def _shoe(self, table: Table, at, players: list[Player]) -> OpenShoe:
        current = self.shoes.get(table.pk)
        if current is not None:
            return current
        rules = self.rules[table.pk]
        server_seed = f"{self.rng.getrandbits(256):064x}"
        digests = seed_digests([f"seed-{p.username}" for p in players])
        client_seed = client_seed_of(digests)
        row = Shoe(
            pk=self.next_shoe,
            table_id=table.pk,
            server_seed=server_seed,
            seed_hash=seed_hash(server_seed),
            client_seed=client_seed,
            seat_seeds=digests,
            decks=rules.decks,
            cut_index=cut_card_index(rules.decks, rules.penetration),
            created_at=at,
        )
        self.next_shoe += 1
        order = tuple(shuffled_shoe(server_seed=server_seed, client_seed=client_seed, decks=rules.decks))
        self.shoes[table.pk] = current = OpenShoe(row, order)
        return current

    def _retire(self, table_id: int, at) -> None:
        shoe = self.shoes.pop(table_id)
        shoe.row.retired_at = at
        self.retired.append(shoe.row)

    def round(self, table: Table, at) -> None:
        rng = self.rng
        count = rng.choices((1, 2, 3), weights=(40, 35, 25))[0]
        seated = rng.sample(self.players, count)
        seats = sorted(rng.sample(range(1, table.seats + 1), count))
        by_seat = dict(zip(seats, seated, strict=True))
        for player in seated:
            # Enough for the biggest bet this player makes, doubled and split (a top-up, as the daily grant).
            need = 8 * min(table.max_bet, 2 * table.min_bet * player.unit)
            if player.balance < need:
                grant = max(settings.STARTING_CHIPS - player.balance, need)
                self.ledger.move(player, grant, self.ledger.issuer, LedgerEntry.Kind.GRANT, at, "Daily grant")
        shoe = self._shoe(table, at, seated)
        try:
            self._play(table, at, shoe, by_seat, shoe.order)
        except Refused as exc:
            if exc.code != "shoe_exhausted" or shoe.row.position == 0:
                raise
            # Nothing of the round was written: deal it again, going on with the reshuffled discards as the
            # live tables do when a round runs out of cards.
            row = shoe.row
            order = dealing_order(
                shoe.order,
                row.position,
                server_seed=row.server_seed,
                client_seed=row.client_seed,
                nonce=row.nonce,
            )
            self._play(table, at, shoe, by_seat, order)

    def _play(
        self, table: Table, at, shoe: OpenShoe, by_seat: dict[int, Player], order: tuple[str, ...]
    ) -> None:
        rules = self.rules[table.pk]
        strategy = basic_strategy(rules)
        rng = self.rng
        start = shoe.row.position
        state = new_round(
            rules=rules,
            shoe=order,
            position=start,
            seats=list(by_seat),
            min_bet=table.min_bet,
            max_bet=table.max_bet,
        )
        log: list[tuple[dict, int | None, int | None]] = []
        decisions = []

        def act(action: dict, seat: int | None) -> None:
            if seat is not None and state.phase in ("insurance", "playing"):
                decision = judge(state, action)
                if decision is not None:
                    decisions.append(decision)
            apply_in_place(state, action)
            log.append((action, by_seat[seat].id if seat is not None else None, seat))

        for seat, player in by_seat.items():
            amount = min(table.max_bet, table.min_bet * player.unit * rng.choice((1, 1, 1, 2)))
            act({"action": "bet", "seat": seat, "amount": amount}, seat)
        act({"action": "deal"}, None)
        while state.phase == "insurance":
            seat, offer = next((n, s.offers[0]) for n, s in state.seats.items() if s.offers)
            player = by_seat[seat]
            if offer == "surrender":
                accept = strategy.surrenders_early(state.seats[seat].hands[0].cards, state.dealer_cards[0])
            else:
                accept = False
            if rng.random() < player.error_rate:
                accept = not accept
            act({"action": offer, "seat": seat, "accept": accept}, seat)
        while state.phase == "playing":
            seat, index = state.turn
            player = by_seat[seat]
            allowed = [a for a in allowed_actions(state, seat) if a in PLAYING_ACTIONS]
            choice = strategy.decide(state.seats[seat].hands[index].cards, state.dealer_cards[0], allowed)
            if len(allowed) > 1 and rng.random() < player.error_rate:
                choice = rng.choice([a for a in allowed if a != choice])
            act({"action": choice, "seat": seat}, seat)
        self._write(table, at, shoe, state, start, by_seat, log, decisions)

    def _write(self, table, at, shoe, state, start, by_seat, log, decisions) -> None:
        round_id = self.next_round
        self.next_round += 1
        self.numbers[table.pk] += 1
        results = []
        for number, seat_state in state.seats.items():
            player = by_seat[number]
            results.append(
                {
                    "seat": number,
                    "user_id": player.id,
                    "username": player.username,
                    "stake": seat_state.stake,
                    "returned": seat_state.returned,
                    "net": seat_state.returned - seat_state.stake,
                    "insurance": seat_state.insurance,
                    "hands": [
                        {"cards": h.cards, "bet": h.bet, "result": h.result, "payout": h.payout}
                        for h in seat_state.hands
                    ],
                }
            )
            memo = f"seat {number}"
            self.ledger.move(
                player,
                -seat_state.stake,
                self.ledger.house,
                LedgerEntry.Kind.BET,
                at,
                memo,
                round_id,
                table.pk,
            )
            if seat_state.returned:
                pushes = all(h.result == "push" for h in seat_state.hands) and not seat_state.insurance
                kind = LedgerEntry.Kind.REFUND if pushes else LedgerEntry.Kind.PAYOUT
                self.ledger.move(
                    player, seat_state.returned, self.ledger.house, kind, at, memo, round_id, table.pk
                )
        dealer_total, _ = hand_value(state.dealer_cards)
        stored = state_for_storage(state)
        version = self.versions[table.pk] + len(log) + 1
        self.versions[table.pk] = version
        self.writer.add(
            Round,
            (
                round_id, table.pk, self.numbers[table.pk], shoe.row.pk, start, list(by_seat), stored,
                state.rules.to_dict(), table.min_bet, table.max_bet, Phase.SETTLED, version, None,
                at - datetime.timedelta(seconds=40), at, False,
                {"seats": results, "dealer": {"cards": state.dealer_cards, "total": dealer_total}}, len(log),
            ),
        )  # fmt: skip
        for seq, (action, user_id, seat) in enumerate(log, start=1):
            self.writer.add(
                ActionLog,
                (
                    self.next_log,
                    round_id,
                    table.pk,
                    seq,
                    user_id,
                    seat,
                    action,
                    version - len(log) + seq - 1,
                    at,
                ),
            )
            self.next_log += 1
        shoe.row.position = state.position
        hands_by_seat = {s["seat"]: s["hands"] for s in stored["seats"]}
        settled = SimpleNamespace(pk=round_id, table_id=table.pk, settled_at=at)
        by_user: dict[int, list[dict]] = {}
        for entry in results:
            by_user.setdefault(entry["user_id"], []).append(entry)
        for user_id, entries in by_user.items():
            numbers = [e["seat"] for e in entries]
            own = [d for d in decisions if d.seat in numbers]
            fields = player_round_fields(
                settled, user_id, entries, [h for n in numbers for h in hands_by_seat[n]], own
            )
            row = SimpleNamespace(**fields)
            self.writer.add(PlayerRound, tuple(fields[name] for name in COLUMNS[PlayerRound]))
            for d in own:
                if d.deviates:
                    self.writer.add(
                        Mistake,
                        (user_id, round_id, at, d.seat, d.hand, "".join(d.cards), d.dealer_up, d.action,
                         d.best, d.bet, d.ev_cost),
                    )  # fmt: skip
            add_to_stats(self.stats[user_id], row)
            for period, start_day in period_starts(at).items():
                totals = self.periods.setdefault((user_id, period, start_day), [0, 0, 0])
                totals[0] += 1
                totals[1] += row.hands
                totals[2] += row.net
        if shoe.row.cut_index is None or shoe.row.position >= min(shoe.row.cut_index, len(shoe.order)):
            self._retire(table.pk, at)

    def flush_shoes(self) -> None:
        """Write the shoes retired since the last batch (rounds refer to them; the check is deferred)."""
        Shoe.objects.bulk_create(self.retired, batch_size=2000)
        self.retired.clear()

    def finish(self) -> None:
        self.retired.extend(shoe.row for shoe in self.shoes.values())  # still in play: seeds stay secret
        self.flush_shoes()
        for table_id, version in self.versions.items():
            Table.objects.filter(pk=table_id).update(version=version)


def _suspend_a_few(players: list[Player], rng: random.Random) -> None:
    """A handful of accounts are suspended, as on a live site: they drop off the leaderboards."""
    chosen = [p.id for p in rng.sample(players, max(1, len(players) // 200))]
    get_user_model().objects.filter(pk__in=chosen).update(suspended=True)
