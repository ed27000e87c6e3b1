"""The table's live partials and template filters, rendered from hand-built view dicts (no database).

The dicts follow the view-model shape of `blackjack.viewmodel.build_table_view`; `test_views.py` renders the
same templates from real views.
"""

import copy
from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import AnonymousUser
from django.template.loader import render_to_string
from django.utils import timezone

from blackjack.rendering import region
from blackjack.templatetags import table_ui

LIVE_IDS = {
    "table-version",
    "table-status",
    "dealer",
    "seats",
    "controls",
    "event-log",
    "shoe-info",
    "nav-balance",
    "flash",
}


class LoggedIn:
    """Stands in for a logged-in user in the template context (templates only ask is_authenticated)."""

    is_authenticated = True
    username = "alice"


class Element:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.parts: list = []  # text and child elements, in document order

    @property
    def children(self):
        return [part for part in self.parts if isinstance(part, Element)]

    @property
    def text(self):
        return "".join(part for part in self.parts if isinstance(part, str))

    def all(self):
        yield self
        for child in self.children:
            yield from child.all()

    def matches(self, tag, attrs):
        if tag is not None and self.tag != tag:
            return False
        for key, value in attrs.items():
            if key == "class_":
                if not set(value.split()) <= set((self.attrs.get("class") or "").split()):
                    return False
            elif self.attrs.get(key.replace("_", "-")) != value:
                return False
        return True

    def find_all(self, tag=None, **attrs):
        """Nodes with this tag and attributes; `class_` matches elements having those classes."""
        return [node for node in self.all() if node.matches(tag, attrs)]

    def has_class(self, name):
        return name in (self.attrs.get("class") or "").split()

    def text_content(self):
        text = "".join(part if isinstance(part, str) else f" {part.text_content()} " for part in self.parts)
        return " ".join(text.split())


VOID = {"input", "img", "br", "meta", "link", "hr"}


class Tree(HTMLParser):
    """A tiny DOM: enough to ask which top-level elements a fragment has and what they contain."""

    def __init__(self, html):
        super().__init__()
        self.root = Element("#root", [], None)
        self.current = self.root
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        node = Element(tag, attrs, self.current)
        self.current.parts.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        assert node is not self.root, f"unmatched </{tag}>"
        self.current = node.parent

    def handle_data(self, data):
        self.current.parts.append(data)


def parse(html) -> Element:
    tree = Tree(html)
    assert tree.current is tree.root, f"unclosed <{tree.current.tag}>"
    return tree.root


def seat(number, player, *, hands=(), is_turn=False, **extra):
    return {
        "seat": number,
        "player": player,
        "display_name": player.title() if player else None,
        "avatar": "spade" if player else None,
        "avatar_url": "/static/avatars/spade.svg" if player else None,
        "bet": sum(hand["bet"] for hand in hands),
        "insurance": 0,
        "insurance_payout": 0,
        "in_round": bool(hands),
        "hands": list(hands),
        "ready": False,
        "sitting_out": False,
        "leaving": False,
        "connected": bool(player),
        "is_turn": is_turn,
    } | extra


def hand(cards, *, bet=100, total=None, soft=False, status="active", result=None, payout=None, is_turn=False):
    return {
        "cards": cards,
        "bet": bet,
        "total": total,
        "soft": soft,
        "status": status,
        "result": result,
        "payout": payout,
        "doubled": False,
        "split": False,
        "is_turn": is_turn,
    }


