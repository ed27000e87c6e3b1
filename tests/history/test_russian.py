"""Blackjack in Russian: its pages (lobby section, table page with the chat panel, history, replay,
leaderboard, statistics, fairness, how to play, the open-table form), fetched by a player whose language is
ru, show Russian and none of their main English labels; its refusals are translated by pattern, numbers kept,
and reach a Russian connection in Russian while an English one keeps the game's words."""

import re

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse
from django.utils import translation

from blackjack import eventlog, refusals
from blackjack.templatetags.table_ui import summary_words
from tests.blackjack.conftest import deal_cards
from tests.blackjack.wsclient import CommunicatorClient, session_cookie
from tests.site.test_russian_pages import check, speaks_russian


@pytest.fixture
def played(table, alice, bob, scripted_shoe, play_round):
    scripted_shoe(table, [*deal_cards(["Ts", "7h"], ["9c", "2d"], dealer=["6s", "Td"]), "Kc", "9h"])
    return play_round(table, [(alice, 1, 100), (bob, 2, 50)], [(alice, "stand", {}), (bob, "double", {})])


@pytest.mark.django_db
def test_the_blackjack_pages_and_the_chat_panel_in_russian(client, played, alice, table):
    client.force_login(speaks_russian(alice))
    check(
        client.get(reverse("lobby")).text,
        ["Открыть стол в блэкджек", "Преимущество казино", "Смотреть", "6 колод"],
        ["Open a blackjack table", "House edge", "Watch", "decks"],
    )
    page = client.get(reverse("table", args=[table.pk])).text
    check(
        page,
        [
            "Таблица стратегии",
            "Ваша игра",
            "Журнал стола",
            "Доказуемо честный шуз",
            "Чат",
            "Отправить",
            "Реакции",
        ],
        ["Strategy chart", "Your play", "Table log", "Provably fair shoe", "Chat", "Send", "Reactions"],
    )
    assert 'placeholder="Скажите что-нибудь приятное"' in page
    assert ">Хорошая рука</button>" in page
    # The connection banner's words, which the page's script shows (a lost connection, flooding).
    assert 'data-flooded="Соединение разорвано: слишком много сообщений.' in page
    assert re.search(r'id="connection"[^>]*>Переподключение', page)
    check(
        client.get(reverse("blackjack_history")).text,
        ["История раздач", "1 раздача", "Отобрать", "Выгрузить:"],
        ["Hand history", "1 round", "Filter", "Export", "All tables", "Any result"],
    )
    replay = client.get(reverse("round_replay", args=[played.pk])).text
    assert 'data-text="Шаг {step} из {steps}"' in replay  # the words replay.js counts the steps with
    check(
        replay,
        ["Раздача", "Ставки открыты.", "Итоги", "Честность", "выигрыш", "Дилер:"],
        ["Results", "Fairness", "Bets open", "Replay", "Dealer:"],
    )
    check(
        client.get(reverse("blackjack_leaderboard")).text,
        ["Рейтинг в блэкджеке", "Больше всего фишек", "Игрок"],
        ["Blackjack leaderboard", "Most chips", "Player"],
    )
    check(
        client.get(reverse("player_profile", args=["bob"])).text,
        ["Выиграно", "Самая длинная серия", "Тренер"],
        ["Hands", "Longest streak", "Coach", "Net result"],
    )
    check(
        client.get(reverse("fairness")).text,
        ["Доказуемо честные шузы", "Проверить любой шуз", "Зерно клиента"],
        ["Provably fair shoes", "Check any shoe", "Client seed"],
    )
    check(
        client.get(reverse("how_to_play")).text,
        ["Как играть в блэкджек", "«Ещё»", "«Хватит»", "«Удвоить»", "«Сплит»", "Страховка"],
        ["How to play blackjack", "The aim", "A round, step by step", "What the rule codes mean"],
    )
    check(
        client.get(reverse("open_table")).text,
        ["Открыть стол в блэкджек", "Минимальная ставка", "Закрытый стол"],
        ["Open a blackjack table", "Minimum bet", "Maximum bet", "Private table"],
    )
    refused = client.post(
        reverse("open_table"), {"name": "Мой стол", "preset": table.preset_id, "min_bet": 50, "max_bet": 10}
    ).text
    assert "Максимальная ставка не может быть меньше минимальной." in refused


