"""Early surrender is offered in the insurance window against a ten or an ace and answered yes or no; a
player who keeps playing does not hold the table until the window times out."""

import pytest

from blackjack.engine.rules import PRESETS
from blackjack.models import Table, TableEvent
from cards.errors import Refused
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db

EARLY = PRESETS["Vegas Strip"].to_dict() | {"surrender": "early"}


@pytest.fixture
def early_table(make_table):
    return make_table("Early surrender", rules=EARLY)


def phase(table) -> str:
    return Table.objects.get(pk=table.pk).phase


def test_declining_early_surrender_moves_the_round_on(early_table, alice, act, scripted_shoe):
    scripted_shoe(early_table, deal_cards(["Ts", "6h"], dealer=["Kc", "7d"]))  # 16 against a king
    act(early_table, alice, "sit", seat=1)
    act(early_table, alice, "bet", seat=1, amount=100)
    assert phase(early_table) == "insurance"
    act(early_table, alice, "surrender", accept=False)
    assert phase(early_table) == "playing"  # the window closed as soon as every offer was answered


def test_taking_early_surrender_returns_half_the_bet(early_table, alice, act, balance, scripted_shoe):
    scripted_shoe(early_table, deal_cards(["Ts", "6h"], dealer=["Kc", "7d"]))
    act(early_table, alice, "sit", seat=1)
    act(early_table, alice, "bet", seat=1, amount=100)
    act(early_table, alice, "surrender", accept=True)
    assert phase(early_table) == "settled"
    assert balance(alice) == 9_950


def test_declining_a_surrender_outside_the_offer_is_refused(table, alice, act, balance, scripted_shoe):
    scripted_shoe(table, deal_cards(["Ts", "6h"], dealer=["9c", "7d"]))  # late surrender: no offer
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", seat=1, amount=100)
    before = Table.objects.get(pk=table.pk).version
    with pytest.raises(Refused) as refused:
        act(table, alice, "surrender", accept=False)
    assert refused.value.code == "illegal_action"
    assert Table.objects.get(pk=table.pk).version == before
    assert balance(alice) == 9_900


@pytest.mark.parametrize(
    ("rules", "upcard", "text"),
    [
        (EARLY, "Kc", "Dealer shows a ten: early surrender is offered."),
        (EARLY, "Ac", "Dealer shows an ace: insurance, even money and early surrender are offered."),
        (None, "Ac", "Dealer shows an ace: insurance and even money are offered."),
    ],
)
def test_the_table_log_names_the_decisions_the_window_offers(
    make_table, alice, act, scripted_shoe, rules, upcard, text
):
    table = make_table("Window", rules=rules) if rules else make_table()
    scripted_shoe(table, deal_cards(["Ts", "6h"], dealer=[upcard, "7d"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", seat=1, amount=100)
    assert phase(table) == "insurance"
    assert list(
        TableEvent.objects.filter(table=table, text__startswith="Dealer shows").values_list("text", flat=True)
    ) == [text]