def playing_view():
    """Alice (seat 2) to act on soft 17 against a dealer ace with the hole card hidden; Bob sits at 5."""
    deadline = (timezone.now() + timedelta(seconds=15)).isoformat().replace("+00:00", "Z")
    return {
        "type": "state",
        "v": 42,
        "table": {
            "id": 3,
            "name": "High <roller>",
            "min_bet": 10,
            "max_bet": 5000,
            "phase": "playing",
            "deadline": deadline,
            "deadline_seconds": 20,
            "turn": {"seat": 2, "hand": 0},
            "dealer": {"cards": ["As", None], "total": 11, "soft": True, "hole_hidden": True},
            "seats": [
                seat(1, None),
                seat(2, "alice", hands=[hand(["Ah", "6d"], total=17, soft=True, is_turn=True)], is_turn=True),
                seat(3, None),
                seat(4, None),
                seat(5, "bob", hands=[hand(["Td", "9c"], bet=15_200, total=19, status="stood")]),
                seat(6, None),
                seat(7, None),
            ],
            "seats_total": 7,
            "shoe": {"id": 8, "hash": "ab" * 32, "cards_left": 287, "decks": 6},
            "round_id": 11,
            "round_number": 4,
            "rules": {
                "blackjack_payout": "3:2",
                "dealer_hits_soft_17": False,
                "dealer_peek": True,
                "original_bets_only": False,
            },
            "rules_summary": "6 decks · S17 · DAS · LS · 3:2",
            "is_private": False,
            "is_open": True,
            "events": [
                {"at": "2026-11-22T08:00:01Z", "text": "Alice bets 100.", "kind": "bet"},
                {"at": "2026-11-22T08:00:09Z", "text": "Cards are dealt.", "kind": "deal"},
            ],
        },
        "you": {
            "username": "alice",
            "display_name": "Alice",
            "balance": 9_900,
            "seats": [2],
            "allowed": ["chat", "double", "hit", "leave", "stand"],
            "allowed_by_seat": {"2": ["hit", "stand", "double"]},
            "hint": {"seat": 2, "hand": 0, "action": "double"},
            "can_sit": True,
            "is_spectator": False,
        },
    }


def spectator(view):
    watched = copy.deepcopy(view)
    watched["you"] = {
        "username": None,
        "display_name": None,
        "balance": None,
        "seats": [],
        "allowed": [],
        "allowed_by_seat": {},
        "hint": None,
        "can_sit": False,
        "is_spectator": True,
    }
    return watched


def render_live(view=None, *, user=None, error=None):
    context = {"view": view, "user": user if user is not None else LoggedIn(), "error": error}
    return parse(str(region("page", context)))


def by_id(root, element_id):
    found = [node for node in root.all() if node.attrs.get("id") == element_id]
    assert len(found) == 1, f"{len(found)} elements with id {element_id!r}"
    return found[0]


# --- the live fragment: its shape is the contract with the consumer -------------------------------------


def test_live_fragment_is_only_out_of_band_elements_with_fixed_ids():
    root = render_live(playing_view())
    tops = root.children
    assert {node.attrs.get("id") for node in tops} == LIVE_IDS
    assert len(tops) == len(LIVE_IDS)
    for node in tops:
        expected = "innerHTML" if node.attrs["id"] == "flash" else "true"
        assert node.attrs.get("hx-swap-oob") == expected, node.attrs["id"]
    assert root.text.strip() == "", "text outside the top-level elements would be dropped by htmx"


def test_every_id_in_the_fragment_is_unique_and_non_empty():
    ids = [node.attrs["id"] for node in render_live(playing_view()).all() if "id" in node.attrs]
    assert all(ids)
    assert len(ids) == len(set(ids))


def test_refusal_alone_renders_only_the_flash():
    html = str(region("flash", {"error": {"code": "not_your_turn", "message": "Wait <your> turn."}}))
    root = parse(html)
    assert [node.attrs["id"] for node in root.children] == ["flash"]
    assert "Wait &lt;your&gt; turn." in html
    assert root.children[0].find_all(class_="flash-message flash-not_your_turn")


def test_flash_is_empty_without_an_error_so_a_later_update_clears_it():
    flash = by_id(render_live(playing_view()), "flash")
    assert flash.children == []
    assert flash.text == ""


def test_fragment_without_a_view_touches_nothing_but_the_flash():
    root = render_live(None, error={"code": "bad_message", "message": "What?"})
    assert [node.attrs["id"] for node in root.children] == ["flash"]


