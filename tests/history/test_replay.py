"""Round replay: the engine rebuilds the live round from the shoe and the action log, step by step, showing
only what was dealt, and each viewer sees only their own private details."""

import pytest
from django.urls import reverse

from accounts.models import LedgerEntry
from blackjack.history.replay import replay_round, round_order, state_for_storage
from blackjack.models import ActionLog, Round, Table
from tests.blackjack.conftest import PASSWORD, deal_cards

pytestmark = pytest.mark.django_db


def replay_of(rnd: Round):
    rnd = Round.objects.select_related("shoe").get(pk=rnd.pk)
    names = {1: "Alice", 3: "Bob"}
    return replay_round(rnd, list(ActionLog.objects.filter(round=rnd).order_by("seq")), names=names)


@pytest.fixture
def split_round(table, alice, bob, scripted_shoe, play_round):
    # alice splits 8s (8+3 doubles, 8+T stands); bob stands on 20; dealer 9+7 draws a K: busts.
    cards = [*deal_cards(["8s", "8h"], ["Ts", "Qd"], dealer=["9c", "7d"]), "3c", "Td", "5s", "Kh"]
    scripted_shoe(table, cards)
    return play_round(
        table,
        [(alice, 1, 100), (bob, 3, 40)],
        [(alice, "split", {}), (alice, "double", {}), (alice, "stand", {}), (bob, "stand", {})],
    )


def test_the_replay_equals_the_live_round(split_round):
    replay = replay_of(split_round)
    assert replay.error is None
    assert replay.matches_live is True
    assert state_for_storage(replay.final) == Round.objects.get(pk=split_round.pk).state
    dealer = replay.final.dealer_cards
    assert dealer == ["9c", "7d", "Kh"]
    hands = [hand.cards for hand in replay.final.seats[1].hands]
    assert hands == [["8s", "3c", "Td"], ["8h", "5s"]]


def test_each_step_deals_the_next_cards_of_the_shoe_and_no_others(split_round):
    replay = replay_of(split_round)
    rnd = Round.objects.select_related("shoe").get(pk=split_round.pk)
    order = round_order(rnd)
    assert replay.dealt == list(order[rnd.start_position : replay.end_position])
    assert [card for step in replay.steps for card in step.cards] == replay.dealt
    assert len(replay.steps) == ActionLog.objects.filter(round=rnd).count() + 1
    labels = [step.label for step in replay.steps]
    assert "Alice (seat 1) splits." in labels
    assert "Cards are dealt." in labels


def test_the_hole_card_stays_hidden_until_the_dealer_turns_it(split_round):
    replay = replay_of(split_round)
    deal = next(step for step in replay.steps if step.action.get("action") == "deal")
    assert deal.view["dealer"] == ["9c", None]
    assert replay.steps[-1].view["dealer"] == ["9c", "7d", "Kh"]


def test_a_tampered_action_log_does_not_match_the_live_round(split_round):
    rnd = Round.objects.select_related("shoe").get(pk=split_round.pk)
    actions = list(ActionLog.objects.filter(round=rnd).order_by("seq"))
    stand_instead = next(log for log in actions if log.action.get("action") == "double")
    stand_instead.action = {**stand_instead.action, "action": "stand"}
    replay = replay_round(rnd, actions)
    assert replay.matches_live is False


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)


def test_the_page_shows_the_viewer_only_their_own_chip_movements(client, split_round, alice, bob):
    bob.email = "bob@example.com"
    bob.save()
    login(client, alice)
    page = client.get(reverse("round_replay", args=[split_round.pk])).content.decode()
    assert "Alice (seat 1) splits." in page  # both players, by public name
    assert "Bob (seat 3) stands." in page
    assert "bob@example.com" not in page
    own = LedgerEntry.objects.filter(round_ref=split_round.pk, wallet__user=alice)
    others = LedgerEntry.objects.filter(round_ref=split_round.pk, wallet__user=bob)
    assert own.exists()
    assert others.exists()
    for entry in own:
        assert f'<td class="num">{entry.balance_after:,}</td>' in page
    for entry in others:
        assert f"{entry.balance_after:,}" not in page
    assert "Your chip movements" in page


def test_a_shoe_in_play_reveals_neither_its_seed_nor_undealt_cards(client, split_round, alice):
    rnd = Round.objects.select_related("shoe").get(pk=split_round.pk)
    assert rnd.shoe.retired_at is None  # Vegas Strip deals to the cut card: this shoe goes on
    login(client, alice)
    response = client.get(reverse("round_replay", args=[rnd.pk]))
    page = response.content.decode()
    assert rnd.shoe.server_seed not in page
    assert rnd.shoe.seed_hash in page
    assert "verify-panel" not in page
    assert response.context["replay"].dealt == list(round_order(rnd)[rnd.start_position : rnd.shoe.position])
    shown = sum(len(step.cards) for step in response.context["replay"].steps)
    assert shown == rnd.shoe.position - rnd.start_position


def test_a_round_still_being_played_is_not_shown(client, table, alice, bob, act):
    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)  # bob has not bet yet: the round stays open
    act(table, alice, "bet", amount=10)
    rnd = Table.objects.get(pk=table.pk).current_round
    assert rnd.settled_at is None
    login(client, alice)
    assert client.get(reverse("round_replay", args=[rnd.pk])).status_code == 404


def test_a_private_tables_rounds_are_for_its_players(client, make_table, alice, bob, carol, play_round):
    private = make_table(name="Back room", is_private=True)
    rnd = play_round(private, [(alice, 1, 10)])  # random cards: the clock stands for alice
    url = reverse("round_replay", args=[rnd.pk])
    login(client, carol)
    assert client.get(url).status_code == 404
    login(client, alice)
    assert client.get(url).status_code == 200
    client.logout()
    assert client.get(url).status_code == 404


def test_public_rounds_can_be_watched_again_by_anyone(client, split_round):
    assert client.get(reverse("round_replay", args=[split_round.pk])).status_code == 200


def test_the_page_links_the_rounds_before_and_after_at_the_table(client, table, alice, bob, play_round):
    first = play_round(table, [(alice, 1, 10)])
    second = play_round(table, [(alice, 1, 10), (bob, 2, 10)])
    third = play_round(table, [(bob, 2, 10)])
    login(client, alice)
    page = client.get(reverse("round_replay", args=[second.pk])).content.decode()
    assert f'href="{reverse("round_replay", args=[first.pk])}" rel="prev"' in page
    assert f'href="{reverse("round_replay", args=[third.pk])}" rel="next"' in page
