"""The simulator: real shoes, determinism across processes, the CLI's output and errors."""

import hashlib
import hmac
import json
import subprocess
import sys

import pytest

import blackjack.engine._play as play
import blackjack.engine.simulate as simulator
from blackjack.engine import RuleSet, shuffled_shoe

TIMING_FIELDS = {"rounds_per_second", "rounds_per_cpu_second", "seconds"}


def documented_shuffle(server_seed: str, client_seed: str, decks: int, nonce: int, limit_of) -> list[str]:
    """The shoe module's documented algorithm, with the rejection limit as a parameter."""
    key = bytes.fromhex(server_seed)
    stream = []
    counter = 0

    def number() -> int:
        nonlocal counter
        if not stream:
            block = hmac.new(key, f"{client_seed}:{nonce}:{counter}".encode(), hashlib.sha256).digest()
            counter += 1
            stream.extend(int.from_bytes(block[k : k + 4], "big") for k in range(0, 32, 4))
        return stream.pop(0)

    ranks, suits = "A23456789TJQK", "shdc"
    cards = [rank + suit for rank in ranks for suit in suits] * decks
    for i in range(len(cards) - 1, 0, -1):
        x = number()
        while x >= limit_of(i):
            x = number()
        j = x % (i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def seed_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_fast_shuffle_is_the_provably_fair_shoe(decks):
    for nonce in range(5):
        for client_seed in ("simulate", "player seeds: ünïcode"):
            server_seed = seed_of(f"{decks}:{nonce}")
            expected = shuffled_shoe(
                server_seed=server_seed, client_seed=client_seed, decks=decks, nonce=nonce
            )
            assert play.fast_shuffled_shoe(server_seed, client_seed, decks, nonce) == tuple(expected)


def test_fast_shuffle_rejection_path(monkeypatch):
    # Real rejections are too rare to meet (below 1e-7 per number): lower the limits so that about half the
    # numbers are rejected and compare with the documented algorithm under the same limits.
    halved = [limit // 2 for limit in play.LIMITS]
    monkeypatch.setattr(play, "LIMITS", halved)
    for decks in (1, 6):
        server_seed = seed_of(f"reject {decks}")
        expected = documented_shuffle(server_seed, "c", decks, 3, lambda i: halved[i])
        assert play.fast_shuffled_shoe(server_seed, "c", decks, 3) == tuple(expected)
    real = documented_shuffle(seed_of("x"), "c", 2, 0, lambda i: 2**32 - 2**32 % (i + 1))
    assert real == shuffled_shoe(server_seed=seed_of("x"), client_seed="c", decks=2, nonce=0)


def test_same_seed_same_figures_in_one_or_two_processes(monkeypatch):
    monkeypatch.setattr(simulator, "CHUNK_ROUNDS", 1_000)  # several chunks from few rounds
    rules = RuleSet(penetration=0.5)
    one = simulator.simulate(rules, 3_500, seed=42)
    again = simulator.simulate(rules, 3_500, seed=42)
    two = simulator.simulate(rules, 3_500, seed=42, processes=2)
    other = simulator.simulate(rules, 3_500, seed=43)

    def figures(result):
        return {key: value for key, value in result.items() if key not in TIMING_FIELDS}

    assert figures(one) == figures(again) == figures(two)
    assert figures(one) != figures(other)
    assert one["rounds"] == 3_500


def test_penetration_zero_deals_a_fresh_shoe_every_round():
    result = simulator.simulate(RuleSet(penetration=0), 300, seed="fresh")
    assert result["shoes"] == 300
    deep = simulator.simulate(RuleSet(decks=6, penetration=0.9), 300, seed="fresh")
    assert deep["shoes"] < 15  # about 54 rounds per shoe


def test_many_seats_on_one_deck_deal_on_from_the_discards_when_the_shoe_runs_out():
    result = simulator.simulate(RuleSet(decks=1, penetration=0.9), 400, seed=1, seats=7)
    assert result["rounds"] == 400
    assert result["seats"] == 7
    assert result["ran_out_rounds"] > 0
    assert result["voided_rounds"] == 0
    assert 0.02 < result["natural_rate"] < 0.08


@pytest.mark.parametrize(
    "change",
    [
        {"surrender": "early"},
        {"dealer_peek": False, "original_bets_only": True},
        {"dealer_peek": False, "decks": 8},
        {"charlie": 5, "suited_678_bonus": "2:1"},
        {"resplit_aces": True, "hit_split_aces": True},
        {"max_split_hands": 1, "blackjack_payout": "2:1"},
        {
            "decks": 1,
            "dealer_hits_soft_17": True,
            "double_on": "10-11",
            "max_split_hands": 2,
            "surrender": "none",
        },
    ],
    ids=str,
)
def test_every_rule_path_plays_through(change):
    rules = RuleSet(**change)
    result = simulator.simulate(rules, 1_500, seed="paths", seats=3)
    assert result["rounds"] == 1_500
    assert result["rules"] == rules.to_dict()
    # Far too few rounds to test the edge itself: only that the figures are sane.
    assert abs(result["house_edge"] - result["computed_house_edge"]) < 5 * result["stderr"]
    assert 0.5 < result["std_per_round"] < 1.5  # per round of three seats, in initial bets
    assert (result["surrender_rate"] > 0) == (rules.surrender != "none")


def test_progress_is_reported_after_each_chunk(monkeypatch):
    monkeypatch.setattr(simulator, "CHUNK_ROUNDS", 100)
    seen = []
    simulator.simulate("Downtown", 350, seed=5, progress=seen.append)
    assert seen == [100, 200, 300, 350]


def test_compare_identical_rules_is_exactly_zero():
    result = simulator.compare(RuleSet(), RuleSet(penetration=0.5), 500, seed=9)
    assert result["effect"] == 0
    assert result["stderr"] == 0
    assert result["base"]["house_edge"] == result["variant"]["house_edge"]


def test_bad_arguments_of_the_python_api():
    with pytest.raises(ValueError, match="rounds"):
        simulator.simulate(RuleSet(), 0, seed=1)
    with pytest.raises(ValueError, match="seats"):
        simulator.simulate(RuleSet(), 10, seed=1, seats=8)
    with pytest.raises(ValueError, match="processes"):
        simulator.simulate(RuleSet(), 10, seed=1, processes=0)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "blackjack.engine.simulate", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_json_output_shape():
    done = run_cli("--rules", "European", "--rounds", "2000", "--seed", "cli", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for key in (
        "rounds",
        "house_edge",
        "stderr",
        "natural_rate",
        "rounds_per_second",
        "rules",
        "computed_house_edge",
    ):
        assert key in result
    assert result["rounds"] == 2000
    assert result["rules"] == RuleSet(dealer_peek=False, double_on="9-11", surrender="none").to_dict()
    assert isinstance(result["house_edge"], float)
    assert result["stderr"] > 0
    assert done.stderr == ""  # no progress bar when stderr is not a terminal


def test_cli_readable_output_and_json_rules(capsys):
    assert simulator.main(["--rules", '{"decks": 2, "charlie": 5}', "--rounds", "500", "--seats", "2"]) == 0
    out = capsys.readouterr().out
    assert "House edge:" in out
    assert "2 decks" in out
    assert "5-card charlie" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "Nowhere Special"], "unknown preset"),
        (["--rules", '{"decks": 9}'], "decks must be"),
        (["--rules", '{"decks": 2'], "not valid JSON"),
        (["--rules", '{"colour": "red"}'], "unknown rule field"),
        (["--rounds", "0"], "--rounds must be at least 1"),
        (["--seats", "8"], "--seats must be 1 to 7"),
        (["--processes", "0"], "--processes must be at least 1"),
    ],
)
def test_cli_bad_arguments_exit_2_with_a_clear_message(capsys, args, message):
    with pytest.raises(SystemExit) as exited:
        simulator.main([*args, "--rounds", "10"] if "--rounds" not in args else args)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


def test_cli_bad_rules_from_the_command_line():
    done = run_cli("--rules", "Nowhere Special", "--rounds", "10")
    assert done.returncode == 2
    assert "unknown preset 'Nowhere Special'" in done.stderr