def test_the_chat_log_alone_renders_from_the_consumer_chat_context():
    lines = [
        {"id": 1, "from": "bob", "display_name": "Bob", "text": "<script>alert(1)</script> gl", "at": "x"}
    ]
    html = render_to_string("live/chat.html#chat_log", {"chat": lines})
    root = parse(html)
    assert [node.attrs["id"] for node in root.children] == ["chat-log"]
    assert root.children[0].attrs["hx-swap-oob"] == "true"
    assert "&lt;script&gt;alert(1)&lt;/script&gt; gl" in html
    assert "<script>" not in html


def test_every_form_gets_the_current_version():
    holder = by_id(render_live(playing_view()), "table-version")
    assert holder.attrs["data-v"] == "42"
    versions = {node.attrs["form"]: node.attrs["value"] for node in holder.find_all("input", name="v")}
    assert versions == dict.fromkeys(table_ui.WS_FORMS, "42")


# --- what a player sees --------------------------------------------------------------------------------


def test_hidden_hole_card_is_a_card_back_and_totals_read_as_players_say_them():
    root = render_live(playing_view())
    dealer = by_id(root, "dealer")
    cards = dealer.find_all(role="img")
    assert [card.attrs["aria-label"] for card in cards] == ["Ace of spades", "Face-down card"]
    assert cards[1].has_class("card-back")
    assert "soft 11" in dealer.text_content()
    alice = by_id(root, "seats").find_all("li")[1]
    assert "soft 17" in alice.text_content()


def test_cards_are_drawn_with_rank_suit_and_colour():
    root = render_live(playing_view())
    labels = {card.attrs["aria-label"]: card for card in by_id(root, "seats").find_all(role="img")}
    assert labels["Six of diamonds"].has_class("card-red")
    assert labels["Nine of clubs"].has_class("card-black")
    ten = labels["Ten of diamonds"]
    assert ten.find_all(class_="card-rank")[0].text == "10"
    assert ten.find_all(class_="card-suit")[0].text == "♦"


def test_only_the_allowed_actions_are_enabled():
    controls = by_id(render_live(playing_view()), "controls")
    buttons = {node.attrs["value"]: node for node in controls.find_all("button", form="form-play")}
    enabled = {name for name, node in buttons.items() if "disabled" not in node.attrs}
    assert enabled == {"hit", "stand", "double"}
    leave = controls.find_all("button", form="form-leave")  # no seat: every seat of the player's
    assert [node.attrs["id"] for node in leave] == ["play-leave"]
    assert "disabled" not in leave[0].attrs
    assert {"split", "surrender"} <= set(buttons)
    assert buttons["hit"].attrs["data-key"] == "h"
    assert buttons["surrender"].attrs["aria-keyshortcuts"] == "R"


@pytest.mark.parametrize(
    ("peek", "original_bets_only", "note"),
    [
        (True, False, None),
        (False, False, "No hole card: a dealer blackjack takes doubles and splits too."),
        (False, True, "No hole card: a dealer blackjack takes only your original bet."),
    ],
)
def test_a_no_hole_card_table_warns_before_a_double_or_split(peek, original_bets_only, note):
    view = playing_view()
    view["table"]["rules"].update(dealer_peek=peek, original_bets_only=original_bets_only)
    text = by_id(render_live(view), "controls").text_content()
    assert ("No hole card" in text) is (note is not None)
    if note:
        assert note in " ".join(text.split())
    view["you"]["allowed"] = ["hit", "stand", "leave", "chat"]  # nothing more to lose: no warning
    view["you"]["allowed_by_seat"] = {"2": ["hit", "stand"]}
    assert "No hole card" not in by_id(render_live(view), "controls").text_content()


def test_play_form_names_the_seat_and_hand_whose_turn_it_is():
    controls = by_id(render_live(playing_view()), "controls")
    hidden = {
        node.attrs["name"]: node.attrs["value"] for node in controls.find_all("input", form="form-play")
    }
    assert hidden == {"seat": "2", "hand": "0"}


def test_leaving_on_your_own_turn_asks_first():
    def leave_button(view):
        return by_id(by_id(render_live(view), "controls"), "play-leave")

    assert leave_button(playing_view()).attrs["data-confirm"] == "Leave now? Your hand stands."
    bobs_turn = playing_view()
    bobs_turn["table"]["turn"] = {"seat": 5, "hand": 0}
    assert "data-confirm" not in leave_button(bobs_turn).attrs


