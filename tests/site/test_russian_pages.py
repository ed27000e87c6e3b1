"""The site in Russian beyond the lobby and the Durak table: the account pages (their forms, errors, messages
and the password-reset e-mail) and the Durak pages, each fetched in Russian, show Russian and none of their
page's English labels (blackjack's pages: tests/history/test_russian.py). English stays the default."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from durak.models import DurakGame
from tests.durak.live.conftest import open_durak_table, play_out, seat_and_start

RUSSIAN = {"HTTP_ACCEPT_LANGUAGE": "ru"}


def speaks_russian(user):
    user.language = "ru"
    user.save(update_fields=["language"])
    return user


def visible(page: str) -> str:
    """The words a reader sees: no scripts, styles, tags or the language switch (which names English)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r'<form[^>]*action="/i18n/.*?</form>', " ", page, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def check(page: str, russian: list[str], english: list[str]) -> None:
    text = visible(page)
    for words in russian:
        assert words in text, words
    for words in english:
        assert not re.search(rf"\b{re.escape(words)}\b", text), f"left in English: {words!r}"


@pytest.mark.django_db
def test_the_account_pages_in_russian(client, alice):
    alice.email = "alice@example.com"
    alice.save(update_fields=["email"])
    client.defaults.update(RUSSIAN)
    check(
        client.get(reverse("register")).text,
        ["Создайте учётную запись", "10 000 фишек", "Эл. почта", "Уже есть учётная запись?"],
        ["Create your account", "Play money only", "Already have an account", "Email"],
    )
    check(
        client.get(reverse("login")).text,
        ["Войти", "Забыли пароль?", "Зарегистрируйтесь"],
        ["Forgot your password", "New here", "Create an account"],
    )
    check(
        client.get(reverse("password_reset")).text,
        ["Забыли пароль?", "Отправить ссылку"],
        ["Send the link", "Enter the e-mail address"],
    )
    sent = client.post(reverse("password_reset"), {"email": "alice@example.com"}, follow=True)
    check(sent.text, ["Проверьте почту"], ["Check your e-mail", "Back to log in"])
    [letter] = mail.outbox
    assert "пароля в карточном клубе" in letter.subject
    assert "Здравствуйте, alice!" in letter.body
    assert "Придумайте новый пароль" in letter.body
    assert "Hello" not in letter.body

    refused = client.post(
        reverse("register"), {"username": "Dealer", "password1": "x", "password2": "y"}
    ).text
    assert "Это имя другого игрока или заведения" in refused

    client.force_login(speaks_russian(alice))
    client.defaults.clear()
    profile = client.get(reverse("profile")).text
    check(
        profile,
        ["Кошелёк", "Получить ежедневную добавку", "Сохранить профиль", "Последние движения фишек", "Пики"],
        ["Wallet", "Claim daily grant", "Save profile", "Recent chip movements", "Spade", "Welcome grant"],
    )
    assert "Приветственные фишки" in profile  # the ledger's memo of the starting chips
    answer = client.post(reverse("profile"), {"display_name": "", "avatar": "moon", "email": ""}, follow=True)
    assert "Профиль сохранён." in answer.text
    refused = client.post(reverse("claim_grant"), follow=True).text
    assert "Ежедневная добавка — для игроков" in refused
    assert "меньше 1\xa0000 фишек" in refused
    check(
        client.get(reverse("password_change")).text,
        ["Сменить пароль", "Вернуться в профиль"],
        ["Change your password", "Back to your profile"],
    )


@pytest.mark.django_db
def test_the_throttled_log_in_says_how_long_to_wait_in_russian(client, alice, settings):
    client.defaults.update(RUSSIAN)
    for _ in range(6):
        answer = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert answer.status_code == 429
    assert "Подождите 15 минут" in answer.text


@pytest.mark.django_db
def test_the_durak_pages_in_russian(client, alice, bob):
    actor = seat_and_start(open_durak_table(alice, stake=50), alice, bob)
    play_out(actor, {0: alice, 1: bob})
    game = DurakGame.objects.get()
    client.force_login(speaks_russian(alice))
    check(
        client.get(reverse("durak_guide")).text,
        ["Правила дурака", "козырь", "Бито", "Беру", "Подкидной", "Переводной", "Паспорт"],
        ["The deck and the deal", "A bout", "Attack types", "Going out, and the fool", "Provably fair"],
    )
    check(
        client.get(reverse("durak_history")).text,
        ["Ваши игры в дурака", "Соперники", "Повтор"],
        ["Your Durak games", "Against", "Replay", "You won", "You were the fool"],
    )
    replay = client.get(reverse("durak_replay", args=[game.pk])).text
    check(
        replay,
        ["Проверить колоду", "Прикуп", "Сдача", "козырь", "ходит"],
        ["Check the deck", "Talon", "Your hand", "The deal", "You lead", "leads"],
    )
    check(
        client.get(reverse("durak_leaderboard")).text,
        ["Рейтинг в дурака", "Как считается рейтинг"],
        ["Durak leaderboard", "How the rating works", "Fool rate"],
    )
    check(
        client.get(reverse("durak_open")).text,
        ["Открыть стол в дурака", "Кто подкидывает", "Лимит отбоя", "Секунд на ход", "Закрытый стол"],
        ["Open a Durak table", "Attack type", "Turn seconds", "Private table", "Pick the variant"],
    )
    check(
        client.get(reverse("lobby")).text,
        ["Быстрая игра: дурак", "Играть", "Без ставки"],
        ["Quick play", "Casual"],
    )
    check(
        client.get(reverse("profile")).text,
        ["Рейтинговых игр", "Лучшая серия", "Ставка в игре в дурака"],  # the ledger's memo of the stake
        ["Rated games", "Best streak", "Durak game"],
    )


@pytest.mark.django_db
def test_english_stays_the_default_on_these_pages(client, alice):
    check(client.get(reverse("register")).text, ["Create your account", "Already have"], ["Войти"])
    client.force_login(alice)
    check(client.get(reverse("profile")).text, ["Wallet", "Claim daily grant", "Welcome grant"], ["Кошелёк"])
    check(client.get(reverse("durak_guide")).text, ["The deck and the deal", "Bito"], ["Бито"])
