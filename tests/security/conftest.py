"""Fixtures of the security regression tests: the players and tables of the table tests, and real Daphne
processes of the scale tests."""

from tests.blackjack.conftest import (  # noqa: F401
    PASSWORD,
    act,
    carol,
    make_table,
    table,
)
from tests.scale.conftest import servers  # noqa: F401