def test_whose_turn_is_obvious():
    root = render_live(playing_view())
    status = by_id(root, "table-status").text_content()
    assert "Your turn" in status
    seats = by_id(root, "seats").find_all("li")
    assert seats[1].has_class("seat-turn")
    assert seats[1].has_class("seat-mine")
    assert "Your turn" in seats[1].text_content()
    assert not seats[4].has_class("seat-turn")

    watched = render_live(spectator(playing_view()), user=AnonymousUser())
    assert "Waiting for Alice" in by_id(watched, "table-status").text_content()
    assert "Your turn" not in by_id(watched, "seats").text_content()


def test_hint_is_rendered_for_the_toggle_to_show():
    hint = by_id(render_live(playing_view()), "controls").find_all(class_="hint")
    assert len(hint) == 1
    assert "Double" in hint[0].text_content()
    view = playing_view()
    view["you"]["hint"] = None
    assert by_id(render_live(view), "controls").find_all(class_="hint") == []


def test_countdown_starts_from_the_seconds_left_at_render_time():
    countdown = by_id(render_live(playing_view()), "table-status").find_all(class_="countdown")[0]
    left = int(countdown.attrs["data-seconds-left"])
    assert 13 <= left <= 15
    bar = countdown.find_all("progress")[0]
    assert bar.attrs["max"] == "20"

    view = playing_view()
    view["table"]["deadline"] = None
    (countdown,) = by_id(render_live(view), "table-status").find_all(class_="countdown")
    assert "hidden" in countdown.attrs
    assert "data-seconds-left" not in countdown.attrs


def test_bets_show_as_coloured_chips_with_short_amounts():
    chips = by_id(render_live(playing_view()), "seats").find_all(class_="chip")
    assert [(chip.attrs["class"], chip.text_content()) for chip in chips] == [
        ("chip chip-blue", "Bet 100"),
        ("chip chip-black", "Bet 15.2K"),
    ]


def test_empty_seats_offer_sit_only_to_who_may_sit():
    root = render_live(playing_view())
    sit = by_id(root, "seats").find_all("button", form="form-sit")
    assert [button.attrs["value"] for button in sit] == ["1", "3", "4", "6", "7"]
    # The viewer holds a seat: the open ones offer another seat, they do not say "Sit".
    assert all(button.attrs["aria-label"] == f"Take seat {button.attrs['value']} as well" for button in sit)
    view = playing_view()
    view["you"]["seats"] = []
    sit = by_id(render_live(view), "seats").find_all("button", form="form-sit")
    assert all(button.attrs["aria-label"].startswith("Sit in seat") for button in sit)

    view = playing_view()
    view["you"]["can_sit"] = False
    assert by_id(render_live(view), "seats").find_all("button") == []


def test_spectator_gets_no_controls_and_no_balance():
    root = render_live(spectator(playing_view()), user=AnonymousUser())
    assert "nav-balance" not in {node.attrs.get("id") for node in root.children}
    controls = by_id(root, "controls")
    assert controls.find_all("button") == []
    assert controls.find_all("a")[0].attrs["href"].startswith("/accounts/login/")
    assert by_id(root, "seats").find_all("button") == []


def test_balance_updates_the_header_and_the_status_bar():
    root = render_live(playing_view())
    assert "Your chips 9,900" in by_id(root, "table-status").text_content()
    assert "chips" not in by_id(render_live(spectator(playing_view())), "table-status").text_content()
    balance = by_id(root, "nav-balance")
    assert balance.text == "9,900"
    assert balance.attrs["data-balance"] == "9900"


