"""How `benchmarks/load.py --repeat N` judges a table count from its runs: by the median p99, and only runs
without errors and with a clean audit count."""

from benchmarks.load import judge


def run(actor_p99: float, others_p99: float | None = None, *, errors: int = 0, audit_ok: bool = True) -> dict:
    return {
        "tables": 50,
        "actions_per_s": 90.0,
        "latency_ms": {"actor": {"p99": actor_p99}, "others": {"p99": others_p99}},
        "unexpected_errors": errors,
        "audit": {"ok": audit_ok},
    }


def test_the_median_of_the_runs_decides_not_one_unlucky_run():
    load = judge([run(90), run(150), run(95)], goal_ms=100)
    assert load["p99s"] == [90, 95, 150]
    assert load["p99"] == 95
    assert load["within"]
    assert not judge([run(90), run(150), run(120)], goal_ms=100)["within"]


def test_a_runs_p99_is_the_larger_of_the_actors_and_the_other_players():
    load = judge([run(40, 130)], goal_ms=100)
    assert load["p99"] == 130
    assert not load["within"]


def test_errors_or_a_failed_audit_in_any_run_fail_the_load():
    assert not judge([run(20), run(20, errors=1), run(20)], goal_ms=100)["within"]
    assert not judge([run(20), run(20), run(20, audit_ok=False)], goal_ms=100)["within"]
