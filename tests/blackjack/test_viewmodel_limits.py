"""A round under way shows the limits and rules it plays by; staff edits show from the next round."""

import pytest

from blackjack import operations
from blackjack.viewmodel import build_table_view
from tests.blackjack.conftest import deal_cards, preset_row

pytestmark = pytest.mark.django_db


def test_the_view_shows_the_round_limits_until_the_round_is_over(table, alice, act, scripted_shoe):
    # 17 against the dealer's 9 and 8: no insurance offer (an ace up would refuse the stand below), no draws.
    scripted_shoe(table, deal_cards(["Ts", "7h"], dealer=["9c", "8d"]))
    act(table, alice, "sit", seat=1)  # opens the betting round at 10-500
    operations.update_table(table_id=table.pk, min_bet=50, max_bet=2_000)
    during = build_table_view(table_id=table.pk, user=alice)["table"]
    assert (during["min_bet"], during["max_bet"]) == (10, 500)
    act(table, alice, "bet", seat=1, amount=20)  # the round's limits are the ones enforced
    table.refresh_from_db()
    round_ = table.current_round
    act(table, alice, "stand", seat=1)
    round_.refresh_from_db()
    assert round_.is_over
    after = build_table_view(table_id=table.pk, user=alice)["table"]
    assert (after["min_bet"], after["max_bet"]) == (50, 2_000)


def test_a_preset_change_shows_from_the_next_round(table, alice, act):
    act(table, alice, "sit", seat=1)
    operations.update_table(table_id=table.pk, preset=preset_row("Downtown"))
    during = build_table_view(table_id=table.pk, user=alice)["table"]
    assert during["rules"]["decks"] == 6  # Vegas Strip, as the round opened
    act(table, alice, "leave")  # nobody left in the round: it ends, the next one opens with the new rules
    table.refresh_from_db()
    after = build_table_view(table_id=table.pk, user=alice)["table"]
    assert table.current_round is None or table.current_round.is_over
    assert after["rules"]["decks"] == 2