def test_betting_controls_post_the_amount_to_each_own_seat():
    view = playing_view()
    view["table"] |= {"phase": "betting", "turn": None}
    view["you"] |= {"seats": [2, 6], "allowed": ["bet", "chat", "leave"], "hint": None}
    view["you"]["allowed_by_seat"] = {"2": ["bet"], "6": []}
    controls = by_id(render_live(view), "controls")
    amount = controls.find_all("input", name="amount")[0]
    assert (amount.attrs["form"], amount.attrs["min"], amount.attrs["max"]) == ("form-bet", "10", "5000")
    assert "hx-preserve" in amount.attrs
    bets = controls.find_all("button", form="form-bet")
    assert [(b.attrs["value"], "disabled" in b.attrs) for b in bets] == [("2", False), ("6", True)]
    chips = [
        (b.attrs["data-chip"], b.attrs["class"]) for b in controls.find_all("button", class_="chip-button")
    ]
    # Each denomination its own colour, the colours of the bets on the felt.
    assert chips == [
        ("5", "chip chip-button chip-red"),
        ("25", "chip chip-button chip-green"),
        ("100", "chip chip-button chip-blue"),
        ("500", "chip chip-button chip-purple"),
        ("1000", "chip chip-button chip-orange"),
        ("5000", "chip chip-button chip-black"),
    ]
    assert controls.find_all(class_="play-group") == []


def test_a_player_sitting_out_is_told_the_table_will_not_wait_for_their_bet():
    view = playing_view()
    view["table"] |= {"phase": "betting", "turn": None}
    view["you"] |= {"allowed": ["bet", "chat", "leave"], "allowed_by_seat": {"2": ["bet"]}, "hint": None}
    assert "Place your bet" in by_id(render_live(view), "table-status").text_content()
    view["table"]["seats"][1]["sitting_out"] = True  # seat 2, alice's
    status = by_id(render_live(view), "table-status").text_content()
    assert "You are sitting out" in status
    assert "as soon as the others have bet" in status
    assert "Place your bet" not in status
    view["table"]["seats"][1]["sitting_out"] = False
    view["table"]["seats"][0]["sitting_out"] = True  # someone else's seat
    assert "Place your bet" in by_id(render_live(view), "table-status").text_content()


def test_a_settled_seat_shows_what_its_insurance_did():
    view = playing_view()
    mine = view["table"]["seats"][1]
    mine["insurance"] = 50
    assert "Insured 50" in by_id(render_live(view), "seats").text_content()
    view["table"] |= {"phase": "settled", "turn": None}
    mine["insurance_payout"] = 150
    assert "Insurance +100" in by_id(render_live(view), "seats").text_content()
    mine["insurance_payout"] = 0
    assert "Insurance \u221250" in by_id(render_live(view), "seats").text_content()


def test_insurance_offers_take_and_decline():
    view = playing_view()
    view["table"] |= {"phase": "insurance", "turn": None}
    view["you"] |= {"allowed": ["chat", "insurance", "leave"], "hint": None}
    controls = by_id(render_live(view), "controls")
    answers = [(b.attrs["form"], b.attrs["value"]) for b in controls.find_all("button", name="accept")]
    assert answers == [("form-insurance", "true"), ("form-insurance", "false")]


def test_early_surrender_offer_has_surrender_and_keep_playing():
    view = playing_view()
    view["table"] |= {"phase": "insurance", "turn": None}
    view["you"] |= {"allowed": ["chat", "insurance", "leave", "surrender"], "hint": None}
    controls = by_id(render_live(view), "controls")
    answers = [(b.attrs["form"], b.attrs["value"]) for b in controls.find_all("button", name="accept")]
    assert answers == [
        ("form-early-surrender", "true"),
        ("form-early-surrender", "false"),
        ("form-insurance", "true"),
        ("form-insurance", "false"),
    ]
    assert not controls.find_all(class_="play-button")  # hit/stand wait for the playing phase


def test_settled_round_shows_results_and_ready():
    view = playing_view()
    view["table"] |= {"phase": "settled", "turn": None}
    view["table"]["dealer"] = {"cards": ["As", "7h", "Kd"], "total": 18, "soft": False, "hole_hidden": False}
    view["table"]["seats"][1] = seat(
        2, "alice", hands=[hand(["Ah", "Kd"], total=21, status="blackjack", result="blackjack", payout=250)]
    )
    view["table"]["seats"][4] = seat(5, "bob", hands=[hand(["Td", "7c"], total=17, result="lose", payout=0)])
    view["you"] |= {"allowed": ["chat", "leave", "ready"], "hint": None}
    root = render_live(view)
    results = [node.text_content() for node in by_id(root, "seats").find_all(class_="result")]
    assert results == ["Blackjack! +150", "Lose \u2212100"]
    ready = by_id(root, "controls").find_all("button", value="ready")[0]
    assert "disabled" not in ready.attrs
    assert by_id(root, "dealer").find_all(class_="card-back") == []


