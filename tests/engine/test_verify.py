import json
import subprocess
import sys

import pytest

from blackjack.engine import shuffled_shoe
from blackjack.engine.shoe import dealing_order
from blackjack.engine.verify import main
from cards.fairness import combine_client_seeds, seed_hash

SEED = "ab" * 32


def test_text_output_lists_the_hash_and_every_card_numbered(capsys):
    assert main(["--server-seed", SEED, "--client-seed", "table 7", "--decks", "2", "--nonce", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"server seed SHA-256: {seed_hash(SEED)}"
    expected = shuffled_shoe(server_seed=SEED, client_seed="table 7", decks=2, nonce=4)
    numbered = [line.split() for line in lines[3:]]
    assert numbered == [[str(n), card] for n, card in enumerate(expected, start=1)]


def test_json_output(capsys):
    assert main(["--server-seed", SEED, "--client-seed", "x", "--decks", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["server_seed_hash"] == seed_hash(SEED)
    assert report["cards"] == shuffled_shoe(server_seed=SEED, client_seed="x", decks=1)
    assert (report["decks"], report["nonce"], report["client_seed"]) == (1, 0, "x")


def test_player_seeds_are_combined_like_the_table_does(capsys):
    argv = ["--server-seed", SEED, "--player-seed", "b", "--player-seed", "a", "--decks", "1", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["client_seed"] == combine_client_seeds(["a", "b"])


@pytest.mark.parametrize(
    "argv",
    [
        ["--server-seed", "not hex", "--client-seed", "x", "--decks", "1"],
        ["--server-seed", "ab" * 31, "--client-seed", "x", "--decks", "1"],
        ["--server-seed", SEED, "--client-seed", "x", "--decks", "0"],
        ["--server-seed", SEED, "--client-seed", "x", "--decks", "1", "--nonce", "-2"],
    ],
)
def test_invalid_values_exit_2_with_a_message(argv, capsys):
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["--client-seed", "x", "--decks", "1"],
        ["--server-seed", SEED, "--decks", "1"],
        ["--server-seed", SEED, "--client-seed", "x", "--decks", "six"],
    ],
)
def test_missing_or_malformed_arguments_exit_2(argv):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2


def test_runs_as_a_module():
    command = [sys.executable, "-m", "blackjack.engine.verify", "--server-seed", "zz", "--client-seed", "x"]
    finished = subprocess.run([*command, "--decks", "1"], capture_output=True, text=True, check=False)
    assert finished.returncode == 2
    assert "64 hexadecimal characters" in finished.stderr
    command[4] = SEED
    finished = subprocess.run([*command, "--decks", "1"], capture_output=True, text=True, check=False)
    assert finished.returncode == 0
    assert finished.stdout.splitlines()[-1].split()[0] == "52"


def test_round_start_adds_the_discards_a_round_that_ran_out_was_dealt(capsys):
    argv = ["--server-seed", SEED, "--client-seed", "x", "--decks", "1", "--round-start", "45", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    order = shuffled_shoe(server_seed=SEED, client_seed="x", decks=1)
    assert report["round_start"] == 45
    assert report["cards"] == list(dealing_order(order, 45, server_seed=SEED, client_seed="x"))
    assert len(report["cards"]) == 52 + 45


def test_a_round_start_outside_the_shoe_exits_2(capsys):
    argv = ["--server-seed", SEED, "--client-seed", "x", "--decks", "1", "--round-start", "53"]
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err
