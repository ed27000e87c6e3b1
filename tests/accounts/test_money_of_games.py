"""Money keyed by game: each game's table has a float of its own (Durak table N and blackjack table N never
share one), every ledger row of play names its game, the daily grant counts every game's unsettled stakes,
the audit reports per game, and the migration moves the Durak rows a database already holds."""

import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from accounts import selectors, services
from accounts.audit import audit_ledger
from accounts.models import LedgerEntry, Wallet
from blackjack.models import Table
from durak.models import DurakTable
from tests.blackjack.conftest import act, balance, make_table  # noqa: F401  (fixtures)
from tests.durak.live.conftest import open_durak, play_out, seat_and_start  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


def same_ids(make_table, open_durak) -> tuple[Table, DurakTable]:  # noqa: F811
    """A blackjack table and a Durak table with the same id."""
    blackjack, durak = make_table(), open_durak(stake=100)
    while blackjack.pk != durak.pk:
        if blackjack.pk < durak.pk:
            blackjack = make_table()
        else:
            durak = open_durak(stake=100)
    return blackjack, durak


def test_durak_table_n_and_blackjack_table_n_never_share_a_wallet(
    make_table,  # noqa: F811
    open_durak,  # noqa: F811
    act,  # noqa: F811
    alice,
    bob,
):
    blackjack, durak = same_ids(make_table, open_durak)
    act(blackjack, alice, "sit", seat=1)
    act(blackjack, alice, "bet", amount=40)
    blackjack_float = Wallet.objects.get(kind="float", game="blackjack", table_ref=blackjack.pk)
    held = blackjack_float.balance

    actor = seat_and_start(durak, alice, bob)
    durak_float = Wallet.objects.get(kind="float", game="durak", table_ref=durak.pk)
    assert durak_float.pk != blackjack_float.pk
    assert durak_float.balance == 200  # both stakes, in Durak's own float
    play_out(actor, {0: alice, 1: bob})
    assert Wallet.objects.get(pk=durak_float.pk).balance == 0  # the pot went back to the players
    assert Wallet.objects.get(pk=blackjack_float.pk).balance == held  # untouched by Durak's pot
    durak_rows = LedgerEntry.objects.filter(game="durak", table_ref=durak.pk)
    assert durak_rows.exists()
    assert set(durak_rows.exclude(wallet__kind="player").values_list("wallet", flat=True)) == {durak_float.pk}
    assert not LedgerEntry.objects.filter(wallet=blackjack_float, game="durak").exists()
    report = audit_ledger()
    assert report.ok
    assert report.games["durak"] == {"players": 0, "floats": 0}  # a pot only moves chips between players
    assert report.games["blackjack"]["players"] == -40  # alice's bet, still in play


def test_chips_staked_at_durak_count_for_the_daily_grant(
    open_durak,  # noqa: F811
    alice,
    balance,  # noqa: F811
    django_user_model,
):
    # An account old enough to stake this much (a new one's stakes are limited: `accounts.limits`).
    django_user_model.objects.filter(pk=alice.pk).update(date_joined=timezone.now() - timedelta(days=30))
    table = open_durak(stake=9_500)
    seat_and_start(table, alice, bots=1)
    assert balance(alice) == 500
    assert selectors.chips_in_play(user_id=alice.pk) == 9_500
    with pytest.raises(services.DailyGrantRefused) as refused:
        services.claim_daily_grant(user=alice)
    assert refused.value.code == "balance_too_high"
    assert "9,500 of them in play" in refused.value.message