def test_event_log_is_newest_first_with_times():
    entries = by_id(render_live(playing_view()), "event-log").find_all("li")
    assert [entry.text_content() for entry in entries] == [
        "08:00:09 Cards are dealt.",
        "08:00:01 Alice bets 100.",
    ]
    assert entries[0].find_all("time")[0].attrs["datetime"] == "2026-11-22T08:00:09+00:00"


def test_shoe_hash_and_cards_left():
    shoe = by_id(render_live(playing_view()), "shoe-info").text_content()
    assert "ab" * 32 in shoe
    assert "287" in shoe
    assert "312" in shoe


def test_player_text_is_escaped_everywhere():
    view = playing_view()
    view["table"]["seats"][4]["display_name"] = "<img src=x onerror=alert(1)>"
    view["table"]["events"][0]["text"] = "<b>bold</b>"
    html = str(region("page", {"view": view, "user": LoggedIn()}))
    assert "<img src=x" not in html
    assert "<b>bold" not in html


# --- filters ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (0, "0"),
        (5, "5"),
        (999, "999"),
        (1_000, "1K"),
        (1_500, "1.5K"),
        (15_200, "15.2K"),
        (15_299, "15.2K"),
        (999_999, "999.9K"),
        (1_000_000, "1M"),
        (2_050_000, "2M"),
        (2_150_000, "2.1M"),
        (3_000_000_000, "3B"),
        (-1_500, "-1.5K"),
        ("250", "250"),
        (None, ""),
    ],
)
def test_chips_short(amount, text):
    assert table_ui.chips_short(amount) == text


@pytest.mark.parametrize(
    ("amount", "tier"),
    [
        (1, "red"),
        (24, "red"),
        (25, "green"),
        (99, "green"),
        (100, "blue"),
        (499, "blue"),
        (500, "purple"),
        (1_000, "orange"),
        (4_999, "orange"),
        (5_000, "black"),
        (25_000, "gold"),
        (1_000_000, "gold"),
    ],
)
def test_chip_tier(amount, tier):
    assert table_ui.chip_tier(amount) == tier


def test_card_face_every_suit_and_rank():
    faces = {card: table_ui.card_face(card) for card in ("As", "Th", "Qd", "7c")}
    assert [face["suit"] for face in faces.values()] == ["♠", "♥", "♦", "♣"]
    assert [face["colour"] for face in faces.values()] == ["black", "red", "red", "black"]
    assert [face["rank"] for face in faces.values()] == ["A", "10", "Q", "7"]
    assert faces["Qd"]["label"] == "Queen of diamonds"
    assert table_ui.card_face(None) == {"hidden": True, "label": "Face-down card"}


def test_hand_total():
    assert table_ui.hand_total({"total": 17, "soft": True}) == "soft 17"
    assert table_ui.hand_total({"total": 17, "soft": False}) == "17"
    assert table_ui.hand_total({"total": None, "soft": False}) == ""
    assert table_ui.hand_total({"total": 21, "soft": True, "cards": ["As", "Kd"]}) == "Blackjack"
    assert table_ui.hand_total({"total": 21, "soft": True, "cards": ["As", "Kd"], "split": True}) == "soft 21"
    assert table_ui.hand_total({"total": 21, "soft": False, "cards": ["7s", "4d", "Kd"]}) == "21"
    assert table_ui.hand_total({"total": 11, "soft": True, "cards": ["As", None]}) == "soft 11"  # hole down
    assert table_ui.hand_total({"total": 22, "soft": False, "cards": ["Ts", "6d", "6h"]}) == "22 bust"


