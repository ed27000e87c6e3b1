"""The site's language: English by default; the header's switch sets it for the browser (Django's cookie) and,
for a logged-in player, on the account, which then decides on every device they log in on."""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from accounts import language
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def switch(client, code: str, next_url: str = "/"):
    return client.post(reverse("set_language"), {"language": code, "next": next_url})


def test_english_is_the_default(client, alice):
    page = client.get(reverse("lobby"))
    assert page["Content-Language"] == "en"
    assert '<html lang="en">' in page.text
    assert ">Lobby</a>" in page.text
    client.force_login(alice)
    assert ">Log out</button>" in client.get(reverse("lobby")).text
    alice.refresh_from_db()
    assert alice.language == ""


def test_the_header_offers_the_other_language_in_a_form_that_posts_to_the_switch(client):
    page = client.get(reverse("lobby")).text
    assert f'action="{reverse("set_language")}"' in page
    assert 'name="language" value="ru"' in page
    assert 'name="language" value="en"' not in page


def test_a_visitor_s_choice_is_the_browser_s_cookie(client):
    answer = switch(client, "ru", "/?page=1")
    assert answer.status_code == 302
    assert answer["Location"] == "/?page=1"
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "ru"
    page = client.get(reverse("lobby")).text
    assert '<html lang="ru">' in page
    assert ">Лобби</a>" in page
    assert ">Войти</a>" in page


def test_a_player_s_choice_is_stored_on_the_account_and_follows_them_to_another_device(client, alice):
    client.force_login(alice)
    switch(client, "ru")
    alice.refresh_from_db()
    assert alice.language == "ru"
    assert ">Выйти</button>" in client.get(reverse("lobby")).text

    other = Client(HTTP_ACCEPT_LANGUAGE="en")  # another device, whose browser asks for English
    assert ">Log in</a>" in other.get(reverse("lobby")).text
    answer = other.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert answer.status_code == 302
    page = other.get(reverse("lobby"))
    assert page["Content-Language"] == "ru"
    assert ">Выйти</button>" in page.text

    switch(other, "en")  # and back, from there
    alice.refresh_from_db()
    assert alice.language == "en"
    assert ">Log out</button>" in client.get(reverse("lobby")).text


def test_an_unknown_language_changes_nothing(client, alice):
    client.force_login(alice)
    switch(client, "de")
    alice.refresh_from_db()
    assert alice.language == ""
    assert client.get(reverse("lobby"))["Content-Language"] == "en"


def test_the_browser_s_language_counts_until_a_choice_is_made(alice):
    browser = Client(HTTP_ACCEPT_LANGUAGE="ru-RU,ru;q=0.9,en;q=0.5")
    assert ">Лобби</a>" in browser.get(reverse("lobby")).text


def test_a_socket_s_language_account_then_cookie_then_accept_language(alice):
    anonymous = type("Anonymous", (), {"is_authenticated": False})()
    assert language.of_scope({"user": anonymous}) == "en"
    accept = {"user": anonymous, "headers": [(b"accept-language", b"de, ru-RU;q=0.8")]}
    assert language.of_scope(accept) == "ru"
    assert language.of_scope({**accept, "cookies": {settings.LANGUAGE_COOKIE_NAME: "en"}}) == "en"
    alice.language = "ru"
    assert language.of_scope({"user": alice, "cookies": {settings.LANGUAGE_COOKIE_NAME: "en"}}) == "ru"
