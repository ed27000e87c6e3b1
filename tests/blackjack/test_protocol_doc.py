"""docs/protocol.md stays honest: every field the server sends, every error code it raises and every value
of the phase, status and result sets is documented there, and no documented field has left the code.

Fields are read from real views (`build_table_view`, `lobby_section`, `live.chat.line`) built in every
phase for a seated player and a spectator; a field is documented when its key path (for example
`table.seats[].hands[].result`) is the backticked first cell of a table row in the doc. Error codes are
collected from the source with `ast`."""

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser

from blackjack.engine import _state
from blackjack.models import Phase
from blackjack.viewmodel import build_table_view, lobby_section
from live import chat
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
#: Files whose Refused / Refused / Refused / Refused / send_error calls name the codes a
#: client can see.
CODE_SOURCES = [
    *sorted((ROOT / "blackjack" / "services").glob("*.py")),
    *sorted((ROOT / "blackjack" / "flow").glob("*.py")),
    ROOT / "blackjack" / "protocol.py",
    ROOT / "blackjack" / "consumers.py",
    *sorted((ROOT / "blackjack" / "engine").glob("*.py")),
    *sorted((ROOT / "live").glob("*.py")),
]
REFUSALS = {"Refused", "send_error"}
#: The codes shared/PROTOCOL.md lists (the fixed contract).
PROTOCOL_CODES = [
    "not_authenticated",
    "not_your_turn",
    "illegal_action",
    "bad_amount",
    "insufficient_chips",
    "stale_version",
    "seat_taken",
    "table_closed",
    "bad_message",
    "rate_limited",
]
#: Dict keys that are seat numbers ("1", "2", ...) are written `<seat>` in a path.
SEAT_KEY = "<seat>"
ROW_PATH = re.compile(r"^\|\s*`([^`]+)`\s*\|", re.MULTILINE)


# --- reading the doc ----------------------------------------------------------------------------------------


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def documented_paths(text: str) -> set[str]:
    """The backticked first cells of the doc's table rows: the field paths (codes, values) it documents."""
    return set(ROW_PATH.findall(text))


def section(text: str, title: str) -> str:
    """The text of the `## title` section, up to the next `## ` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/protocol.md has no section '## {title}'"
    return match.group(1)


def subsection(text: str, title: str) -> str:
    match = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^##|\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/protocol.md has no section '### {title}'"
    return match.group(1)


# --- reading the views --------------------------------------------------------------------------------------


def key_paths(value: Any, prefix: str = "") -> Iterator[str]:
    """Every key path of a JSON value: `a.b` for object keys, `a[].b` inside lists of objects; an object
    keyed by seat numbers is a map, written `a.<seat>`."""
    if isinstance(value, dict):
        if prefix and value and all(isinstance(key, str) and key.isdigit() for key in value):
            for item in value.values():
                yield f"{prefix}.{SEAT_KEY}"
                yield from key_paths(item, f"{prefix}.{SEAT_KEY}")
            return
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            yield from key_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict | list):
                yield from key_paths(item, f"{prefix}[]")


def all_paths(views: Iterable[dict[str, Any]]) -> set[str]:
    return {path for view in views for path in key_paths(view)}


@pytest.fixture
def views(table, alice, bob, act, scripted_shoe) -> list[dict[str, Any]]:
    """`state` views of one table in every phase, for a seated player, the other player and a spectator.

    The round: alice (seat 1) 8-8, bob (seat 2) T-7, dealer A up and 9 in the hole. Insurance is offered;
    alice takes it, bob declines; alice splits her eights (3 to the first, K to the second) and stands on
    both, bob stands; the dealer's 20 settles the round."""
    scripted_shoe(table, deal_cards(["8s", "8h"], ["Ts", "7h"], dealer=["Ad", "9c"], then=["3s", "Kh"]))
    spectator = AnonymousUser()
    collected: list[dict[str, Any]] = []

    def snap(expected_phase: str) -> None:
        for user in (alice, bob, spectator):
            view = build_table_view(table_id=table.pk, user=user)
            assert view["table"]["phase"] == expected_phase
            collected.append(view)

    snap(Phase.WAITING)
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)
    chat.post(game="blackjack", table_id=table.pk, user=bob, text="good luck")
    snap(Phase.BETTING)
    act(table, alice, "bet", amount=50)
    act(table, bob, "bet", amount=40)
    snap(Phase.INSURANCE)
    act(table, alice, "insurance", accept=True)
    act(table, bob, "insurance", accept=False)
    snap(Phase.PLAYING)
    act(table, alice, "split")
    snap(Phase.PLAYING)
    hands = collected[-3]["table"]["seats"][0]["hands"]
    assert [hand["split"] for hand in hands] == [True, True]
    assert collected[-3]["you"]["hint"] is not None
    act(table, alice, "stand", hand=0)
    act(table, alice, "stand", hand=1)
    act(table, bob, "stand")
    snap(Phase.SETTLED)
    assert all(hand["result"] for seat in collected[-1]["table"]["seats"] for hand in seat["hands"])
    return collected


def test_every_field_of_state_is_documented(views):
    missing = sorted(all_paths(views) - documented_paths(doc_text()))
    assert not missing, f"fields sent in `state` but missing from docs/protocol.md: {missing}"