def test_seconds_left_and_clock():
    soon = timezone.now() + timedelta(seconds=30)
    assert 29 <= table_ui.seconds_left(soon.isoformat()) <= 30
    assert table_ui.seconds_left((timezone.now() - timedelta(seconds=5)).isoformat()) == 0
    assert table_ui.seconds_left(None) == ""
    assert table_ui.clock("2026-11-22T08:03:04Z") == "08:03:04"
    assert table_ui.clock("2026-11-22T09:03:04+01:00") == "08:03:04"
    assert table_ui.clock("not a time") == ""


def test_seat_slots_fill_the_arc():
    slots = table_ui.seat_slots({"seats": [{"seat": 3, "player": "a"}], "seats_total": 7})
    assert [slot["seat"] for slot in slots] == [1, 2, 3, 4, 5, 6, 7]
    assert [slot["arc"] for slot in slots] == [3, 2, 1, 0, 1, 2, 3]
    assert slots[2]["player"] == "a"
    assert slots[0]["player"] is None
    assert [slot["arc"] for slot in table_ui.seat_slots({"seats": [], "seats_total": 4})] == [1, 0, 0, 1]


def test_results_read_as_signed_chips():
    assert table_ui.net_result({"bet": 100, "payout": 250}) == 150
    assert table_ui.net_result({"bet": 100, "payout": None}) == 0
    assert table_ui.signed_chips(1_500) == "+1,500"
    assert table_ui.signed_chips(-1_250) == "\u22121,250"  # exact: never rounded to "1.2K"
    assert table_ui.signed_chips(-50) == "\u221250"
    assert table_ui.signed_chips(0) == "0"


def test_an_early_surrender_offer_alone_is_not_called_insurance():
    view = playing_view()
    view["table"] |= {"phase": "insurance", "turn": None}
    view["table"]["dealer"] = {"cards": ["Kc", None], "total": 10, "soft": False, "hole_hidden": True}
    view["you"] |= {"allowed": ["chat", "leave", "surrender"], "hint": None}
    status = by_id(render_live(view), "table-status").text_content()
    assert "Surrender now or play on?" in status
    assert "insurance" not in status.lower()
    assert "Early surrender?" in status
    view["table"]["dealer"]["cards"] = ["Ac", None]
    view["you"]["allowed"] = ["chat", "insurance", "leave", "surrender"]
    status = by_id(render_live(view), "table-status").text_content()
    assert "Insurance?" in status
    assert "Decide on insurance" in status


@pytest.mark.parametrize(
    ("hands", "insurance", "banner"),
    [
        ([("blackjack", 250)], None, ("good", "Blackjack! +150")),
        ([("win", 200), ("lose", 0)], None, ("neutral", "Push 0")),
        ([("win", 200), ("win", 200)], None, ("good", "You win +200")),
        ([("lose", 0)], (50, 150), ("neutral", "Push 0")),
        ([("lose", 0)], None, ("bad", "You lose \u2212100")),
        ([("surrender", 50)], None, ("bad", "Surrendered \u221250")),
    ],
)
def test_the_result_banner_sums_the_viewers_round(hands, insurance, banner):
    view = playing_view()
    view["table"] |= {"phase": "settled", "turn": None}
    mine = seat(2, "alice", hands=[hand(["Td", "9c"], total=19, result=r, payout=p) for r, p in hands])
    if insurance:
        mine["insurance"], mine["insurance_payout"] = insurance
    view["table"]["seats"][1] = mine
    view["you"] |= {"allowed": ["chat", "leave", "ready"], "hint": None}
    found = by_id(render_live(view), "round-banner")
    assert (found.attrs["data-tone"], found.text_content()) == banner


def test_no_banner_for_a_spectator_or_before_the_settlement():
    view = playing_view()
    assert "round-banner" not in region("page", {"view": view, "user": LoggedIn()})
    view["table"] |= {"phase": "settled", "turn": None}
    view["table"]["seats"][1] = seat(
        2, "alice", hands=[hand(["Td", "9c"], total=19, result="win", payout=200)]
    )
    assert "round-banner" not in region("page", {"view": spectator(view), "user": AnonymousUser()})
