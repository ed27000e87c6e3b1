"""The load tester: its bots' decisions, its figures, its loopback-only rule, and a short real run against a
Daphne process (the CI version of the benchmark; `benchmarks/load.py` runs the long ones)."""

import json

import pytest
from django.core.management import CommandError, call_command

from tables.engine.rules import PRESETS
from tables.engine.strategy import basic_strategy
from tables.loadtest.bot import next_action
from tables.loadtest.fixtures import LoopbackOnly, check_loopback
from tables.loadtest.stats import percentiles

STRATEGY = basic_strategy(PRESETS["Vegas Strip"])


def seat(number, player=None, *, bet=0, ready=False, sitting_out=False, hands=()):
    return {
        "seat": number,
        "player": player,
        "bet": bet,
        "ready": ready,
        "sitting_out": sitting_out,
        "in_round": bool(hands),
        "hands": [{"cards": cards} for cards in hands],
    }


def state(phase, seats, *, mine=(), allowed=(), by_seat=None, turn=None, dealer=()):
    return {
        "type": "state",
        "v": 7,
        "table": {"phase": phase, "seats": seats, "turn": turn, "dealer": {"cards": list(dealer)}},
        "you": {"seats": list(mine), "allowed": list(allowed), "allowed_by_seat": by_seat or {}},
    }


def decide(message, number, *, stopping=False, ordered=True):
    return next_action(message, number, STRATEGY, min_bet=10, stopping=stopping, ordered=ordered)


def test_bots_sit_in_seat_order():
    empty = state("waiting", [seat(1), seat(2)], allowed=["sit", "chat"])
    assert decide(empty, 1) == {"action": "sit", "seat": 1}
    assert decide(empty, 2) is None  # seat 1 first
    assert decide(empty, 2, ordered=False) == {"action": "sit", "seat": 2}
    assert decide(empty, 1, stopping=True) is None
    taken = state("betting", [seat(1, "a"), seat(2, "b")], allowed=["chat"])
    assert decide(taken, 2) is None


def test_bots_bet_the_minimum_in_seat_order_and_only_once():
    seats = [seat(1, "a"), seat(2, "b")]
    betting = {"1": ["bet"], "2": ["bet"]}
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2) is None
    seats[0]["bet"] = 10
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2) == {
        "action": "bet",
        "amount": 10,
        "seat": 2,
    }
    assert decide(state("betting", seats, mine=[1], by_seat=betting), 1) is None  # has bet already
    seats[0]["bet"], seats[0]["sitting_out"] = 0, True  # nobody waits for a player sitting out
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2)["action"] == "bet"
    assert decide(state("betting", seats, mine=[2], by_seat=betting), 2, stopping=True) is None


def test_bots_decline_insurance_and_play_basic_strategy():
    seats = [seat(1, "a", bet=10, hands=[["Th", "6c"]])]
    offer = state("insurance", seats, mine=[1], by_seat={"1": ["insurance"]}, dealer=["As", None])
    assert decide(offer, 1) == {"action": "insurance", "accept": False, "seat": 1}
    even = state("insurance", seats, mine=[1], by_seat={"1": ["even_money"]}, dealer=["As", None])
    assert decide(even, 1) == {"action": "even_money", "accept": False, "seat": 1}

    def play(cards, up, allowed=("hit", "stand", "double", "split", "surrender")):
        table = [seat(1, "a", bet=10, hands=[cards])]
        turn = {"seat": 1, "hand": 0}
        return decide(
            state("playing", table, mine=[1], by_seat={"1": list(allowed)}, turn=turn, dealer=[up, None]), 1
        )

    assert play(["6h", "5c"], "6d") == {"action": "double", "seat": 1, "hand": 0}
    assert play(["Th", "6c"], "Td") == {"action": "surrender", "seat": 1, "hand": 0}  # late surrender 16 v 10
    assert play(["Th", "6c"], "Td", ("hit", "stand")) == {"action": "hit", "seat": 1, "hand": 0}
    assert play(["8h", "8c"], "9d")["action"] == "split"
    assert play(["Th", "7c"], "Ad", ("hit", "stand"))["action"] == "stand"
    # Not this seat's turn: wait.
    waiting = state(
        "playing", seats, mine=[1], by_seat={"1": []}, turn={"seat": 2, "hand": 0}, dealer=["9d", None]
    )
    assert decide(waiting, 1) is None


def test_bots_get_ready_in_seat_order():
    seats = [seat(1, "a"), seat(2, "b")]
    settled = state("settled", seats, mine=[2], by_seat={"2": ["ready"]})
    assert decide(settled, 2) is None
    seats[0]["ready"] = True
    assert decide(state("settled", seats, mine=[2], by_seat={"2": ["ready"]}), 2) == {"action": "ready"}
    assert decide(state("settled", seats, mine=[2], by_seat={"2": ["ready"]}), 2, stopping=True) is None


def test_percentiles_use_the_nearest_rank():
    values = [n / 1000 for n in range(1, 101)]  # 1..100 ms
    assert percentiles(values) == {"count": 100, "p50": 50.0, "p95": 95.0, "p99": 99.0, "max": 100.0}
    assert percentiles([0.25]) == {"count": 1, "p50": 250.0, "p95": 250.0, "p99": 250.0, "max": 250.0}
    assert percentiles([])["p99"] is None


@pytest.mark.parametrize(
    "url",
    ["http://8.8.8.8:8000", "http://10.0.0.1", "ftp://127.0.0.1:21", "127.0.0.1:8000", "http://127.0.0.1/x"],
)
def test_only_loopback_base_urls_are_load_tested(url):
    with pytest.raises(LoopbackOnly):
        check_loopback(url)


def test_loopback_urls_become_websocket_bases():
    assert check_loopback("http://127.0.0.1:8000") == "ws://127.0.0.1:8000"
    assert check_loopback("https://localhost:8443/") == "wss://localhost:8443"
    assert check_loopback("http://[::1]:9000") == "ws://[::1]:9000"


@pytest.mark.django_db
def test_the_command_refuses_unbounded_or_foreign_runs():
    for options in (
        {"url": ["http://8.8.8.8"]},
        {"url": ["http://127.0.0.1:1"], "tables": 0},
        {"url": ["http://127.0.0.1:1"], "players": 8},
        {"url": ["http://127.0.0.1:1"], "duration": 100_000},
    ):
        with pytest.raises(CommandError):
            call_command("loadtest", **options)


def test_a_short_load_run_reports_figures_and_a_clean_audit(servers, tmp_path, capsys):
    server = servers()
    out = tmp_path / "load.json"
    call_command("loadtest", url=[server.url], tables=2, players=2, duration=6, drain=5, json_path=str(out))
    result = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == result  # printed and written alike
    assert result["bots"] == 4
    assert result["actions"] > 0
    assert result["rounds"] > 0
    for who in ("actor", "others"):
        figures = result["latency_ms"][who]
        assert figures["count"] > 0
        assert 0 < figures["p50"] <= figures["p95"] <= figures["p99"] <= figures["max"]
    assert result["unexpected_errors"] == 0, result["errors"]
    assert result["audit"]["ok"], result["audit"]
    assert result["audit"]["sum_of_balances"] == 0