def test_every_documented_state_field_is_sent(views):
    """The other way round: a documented `table.*` / `you.*` path the views no longer carry is stale."""
    documented = {path for path in documented_paths(doc_text()) if path.startswith(("table.", "you."))}
    stale = sorted(documented - all_paths(views))
    assert not stale, f"docs/protocol.md documents fields `state` does not send: {stale}"


def test_the_chat_message_and_the_lobby_are_documented(table, alice, act):
    act(table, alice, "sit", seat=3)
    line = chat.post(game="blackjack", table_id=table.pk, user=alice, text="hello")
    message = {"type": "chat", **chat.line(game="blackjack", table_id=table.pk, line_id=line.pk)}
    text = doc_text()
    documented = documented_paths(text)
    assert not sorted(set(message) - documented), "a field of the `chat` message is not documented"

    lobby = {"type": "lobby", **lobby_section(1)}
    assert lobby["tables"], "the lobby lists the table"
    # A lobby row's rules are the table's rules, documented once as `table.rules.*`.
    lobby_paths = {re.sub(r"^tables\[\]\.rules\.", "table.rules.", path) for path in key_paths(lobby)}
    assert not sorted(lobby_paths - documented), "a field of the `lobby` message is not documented"
    lobby_doc = documented_paths(section(text, "The lobby"))
    stale = sorted(path for path in lobby_doc if path.startswith("tables") and path not in lobby_paths)
    assert not stale, f"docs/protocol.md documents lobby fields the server does not send: {stale}"


# --- error codes --------------------------------------------------------------------------------------------


def module_constants(paths: Iterable[Path]) -> dict[str, str]:
    """Module-level `NAME = "text"` assignments of the source files (codes named as constants)."""
    constants = {}
    for path in paths:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        constants[target.id] = node.value.value
    return constants


def raised_codes(paths: Iterable[Path]) -> dict[str, set[str]]:
    """code -> the files naming it as the first argument of a refusal (`Refused`, `send_error`). A first
    argument that is neither a string nor a known constant must be passed through from another refusal
    (`exc.code`, or an owner's answer `*answer["refused"]`), else the test cannot see the code and fails."""
    paths = list(paths)
    constants = module_constants(paths)
    codes: dict[str, set[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else None
            )
            if name not in REFUSALS:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                code = first.value
            elif isinstance(first, ast.Name) and first.id in constants:
                code = constants[first.id]
            elif (isinstance(first, ast.Attribute) and first.attr == "code") or isinstance(
                first, ast.Starred
            ):
                continue  # re-raised from a refusal whose code is collected where it was raised
            else:
                pytest.fail(f"{path.name}:{node.lineno}: cannot tell which code {ast.unparse(node)} raises")
            codes.setdefault(code, set()).add(path.name)
    return codes


def test_the_code_collector_finds_the_known_codes():
    codes = raised_codes(CODE_SOURCES)
    for code in (
        "suspended",
        "unavailable",
        "rate_limited",
        "not_authenticated",
        "stale_version",
        "seat_taken",
    ):
        assert code in codes, code


def undocumented_codes(errors_section: str) -> list[str]:
    return sorted(
        f"{code} ({', '.join(sorted(files))})"
        for code, files in raised_codes(CODE_SOURCES).items()
        if f"`{code}`" not in errors_section
    )


def test_every_error_code_is_documented():
    undocumented = undocumented_codes(section(doc_text(), "Errors"))
    assert not undocumented, f"error codes raised in the code but missing from '## Errors': {undocumented}"


def test_every_protocol_code_has_a_row():
    rows = documented_paths(section(doc_text(), "Errors"))
    assert not [code for code in PROTOCOL_CODES if code not in rows]


# --- value sets ---------------------------------------------------------------------------------------------


def test_phases_statuses_and_results_are_documented():
    text = doc_text()
    phases = documented_paths(subsection(text, "Phase"))
    assert set(Phase.values) <= phases
    statuses = documented_paths(subsection(text, "Hand status"))
    engine_statuses = {
        value
        for name, value in vars(_state).items()
        if name.isupper()
        and isinstance(value, str)
        and name not in ("BETTING", "INSURANCE", "PLAYING", "SETTLED")
    }
    assert engine_statuses, "no hand status constants found in blackjack/engine/_state.py"
    assert engine_statuses <= statuses, sorted(engine_statuses - statuses)
    dealing = (ROOT / "blackjack" / "engine" / "_dealing.py").read_text(encoding="utf-8")
    results = set(re.findall(r'result, payout = "(\w+)"', dealing))
    assert {"win", "lose", "push", "bust", "blackjack", "surrender", "charlie"} <= results
    documented = documented_paths(subsection(text, "Hand result"))
    assert results <= documented, sorted(results - documented)


# --- the checks can fail ------------------------------------------------------------------------------------


def test_removing_a_documented_field_is_noticed(views):
    text = doc_text()
    row = re.compile(r"^\| `table\.seats\[\]\.hands\[\]\.result` \|.*\n", re.MULTILINE)
    assert row.search(text), "the row of `table.seats[].hands[].result` is where this test expects it"
    before = all_paths(views) - documented_paths(text)
    after = all_paths(views) - documented_paths(row.sub("", text))
    assert after - before == {"table.seats[].hands[].result"}


def test_removing_an_error_code_is_noticed():
    errors = section(doc_text(), "Errors")
    before = set(undocumented_codes(errors))
    after = set(undocumented_codes(errors.replace("`suspended`", "suspended")))
    assert after - before == {"suspended (chat.py, decide.py, staff.py)"}
