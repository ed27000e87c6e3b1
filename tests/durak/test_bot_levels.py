"""The bot levels (`durak.bot.LEVELS`): legal and deterministic everywhere, the knowledge a seat keeps, the
hard bot's blindness to what its seat cannot see, their order of strength (slow), and the table's level:
the pure flow, the open form and the pages."""

import random
from dataclasses import replace

import pytest
from django.urls import reverse

from durak import bot
from durak.bot import LEVELS, actor, choose, play
from durak.bots import hard, knowledge
from durak.engine import DurakRules, apply, legal_actions, new_deck_order, new_game
from durak.engine.rules import ATTACK_TYPES, LIMITS, VARIANTS
from durak.forms import OpenDurakTableForm
from durak.models import DurakTable
from durak.table import STAND_IN_LEVEL, Act, AddBot, Expire, Leave, Sit, decide, timeout_action

from .conftest import position
from .test_table import ALICE, BOB, new_table, run, start, two_players


def positions(count: int, seed: str, players: tuple[int, ...] = (2, 3, 4)) -> list:
    """`count` positions where someone is to move, from seeded games over random options played part way by
    the normal bot with random moves mixed in; each with the public knowledge kept on the way."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        rules = DurakRules(
            players=rng.choice(players),
            variant=rng.choice(VARIANTS),
            attack=rng.choice(ATTACK_TYPES),
            limit=rng.choice(LIMITS),
        )
        deck = new_deck_order()
        rng.shuffle(deck)
        state = new_game(rules, deck)
        seen = knowledge.start(state)
        for _ in range(rng.randrange(90)):
            player = actor(state)
            if player is None:
                break
            options = legal_actions(state, player)
            action = rng.choice(options) if rng.random() < 0.3 else choose(state, player, seen=seen)
            after = apply(state, action)
            seen = knowledge.observe(seen, state, action, after)
            state = after
        if actor(state) is not None:
            found.append((state, seen))
    return found


# --- every level: legal, deterministic ---


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_plays_only_legal_actions(level):
    count = 30 if level == "hard" else 300
    for index, (state, seen) in enumerate(positions(count, f"legal-{level}")):
        player = actor(state)
        legal = legal_actions(state, player)
        assert choose(state, player, random.Random(index), level, seen) in legal
        assert choose(state, player, None, level) in legal  # no generator, no history
        idle = [seat for seat in range(state.rules.players) if not legal_actions(state, seat)]
        assert all(choose(state, seat, None, level) is None for seat in idle)


def test_an_unknown_level_is_refused():
    state, _ = positions(1, "unknown")[0]
    with pytest.raises(ValueError, match="a bot level is one of"):
        choose(state, actor(state), level="expert")


@pytest.mark.parametrize("level", LEVELS)
def test_a_level_decides_the_same_given_the_same_seed(level):
    for index, (state, seen) in enumerate(positions(12, f"same-{level}")):
        player = actor(state)
        first = choose(state, player, random.Random(index), level, seen)
        assert choose(state, player, random.Random(index), level, seen) == first
        assert choose(state, player, None, level, seen) == choose(state, player, None, level, seen)


def test_games_between_levels_replay_alike_with_the_same_seed():
    deck = new_deck_order()
    random.Random(11).shuffle(deck)
    rules = DurakRules(players=3, variant="perevodnoy")
    levels = ("easy", "normal", "easy")
    assert play(new_game(rules, deck), random.Random(5), levels) == play(
        new_game(rules, deck), random.Random(5), levels
    )
    state, actions = play(new_game(DurakRules(players=2), deck), random.Random(5), ("hard", "easy"))
    assert state.finished
    assert play(new_game(DurakRules(players=2), deck), random.Random(5), ("hard", "easy"))[1] == actions


# --- what a seat knows ---


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_the_knowledge_kept_is_true_and_places_the_trump_card(players):
    """In many games the cards known in a hand are in it, and once the trump card is drawn from under the
    talon its holder is known (from the hands' sizes and the refill order, not by looking)."""
    rng = random.Random(players)
    trump_placed = 0
    for _ in range(40):
        deck = new_deck_order()
        rng.shuffle(deck)
        state = new_game(DurakRules(players=players, variant=rng.choice(VARIANTS)), deck)
        seen = knowledge.start(state)
        while (player := actor(state)) is not None:
            action = choose(state, player, rng, "easy", seen)
            after = apply(state, action)
            seen = knowledge.observe(seen, state, action, after)
            state = after
            for seat, cards in enumerate(seen.known):
                assert cards <= set(state.hands[seat])
            holders = [seat for seat, hand in enumerate(state.hands) if state.trump in hand]
            if holders and state.trump not in state.talon:
                assert state.trump in seen.known[holders[0]]
                trump_placed += 1
    assert trump_placed > 100


def test_a_picked_up_card_is_known_until_played():
    rules = DurakRules(players=2)
    state = new_game(rules, new_deck_order(), first_attacker=0)  # 6s 6d 7s ... against 6h 6c 7h ..., trump 9s
    seen = knowledge.start(state)
    card = state.hands[0][0]
    for action in ({"action": "attack", "player": 0, "card": card}, {"action": "take", "player": 1}):
        after = apply(state, action)
        seen, state = knowledge.observe(seen, state, action, after), after
    if state.table:  # the attacker may add before the take closes the bout
        action = {"action": "done", "player": 0}
        after = apply(state, action)
        seen, state = knowledge.observe(seen, state, action, after), after
    assert card in seen.known[1]
    assert card not in knowledge.unseen(state, 0, seen)


# --- the hard bot sees what its seat sees ---


def hidden_permuted(state, player: int, seen, rng: random.Random):
    """The state with every card `player` cannot place (the other hands' unknown cards, the talon but the
    trump card under it) dealt again at random into the same places."""
    slots = []
    for seat, hand in enumerate(state.hands):
        if seat != player:
            slots += [("hand", seat, i) for i, card in enumerate(hand) if card not in seen.known[seat]]
    under = 1 if state.trump in state.talon else 0
    slots += [("talon", None, i) for i in range(len(state.talon) - under)]
    hands = [list(hand) for hand in state.hands]
    talon = list(state.talon)

    def get(slot):
        where, seat, i = slot
        return hands[seat][i] if where == "hand" else talon[i]

    cards = [get(slot) for slot in slots]
    rng.shuffle(cards)
    for (where, seat, i), card in zip(slots, cards, strict=True):
        if where == "hand":
            hands[seat][i] = card
        else:
            talon[i] = card
    return replace(state, hands=tuple(tuple(hand) for hand in hands), talon=tuple(talon))


def blind_cases(count: int = 16):
    """Positions with something hidden and a real choice (hard searches only then)."""
    cases = []
    for state, seen in positions(80, "blind", players=(2, 3)):
        player = actor(state)
        if len(legal_actions(state, player)) > 1 and (state.talon or state.rules.players > 2):
            cases.append((state, seen, player))
    return cases[:count]


def test_hard_decides_the_same_whatever_the_cards_it_cannot_see():
    """The same seed and the same public knowledge give the same decision, however the opponents' unknown
    cards and the talon's order lie."""
    cases = blind_cases()
    assert len(cases) == 16
    changed = 0
    for index, (state, seen, player) in enumerate(cases):
        decision = choose(state, player, random.Random(index), "hard", seen)
        for shuffle in range(2):
            other = hidden_permuted(state, player, seen, random.Random(f"{index}:{shuffle}"))
            changed += other != state
            assert choose(other, player, random.Random(index), "hard", seen) == decision
    assert changed >= len(cases)  # the hidden cards did move


def test_the_blindness_test_catches_a_bot_that_peeks(monkeypatch):
    """The same check fails for a hard bot that plays its candidates out in the real deal."""
    monkeypatch.setattr(hard.knowledge, "sample", lambda state, player, seen, rng: state)
    differs = False
    for index, (state, seen, player) in enumerate(blind_cases()):
        decision = choose(state, player, random.Random(index), "hard", seen)
        for shuffle in range(2):
            other = hidden_permuted(state, player, seen, random.Random(f"{index}:{shuffle}"))
            differs |= choose(other, player, random.Random(index), "hard", seen) != decision
        if differs:
            break
    assert differs


def test_hard_takes_at_once_when_a_card_cannot_be_beaten_nor_transferred(monkeypatch):
    """An obviously forced move is not searched: a defender who can beat 7h but not 7d (no diamond above it,
    no trump) takes without a world being dealt (no play-out spent)."""
    hands = [["7h", "7d", "9s", "Ts", "Js", "Ks"], ["8h", "6d", "6s", "Qs", "Qh", "Kh"]]
    state = position(DurakRules(players=2), hands, "Ac", attacker=0, talon=["6c", "Ac"])
    state = apply(
        apply(state, {"action": "attack", "player": 0, "card": "7h"}),
        {"action": "attack", "player": 0, "card": "7d"},
    )
    options = legal_actions(state, 1)
    assert {option["action"] for option in options} == {"beat", "take"}

    def dealt(*args):
        raise AssertionError("a world was dealt")

    monkeypatch.setattr(hard.knowledge, "sample", dealt)
    assert hard.choose(state, 1, options, random.Random(0)) == {"action": "take", "player": 1}


# --- strength (slow) ---


def head_to_head(strong: str, weak: str, deals: int, seed: str) -> tuple[int, int, int]:
    """Two-player games, each deal twice with the seats swapped: the strong level's fools, the weak level's,
    the games."""
    rng = random.Random(seed)
    fools = {strong: 0, weak: 0}
    for deal in range(deals):
        deck = new_deck_order()
        rng.shuffle(deck)
        for levels in ((strong, weak), (weak, strong)):
            state, _ = play(new_game(DurakRules(players=2), deck), random.Random(f"{seed}:{deal}"), levels)
            if state.fool is not None:
                fools[levels[state.fool]] += 1
    return fools[strong], fools[weak], 2 * deals


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_hard_beats_normal_and_normal_beats_easy():
    """Seeded, so it cannot fail by chance: the stronger level is the fool at least 20 points less often (the
    benchmark, `tools/benchmarks/durak_levels.py`, has the figures with their intervals)."""
    normal, easy, games = head_to_head("normal", "easy", 200, "normal-easy")
    assert (easy - normal) / games >= 0.2, (normal, easy, games)
    strong, normal, games = head_to_head("hard", "normal", 30, "hard-normal")
    assert (normal - strong) / games >= 0.2, (strong, normal, games)


# --- the table's level ---


@pytest.fixture
def levels_asked(monkeypatch):
    """The levels the table asks the bot for, in order."""
    asked = []
    choose_at = bot.choose

    def spy(state, player, rng=None, level=bot.DEFAULT_LEVEL, seen=None):
        asked.append(level)
        return choose_at(state, player, rng, level, seen)

    monkeypatch.setattr(bot, "choose", spy)
    return asked


def test_a_table_s_bots_play_at_its_level(levels_asked):
    assert new_table().bot_level == "normal"
    table = run(new_table(bot_level="hard"), Sit(ALICE, "Alice"), AddBot(ALICE), start(ALICE))
    while table.to_act() != 1:  # Alice's turn times out (she takes or is done) until the bot is to move
        table = decide(table, Expire(table.version), table.deadline).table
    outcome = decide(table, Expire(table.version), table.deadline)
    assert outcome.logged.by_bot
    assert levels_asked[-1] == "hard"


def test_an_away_player_and_a_timed_out_lead_are_played_at_normal(levels_asked):
    table = run(two_players(bot_level="easy"), Leave(BOB))
    assert STAND_IN_LEVEL == "normal"
    while table.to_act() != table.seat_of(BOB).number:
        seat = table.to_act()
        options = legal_actions(table.game.state, seat)
        table = run(table, Act(ALICE, {k: v for k, v in options[0].items() if k != "player"}))
    levels_asked.clear()
    table = decide(table, Expire(table.version), table.deadline).table
    assert levels_asked == ["normal"]
    leader = actor(two_players().game.state)
    levels_asked.clear()
    assert timeout_action(two_players().game.state, leader)["action"] == "attack"
    assert levels_asked == ["normal"]


@pytest.mark.django_db
def test_the_open_form_offers_the_levels_normal_by_default():
    data = {"name": "x", "variant": "podkidnoy", "attack": "all_sides", "limit": "six", "seats": 2}
    data |= {"stake": 0, "turn_seconds": 30}
    form = OpenDurakTableForm(data)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["bot_level"] == "normal"
    assert [value for value, _ in form.fields["bot_level"].choices] == list(LEVELS)
    assert OpenDurakTableForm(data | {"bot_level": "hard"}).is_valid()
    assert not OpenDurakTableForm(data | {"bot_level": "expert"}).is_valid()


@pytest.mark.django_db
def test_the_opener_picks_the_level_and_the_lobby_and_table_show_it(client, alice):
    from durak import actor as durak_actor

    client.force_login(alice)
    form = {"name": "Hard fools", "variant": "podkidnoy", "attack": "all_sides", "limit": "six", "seats": 2}
    response = client.post(
        reverse("durak_open"), form | {"stake": 0, "turn_seconds": 30, "bot_level": "hard"}
    )
    row = DurakTable.objects.get()
    assert response.url == reverse("durak_table", args=[row.pk])
    assert row.bot_level == "hard"
    assert durak_actor.load(row.pk).bot_level == "hard"
    assert "hard bots" in client.get(reverse("lobby")).content.decode()
    assert "hard bots" in client.get(response.url).content.decode()
