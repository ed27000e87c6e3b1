"""The core property of a Durak table's actor, as for blackjack's: after every command it applies, over many
random games, the table it holds equals the table read back from the database, and so does every viewer's
view of it (players, spectators): whatever happened before (moves, bots and timeouts, players sitting down,
leaving and coming back between games, sockets opening and closing, staff standing a player up and opening
the table again, chat). That includes what the bots know (`Game.seen`: the cards picked up), rebuilt from the
action log on a read."""

import contextlib
import random
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from cards.errors import Refused
from durak import actor as durak_actor
from durak import bot
from durak.engine import legal_actions, throwers
from durak.models import DurakTable
from durak.table import CLOSED, Act, AddBot, Expire, Leave, Ready, Release, Reopen, Sit, Start
from durak.view import table_view
from live import chat
from tests.durak.live.conftest import open_durak_table, seat_and_start

pytestmark = pytest.mark.django_db(transaction=True)


def assert_same_as_read(actor, viewers) -> None:
    read = durak_actor.load(actor.key)
    assert actor.state == read
    for viewer in viewers:
        assert table_view(actor.state, viewer) == table_view(read, viewer)


class Games:
    KINDS = ("play", "sit", "leave", "add_bot", "ready", "presence", "expire", "release", "chat")

    def __init__(self, rng: random.Random, players, table_id: int) -> None:
        self.rng = rng
        self.players = players
        self.table_id = table_id
        self.clock = timezone.now()
        self.compared = 0

    @property
    def actor(self):
        return durak_actor.actor_for(self.table_id)

    def step(self) -> str:
        kind = self.rng.choices(self.KINDS, weights=[60, 5, 2, 2, 8, 6, 6, 1, 2])[0]
        user = self.rng.choice(self.players)
        if self.actor._loaded(self.clock).status == CLOSED:  # everyone left: staff open it again
            self.handle(Reopen())
        with contextlib.suppress(Refused):  # a random step may ask for the impossible: it changes nothing
            getattr(self, kind)(user)
        return kind

    def handle(self, command, *, now=None) -> None:
        if self.actor.handle(command, now=now or self.clock) is not None:
            self.compare()

    def compare(self) -> None:
        assert_same_as_read(self.actor, [None, *(player.pk for player in self.players)])
        self.compared += 1

    def play(self, user) -> None:
        """The seat to act moves: a player as their bot would, a bot or an away player at their deadline;
        now and then another player adding cards comes first (throwing in is simultaneous)."""
        table = self.actor._loaded(self.clock)
        seat = table.to_act()
        if seat is None:
            return
        others = [s for s in throwers(table.game.state) if s != seat and not table.seats[s].robot]
        if others and self.rng.random() < 0.3:
            seat = self.rng.choice(others)
        player = table.seats[seat]
        if player.robot or player.user_id is None:
            self.clock = max(self.clock, table.deadline or self.clock)
            self.handle(Expire(table.version), now=self.clock)
        else:
            action = bot.choose(table.game.state, seat, self.rng)
            self.handle(Act(player.user_id, {k: v for k, v in action.items() if k != "player"}))

    def sit(self, user) -> None:
        self.handle(Sit(user.pk, user.public_name))

    def leave(self, user) -> None:
        self.handle(Leave(user.pk))

    def add_bot(self, user) -> None:
        self.handle(AddBot(user.pk))

    def ready(self, user) -> None:
        command = Start if self.rng.random() < 0.5 else Ready
        self.handle(command(user.pk, fresh_seed=f"{self.rng.getrandbits(256):064x}", seed=user.username))

    def presence(self, user) -> None:
        """A second tab of the player opens or closes, or now and then the first."""
        socket = f"test.{user.pk}.{int(self.rng.random() < 0.8)}"
        version = self.actor.count_socket(user.pk, socket, connected=self.rng.random() < 0.6)
        if version is not None:
            self.compare()

    def expire(self, user) -> None:
        """Time passes: the clock's sweep applies what fell due (a grace, a turn, the ready deadline)."""
        self.clock += timedelta(seconds=self.rng.choice([5, 40, 90]))
        table = self.actor._loaded(self.clock)
        if table.deadline is not None and table.deadline <= self.clock:
            self.handle(Expire(table.version, fresh_seed=f"{self.rng.getrandbits(256):064x}"))

    def release(self, user) -> None:
        self.handle(Release(user.pk))

    def chat(self, user) -> None:
        chat.post(game="durak", table_id=self.table_id, user=user, text=f"line {self.rng.random():.6f}")


@pytest.mark.parametrize(
    ("seed", "options"),
    [
        (0, {"seats": 3, "stake": 50}),
        (1, {"seats": 4, "variant": "perevodnoy"}),
        pytest.param(2, {"seats": 4, "variant": "passport", "stake": 20}, marks=pytest.mark.slow),
    ],
)
def test_the_actors_table_and_views_equal_a_fresh_read_after_every_command(seed, options, make_user):
    players = [make_user(f"p{n}", display_name=f"Player {n}") for n in range(4)]
    table = open_durak_table(players[0], **options)
    games = Games(random.Random(seed), players, table.pk)
    for player in players:
        games.actor.count_socket(player.pk, f"test.{player.pk}.0", connected=True)  # their table page
    for player in players[:2]:
        games.sit(player)
    steps = Counter(games.step() for _ in range(1000))
    # Not vacuous: most changes were compared, over every kind of step, and games were played.
    version = DurakTable.objects.values_list("version", flat=True).get(pk=table.pk)
    assert games.compared > 0.8 * version, (games.compared, version, steps)
    assert all(steps[kind] for kind in Games.KINDS), steps
    assert DurakTable.objects.get(pk=table.pk).games.filter(finished=True).count() >= 3, steps


def test_a_reloaded_table_gives_its_bot_what_was_picked_up(make_user):
    """The knowledge the table's bots play with (`Game.seen`) survives the actor's reload: a fresh read
    replays the action log to the same cards known in each hand, and they are the cards picked up."""
    alice = make_user("alice_seen", display_name="Alice")
    table = open_durak_table(alice, seats=2)
    actor = seat_and_start(table, alice, bots=1)
    rng = random.Random(3)
    while actor.state.status == "playing":
        state = actor.state
        game = state.game
        if any(game.seen.known) and not game.state.table:
            break
        seat = state.to_act()
        if state.seats[seat].is_bot:
            actor.handle(Expire(state.version), now=state.deadline)
        else:
            options = legal_actions(game.state, seat)
            take = [option for option in options if option["action"] == "take"]
            action = take[0] if take else rng.choice(options)
            actor.handle(Act(alice.pk, {k: v for k, v in action.items() if k != "player"}))
    game = actor.state.game
    assert any(game.seen.known), "somebody picked up cards"
    for seat, cards in enumerate(game.seen.known):
        assert cards <= set(game.state.hands[seat])
    durak_actor.forget_actors()
    read = durak_actor.load(table.pk)
    assert read.game.seen == game.seen
    assert read == actor.state
