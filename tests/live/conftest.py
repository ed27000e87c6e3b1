"""The live runtime's tests play real tables: blackjack's fixtures (`table`, `act`, players...)."""

from tests.blackjack.conftest import *  # noqa: F403  (the live-tables fixtures)
from tests.durak.live.conftest import connect  # noqa: F401  (a game's socket, as a player or a spectator)
