"""The Durak rules guide is the game's guide page, in the site's menu and linked from the open form and the
table."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_rules_guide_explains_every_variant_and_option(client):
    response = client.get(reverse("durak_guide"))
    assert response.status_code == 200
    page = response.content.decode()
    for words in (
        "36-card deck",
        "trump",
        "Throw in",
        "Take",
        "Bito",
        "Podkidnoy",
        "Perevodnoy",
        "transfer",
        "Passport",
        "6 → 10 → J → Q → K → A",
        "All sides",
        "Neighbours",
        "One side",
        "Six",
        "Five first bout",
        "No limit",
        "fool",
        "stake",
        "Glicko-2",
        "bots",
        "30 seconds",
        "server seed",
    ):
        assert words in page, words


def test_the_rules_guide_is_in_the_menu_and_linked_from_the_open_form_and_the_table(
    client, alice, open_durak
):
    guide = reverse("durak_guide")
    lobby = client.get(reverse("lobby")).content.decode()
    assert f'<a href="{guide}">Durak rules</a>' in lobby
    assert f'<a href="{reverse("how_to_play")}">Blackjack rules</a>' in lobby
    client.force_login(alice)
    assert f'href="{guide}"' in client.get(reverse("durak_open")).content.decode()
    table = open_durak()
    assert f'href="{guide}"' in client.get(reverse("durak_table", args=[table.pk])).content.decode()