def test_blackjack_refusals_are_translated_by_pattern_keeping_their_numbers():
    with translation.override("ru"):
        assert refusals.translated("seat_taken", "Seat 3 is taken.") == "Место 3 занято."
        assert (
            refusals.translated("bad_amount", "the bet must be between 10 and 500 chips")
            == "Ставка должна быть от 10 до 500 фишек."
        )
        assert refusals.translated("illegal_action", "You cannot double now.") == "Сейчас нельзя: «Удвоить»."
        short = refusals.translated(
            "insufficient_chips", "Not enough chips: this needs 1,000 and the balance is 20."
        )
        assert "нужно 1,000" in short
        assert "счёте 20." in short
        assert refusals.translated("rate_limited", "Too many messages: at most 20 a second.") == (
            "Слишком много сообщений: не больше 20 в секунду."
        )
        assert refusals.translated("illegal_action", "a wording not seen before") == "Сейчас так нельзя."
        assert refusals.translated("something_new", "as worded") == "as worded"
        assert summary_words("1 deck · H17 · no hole card · split to 3 · 3:2") == (
            "1 колода · H17 · без закрытой карты · сплит до 3 · 3:2"
        )
    with translation.override("en"):  # English keeps the game's own words
        assert refusals.translated("seat_taken", "Seat 3 is taken.") == "Seat 3 is taken."
        assert refusals.translated("illegal_action", "You cannot double now.") == "You cannot double now."


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_live_table_and_a_refusal_reach_a_russian_socket_in_russian_and_an_english_one_in_english(
    table, alice, bob
):
    await database_sync_to_async(speaks_russian)(alice)
    clients = []
    for user in (alice, bob):
        cookie = await database_sync_to_async(session_cookie)(user)
        client = CommunicatorClient(user.username, f"/ws/tables/{table.pk}/", cookie=cookie)
        assert await client.connect()
        clients.append(client)
    russian, english = clients
    try:
        first = [await client.receive() for client in clients]  # the first state: the live table's regions
        assert ">Сесть</button>" in first[0]
        assert "Пока ничего не произошло." in first[0]
        assert ">Sit</button>" in first[1]
        assert "Сесть" not in first[1]
        for client in clients:
            await client.send({"action": "bet", "amount": 10, "v": 0})  # nobody is seated: refused
        seen = ""
        while "flash-message" not in seen:
            seen += await russian.receive()
        # Bets are not open (or, had v=0 gone stale, the table changed): in Russian either way.
        assert "Ставки сейчас не принимаются." in seen or "Пока вы смотрели, за столом всё изменилось" in seen
        seen = ""
        while "flash-message" not in seen:
            seen += await english.receive()
        assert "Bets are not open now." in seen or "The table has changed" in seen
        assert "Ставки" not in seen
    finally:
        for client in clients:
            await client.close()


@pytest.mark.django_db
def test_the_live_table_in_russian_with_the_words_of_the_table(client, table, alice, scripted_shoe, act):
    scripted_shoe(table, deal_cards(["9s", "2h"], dealer=["6s", "Td"]))
    act(table, alice, "sit", seat=1)
    act(table, alice, "bet", amount=100, seat=1)  # the only bet: the cards go out, Alice's turn on 11
    client.force_login(speaks_russian(alice))
    page = client.get(reverse("table", args=[table.pk])).text
    check(
        page,
        ["Ваш ход", "Ещё", "Хватит", "Удвоить", "Сплит", "Сдаться", "Осталось карт:", "Уйти"],
        ["Your turn", "Hit", "Stand", "Double", "Split", "Surrender", "Cards left", "Leave seat", "Dealer"],
    )
    # The event log, worded in English by the pure flow, reads in Russian with its names and numbers kept.
    check(
        page,
        ["Alice садится на место 1.", "Alice ставит 100 на место 1.", "Открытая карта дилера: 6."],
        ["sits down", "bets 100", "Cards are dealt"],
    )
    act(table, alice, "stand")  # the dealer turns the hole card and draws, frame by frame
    page = client.get(reverse("table", args=[table.pk])).text
    check(
        page,
        ["Играет дилер", "Дилер открывает закрытую карту и добирает", "Alice: «Хватит» на 11 (место 1)."],
        ["Dealer plays", "stands on"],
    )

    client.force_login(speaks_russian_not(alice))
    english = client.get(reverse("table", args=[table.pk])).text
    check(english, ["Dealer plays", "Alice stands on 11 (seat 1)."], ["Играет дилер", "Хватит"])


def speaks_russian_not(user):
    user.language = "en"
    user.save(update_fields=["language"])
    return user


def test_event_lines_are_translated_by_pattern_and_unknown_ones_stay():
    with translation.override("ru"):
        assert eventlog.translated("Bob doubles on 11: Kc, 21 (seat 2).") == (
            "Bob удваивает на 11 — Kc, 21 (место 2)."
        )
        assert eventlog.translated("Ann Lee splits a pair of eights (seat 3).") == (
            "Ann Lee делает сплит: пара, восьмёрки (место 3)."
        )
        assert eventlog.translated("Bob wins 150 (blackjack, insurance lost, seat 2).") == (
            "Bob выигрывает 150 (блэкджек, страховка проиграна, место 2)."
        )
        assert eventlog.translated(
            "New shoe of 6 decks; seed hash 0a1b..., client seed 9f... from 2 player seeds."
        ) == ("Новый шуз: 6 колод; хеш зерна 0a1b..., зерно клиента 9f... из: 2 зерна игроков.")
        assert eventlog.translated("A notice from the staff.") == "A notice from the staff."
    with translation.override("en"):
        assert eventlog.translated("Bob surrenders (seat 2).") == "Bob surrenders (seat 2)."