def test_a_table_is_named_by_its_game_and_its_id(alice):
    for game in (None, "", "not a name", 7):
        with pytest.raises(services.WalletError) as refused:
            services.stake(user=alice, amount=10, game=game, table_ref=3)
        assert refused.value.code == "bad_reference"
    with pytest.raises(services.WalletError):
        services.stake(user=alice, amount=10, game="durak")  # a game's chips move at one of its tables


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_the_durak_rows_a_database_holds(django_user_model):
    before = [("accounts", "0005_user_show_mistakes_preferences"), ("durak", "0005_table_next_server_seed")]
    before.append(("tables", "0011_presence_in_memory"))
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    try:
        user_ids = [_player(old, name) for name in ("alice", "bob")]
        OldWallet = old.get_model("accounts", "Wallet")
        OldTable, OldGame = old.get_model("durak", "DurakTable"), old.get_model("durak", "DurakGame")
        table = OldTable.objects.create(name="old", seats=2, stake=100)
        # Before: a blackjack table's float with the same id, funded; Durak's stakes went into it.
        shared = OldWallet.objects.create(kind="float", table_ref=table.pk, balance=0)
        _move(old, shared, None, -1_000, kind="float", memo="Float funded")
        finished = OldGame.objects.create(
            table=table,
            number=1,
            players=user_ids,
            state={},
            first_version=1,
            version=9,
            match={},
            server_seed="a" * 64,
            server_seed_hash="b" * 64,
            client_seed="c",
            stake=100,
            pot=200,
            finished=True,
        )
        playing = OldGame.objects.create(
            table=table,
            number=2,
            players=user_ids,
            state={},
            first_version=10,
            version=11,
            match={},
            server_seed="a" * 64,
            server_seed_hash="b" * 64,
            client_seed="c",
            stake=100,
            pot=200,
        )
        for user_id in user_ids:
            _move(old, shared, user_id, -100, kind="bet", memo=f"Durak game {finished.pk} stake")
        _move(old, shared, user_ids[0], 200, kind="payout", memo=f"Durak game {finished.pk}")
        for user_id in user_ids:
            _move(old, shared, user_id, -100, kind="bet", memo=f"Durak game {playing.pk} stake")
        blackjack_bet = _move(old, shared, user_ids[1], -10, kind="bet", memo="seat 1", round_ref=5)

        call_command("migrate", verbosity=0)

        assert Wallet.objects.get(pk=shared.pk).game == "blackjack"
        own = Wallet.objects.get(kind="float", game="durak", table_ref=table.pk)
        assert own.balance == 200  # the pot of the game in play moved to Durak's own float
        assert Wallet.objects.get(pk=shared.pk).balance == 1_000 + 10
        durak_rows = LedgerEntry.objects.filter(memo__startswith="Durak game")
        assert set(durak_rows.values_list("game", flat=True)) == {"durak"}
        assert LedgerEntry.objects.get(pk=blackjack_bet).game == "blackjack"
        assert set(LedgerEntry.objects.filter(kind="float").values_list("game", flat=True)) == {
            "blackjack",
            "durak",
        }
        assert audit_ledger().ok
    finally:
        call_command("migrate", verbosity=0)


def _player(apps, username: str) -> int:
    """A user with a wallet and the welcome grant, as the site made them before."""
    user = apps.get_model("accounts", "User").objects.create(username=username)
    Wallet = apps.get_model("accounts", "Wallet")
    wallet = Wallet.objects.create(kind="player", user=user, balance=0)
    issuer = Wallet.objects.get_or_create(kind="issuer")[0]
    _transfer(apps, wallet, issuer, 10_000, kind="grant", memo="Welcome grant")
    return user.pk


def _move(apps, float_wallet, user_id, player_delta, *, kind, memo, round_ref=None) -> int:
    """Chips between a player (or, for a float's funding, the house) and a float, as the wallet wrote them
    before tables had games: the id of the player's (or the house's) row."""
    Wallet = apps.get_model("accounts", "Wallet")
    if user_id is None:
        other = Wallet.objects.get_or_create(kind="house")[0]
    else:
        other = Wallet.objects.get(kind="player", user_id=user_id)
    return _transfer(
        apps,
        other,
        float_wallet,
        player_delta,
        kind=kind,
        memo=memo,
        round_ref=round_ref,
        table_ref=float_wallet.table_ref,
    )


def _transfer(apps, to, source, amount, *, kind, memo, round_ref=None, table_ref=None) -> int:
    LedgerEntry = apps.get_model("accounts", "LedgerEntry")
    transfer, ids = uuid.uuid4(), []
    for wallet, delta in ((to, amount), (source, -amount)):
        wallet.refresh_from_db()
        wallet.balance += delta
        wallet.save()
        row = LedgerEntry.objects.create(
            wallet=wallet,
            transfer=transfer,
            kind=kind,
            amount=delta,
            balance_after=wallet.balance,
            table_ref=table_ref,
            round_ref=round_ref,
            memo=memo,
        )
        ids.append(row.pk)
    return ids[0]
