"""`tools/benchmarks/action_cost.py` runs on a fresh checkout as its docstring says (a throw-away SQLite
database,
DEBUG off, so the views need collected static files) and prints its figures."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_action_cost_benchmark_runs_and_prints_its_figures():
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "DEBUG", "DJANGO_SETTINGS_MODULE")
    }
    done = subprocess.run(
        [sys.executable, "tools/benchmarks/action_cost.py", "--actions", "60", "--players", "2"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    figures = re.search(
        r"^sqlite, json views: 60 actions, 2 viewers each \| action ([\d.]+) ms CPU, ([\d.]+) statements \| "
        r"views ([\d.]+) ms CPU",
        done.stdout,
        re.MULTILINE,
    )
    assert figures, done.stdout
    assert float(figures[2]) > 0
    assert "actions ended a round" in done.stdout
