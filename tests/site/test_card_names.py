"""A card's spoken name (what a screen reader reads out of its face) in the viewer's language, on every
game's pages: English as before, Russian for a Russian player; a face made in one language never reaches a
page in the other."""

from django.utils import translation

from blackjack.rendering import card
from cards.faces import RANK_NAMES, SUIT_NAMES
from durak.templatetags.durak_ui import card_chip
from live.faces import card_face

EVERY_CARD = [rank + suit for rank in "A23456789TJQK" for suit in "shdc"]


def test_english_names_are_the_pure_packages():
    english = [f"{RANK_NAMES[code[0]]} of {SUIT_NAMES[code[1]]}" for code in EVERY_CARD]
    assert [card_face(code)["label"] for code in EVERY_CARD] == english
    assert card_face("Qh")["label"] == "Queen of hearts"
    assert card_face(None) == {"hidden": True, "label": "Face-down card"}


def test_russian_names():
    with translation.override("ru"):
        assert card_face("Qh")["label"] == "Дама червей"
        assert card_face("Td")["label"] == "Десятка бубен"
        assert card_face("As")["label"] == "Туз пик"
        assert card_face("6c")["label"] == "Шестёрка треф"
        assert card_face(None)["label"] == "Карта рубашкой вверх"
        labels = {card_face(code)["label"] for code in EVERY_CARD}
    assert len(labels) == 52
    assert not any(" of " in label for label in labels)


def test_a_face_kept_for_one_language_is_not_shown_in_the_other():
    with translation.override("ru"):
        assert 'aria-label="Король треф"' in card("Kc")
        assert 'title="Король треф"' in card_chip("Kc")
    assert 'aria-label="King of clubs"' in card("Kc")
    assert 'title="King of clubs"' in card_chip("Kc")
