"""The client-message parser: every action, every argument, both formats, and no crash on any input."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackjack.protocol import ACTIONS, MAX_AMOUNT, parse_message
from cards.errors import Refused
from live.protocol import MAX_FRAME_BYTES


def parse_json(message, **kwargs):
    return parse_message(json.dumps(message), html=False, **kwargs)


def parse_form(message):
    return parse_message(json.dumps(message), html=True)


def refused(frame, *, html=False):
    text = frame if isinstance(frame, str | bytes) else json.dumps(frame)
    with pytest.raises(Refused) as info:
        parse_message(text, html=html)
    return info.value


# --- JSON format: the happy paths ---------------------------------------------------------------------


def test_every_action_parses_with_its_arguments():
    sit = {"action": "sit", "seat": 3, "v": 0}
    assert parse_json(sit) == {"action": "sit", "seat": 3, "seed": None, "v": 0}
    assert parse_json({"action": "sit", "seat": 3, "seed": "my-Seed_1.0", "v": 0})["seed"] == "my-Seed_1.0"
    assert parse_json({"action": "leave", "v": 7}) == {"action": "leave", "seat": None, "v": 7}
    assert parse_json({"action": "leave", "seat": 2, "v": 7})["seat"] == 2
    assert parse_json({"action": "ready", "v": 7}) == {"action": "ready", "v": 7}
    assert parse_json({"action": "bet", "amount": 25, "v": 2}) == {
        "action": "bet",
        "amount": 25,
        "seat": None,
        "v": 2,
    }
    assert parse_json({"action": "bet", "amount": 25, "seat": 7, "v": 2})["seat"] == 7
    assert parse_json({"action": "insurance", "accept": True, "v": 4}) == {
        "action": "insurance",
        "accept": True,
        "seat": None,
        "v": 4,
    }
    assert parse_json({"action": "insurance", "accept": True, "seat": 2, "v": 4})["seat"] == 2
    assert parse_json({"action": "even_money", "accept": False, "v": 4})["accept"] is False
    for name in ("hit", "stand", "double", "split"):
        assert parse_json({"action": name, "v": 9}) == {"action": name, "seat": None, "hand": None, "v": 9}
        assert parse_json({"action": name, "seat": 2, "hand": 3, "v": 9}) == {
            "action": name,
            "seat": 2,
            "hand": 3,
            "v": 9,
        }
    # surrender also answers the early-surrender offer in the insurance window: accept is optional
    assert parse_json({"action": "surrender", "v": 9}) == {
        "action": "surrender",
        "seat": None,
        "hand": None,
        "accept": None,
        "v": 9,
    }
    assert parse_json({"action": "surrender", "accept": False, "seat": 2, "v": 9})["accept"] is False
    assert parse_json({"action": "chat", "text": "  good luck  ", "v": 1}) == {
        "action": "chat",
        "text": "good luck",
        "v": 1,
    }
    emote = {"action": "emote", "emote": "gg", "v": 1}
    assert parse_json(emote) == emote


def test_action_list_matches_the_protocol_table():
    assert set(ACTIONS) == {
        "sit",
        "leave",
        "bet",
        "ready",
        "insurance",
        "even_money",
        "hit",
        "stand",
        "double",
        "split",
        "surrender",
    }  # and the site's own, at every game's table (`live.protocol.SITE_FIELDS`): chat, emote


def test_headers_object_is_ignored_in_both_formats():
    message = {"action": "stand", "v": 3, "HEADERS": {"HX-Request": "true", "HX-Trigger": "controls"}}
    assert parse_json(message) == {"action": "stand", "seat": None, "hand": None, "v": 3}
    assert parse_form(message) == {"action": "stand", "seat": None, "hand": None, "v": 3}


def test_bytes_frames_are_decoded_as_utf8():
    assert parse_message(b'{"action": "ready", "v": 1}', html=False) == {"action": "ready", "v": 1}
    assert refused(b"\xff\xfe{}").code == "bad_message"


# --- JSON format: refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "frame",
    ["", "not json", "{", "[1, 2]", '"text"', "42", "null", "true", "[" * 2000 + "]" * 2000],
)
def test_not_a_json_object_is_bad_message(frame):
    assert refused(frame).code == "bad_message"


def test_missing_or_unknown_action():
    error = refused({"v": 1})
    assert (error.code, "'action'" in error.message) == ("bad_message", True)
    error = refused({"action": "fold", "v": 1})
    assert error.code == "bad_message"
    assert "'fold'" in error.message
    assert refused({"action": ["hit"], "v": 1}).code == "bad_message"
    assert refused({"action": "HIT", "v": 1}).code == "bad_message"


@pytest.mark.parametrize("version", [None, "3", 3.0, True, -1, [], {}, 2**63])
def test_version_must_be_a_non_negative_int(version):
    message = {"action": "stand"} if version is None else {"action": "stand", "v": version}
    error = refused(message)
    assert error.code == "bad_message"
    assert "'v'" in error.message


@pytest.mark.parametrize(
    "amount", [0, -5, MAX_AMOUNT + 1, 10**30, 10.0, 10.5, "100", True, False, [100], {"n": 1}, float("inf")]
)
def test_bad_amounts(amount):
    frame = json.dumps({"action": "bet", "amount": amount, "v": 1})
    error = refused(frame)
    assert error.code == "bad_amount"


def test_amount_bounds_are_inclusive():
    assert parse_json({"action": "bet", "amount": 1, "v": 1})["amount"] == 1
    assert parse_json({"action": "bet", "amount": MAX_AMOUNT, "v": 1})["amount"] == MAX_AMOUNT


def test_missing_amount_is_bad_message_naming_the_field():
    error = refused({"action": "bet", "v": 1})
    assert error.code == "bad_message"
    assert "'amount'" in error.message


@pytest.mark.parametrize("seat", [0, 8, -1, "3", 3.0, True, [3]])
def test_bad_seats(seat):
    for action in ("sit", "bet", "hit"):
        message = {"action": action, "seat": seat, "v": 1, **({"amount": 5} if action == "bet" else {})}
        error = refused(message)
        assert error.code == "bad_message"
        assert "'seat'" in error.message


@pytest.mark.parametrize("seed", ["", "x" * 65, "with space", "semi;colon", "é", 7, True, ["a"], {"a": 1}])
def test_bad_seeds(seed):
    error = refused({"action": "sit", "seat": 1, "seed": seed, "v": 1})
    assert error.code == "bad_message"
    assert "'seed'" in error.message


def test_a_seed_of_64_characters_is_the_longest():
    assert parse_json({"action": "sit", "seat": 1, "seed": "a" * 64, "v": 1})["seed"] == "a" * 64
    assert parse_form({"action": "sit", "seat": "1", "seed": "", "v": "1"})["seed"] is None  # a form's empty


def test_sit_needs_a_seat():
    assert "'seat'" in refused({"action": "sit", "v": 1}).message


@pytest.mark.parametrize("hand", [-1, 4, "0", 1.0, False])
def test_bad_hands(hand):
    error = refused({"action": "double", "hand": hand, "v": 1})
    assert error.code == "bad_message"
    assert "'hand'" in error.message


@pytest.mark.parametrize("accept", [None, "true", 1, 0, "yes", []])
def test_accept_must_be_a_bool(accept):
    message = (
        {"action": "insurance", "v": 1}
        if accept is None
        else {"action": "insurance", "accept": accept, "v": 1}
    )
    error = refused(message)
    assert error.code == "bad_message"
    assert "'accept'" in error.message


@pytest.mark.parametrize(
    "text", ["", "    ", "x" * 301, 5, None, ["hi"], "nul\x00byte", "bell\x07", "line\nbreak"]
)
def test_bad_chat_text(text):
    message = {"action": "chat", "v": 1} if text is None else {"action": "chat", "text": text, "v": 1}
    assert refused(message).code == "bad_message"


def test_chat_length_counts_after_stripping():
    assert len(parse_json({"action": "chat", "text": " " * 50 + "x" * 300 + " " * 50, "v": 1})["text"]) == 300


def test_unpaired_surrogate_in_chat_is_refused():
    frame = '{"action": "chat", "text": "a\\ud800b", "v": 1}'
    assert refused(frame).code == "bad_message"


def test_chat_keeps_markup_verbatim():
    # Escaping is the renderer's job; the parser stores what the player typed.
    assert parse_json({"action": "chat", "text": "<script>alert(1)</script>", "v": 1})["text"] == (
        "<script>alert(1)</script>"
    )


def test_unknown_fields_are_refused_in_json():
    error = refused({"action": "bet", "amout": 100, "amount": 100, "v": 1})
    assert error.code == "bad_message"
    assert "amout" in error.message
    assert refused({"action": "ready", "seat": 2, "v": 1}).code == "bad_message"


def test_an_unknown_emote_is_refused_with_the_list_of_emotes():
    for emote in ("boo", "", 1, None, "GG"):
        error = refused({"action": "emote", "emote": emote, "v": 1})
        assert error.code == "bad_message"
        assert "thumbs_up" in error.message or "needs the field" in error.message


def test_frames_over_the_size_cap_are_refused():
    padding = "x" * MAX_FRAME_BYTES
    assert refused(json.dumps({"action": "chat", "text": "hi", "v": 1, "pad": padding})).code == "bad_message"
    assert refused(b"{" + b" " * MAX_FRAME_BYTES + b"}").code == "bad_message"
    # The cap is in bytes: 1400 three-byte characters exceed it although they are fewer than 4096 characters.
    error = refused(json.dumps({"action": "chat", "text": "€" * 1400, "v": 1}, ensure_ascii=False))
    assert "too large" in error.message


def test_frame_just_under_the_cap_is_read():
    frame = json.dumps({"action": "leave", "v": 1, "HEADERS": {"x": "y" * 4000}})
    assert len(frame) <= MAX_FRAME_BYTES
    assert parse_message(frame, html=False)["action"] == "leave"


# --- HTML (htmx ws-send) format -----------------------------------------------------------------------


def test_form_strings_are_coerced_in_html_format():
    assert parse_form({"action": "bet", "amount": "100", "seat": "3", "v": "12"}) == {
        "action": "bet",
        "amount": 100,
        "seat": 3,
        "v": 12,
    }
    assert parse_form({"action": "sit", "seat": " 4 ", "v": "0"})["seat"] == 4
    assert parse_form({"action": "hit", "seat": "2", "hand": "1", "v": "5"}) == {
        "action": "hit",
        "seat": 2,
        "hand": 1,
        "v": 5,
    }
    assert parse_form({"action": "insurance", "accept": "true", "v": "1"})["accept"] is True
    assert parse_form({"action": "even_money", "accept": "False", "v": "1"})["accept"] is False


def test_empty_optional_form_fields_count_as_absent():
    assert parse_form({"action": "stand", "seat": "", "hand": "", "v": "2"}) == {
        "action": "stand",
        "seat": None,
        "hand": None,
        "v": 2,
    }


def test_html_format_ignores_extra_form_fields():
    message = {"action": "ready", "v": "3", "csrfmiddlewaretoken": "abc", "HEADERS": {"HX-Request": "true"}}
    assert parse_form(message) == {"action": "ready", "v": 3}


def test_html_format_still_accepts_native_json_types():
    assert parse_form({"action": "bet", "amount": 50, "v": 4})["amount"] == 50


@pytest.mark.parametrize(
    "amount", ["", "abc", "1.5", "-5", "0", "1e3", "\u0661\u0660\u0660", str(MAX_AMOUNT + 1), "9" * 40]
)
def test_bad_form_amounts(amount):
    error = refused({"action": "bet", "amount": amount, "v": "1"}, html=True)
    # An empty amount field is a missing amount.
    assert error.code == ("bad_message" if amount == "" else "bad_amount")


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"action": "stand"}, "'v'"),
        ({"action": "stand", "v": ""}, "'v'"),
        ({"action": "stand", "v": "x"}, "'v'"),
        ({"action": "stand", "v": "-1"}, "'v'"),
        ({"action": "sit", "seat": "eight", "v": "1"}, "'seat'"),
        ({"action": "sit", "seat": "", "v": "1"}, "'seat'"),
        ({"action": "hit", "hand": "9", "v": "1"}, "'hand'"),
        ({"action": "insurance", "accept": "maybe", "v": "1"}, "'accept'"),
    ],
)
def test_bad_form_values(message, field):
    error = refused(message, html=True)
    assert error.code == "bad_message"
    assert field in error.message


def test_json_format_does_not_coerce_strings():
    assert refused({"action": "sit", "seat": "3", "v": 1}).code == "bad_message"
    assert refused({"action": "sit", "seat": 3, "v": "1"}).code == "bad_message"
    assert refused({"action": "bet", "amount": "100", "v": 1}).code == "bad_amount"
    assert refused({"action": "insurance", "accept": "true", "v": 1}).code == "bad_message"


# --- no crash on any input ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
field_values = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12) | json_values
messages = st.fixed_dictionaries(
    {},
    optional={
        "action": st.sampled_from([*ACTIONS, "fold", ""]) | st.text(max_size=8),
        "v": field_values,
        "seat": field_values,
        "hand": field_values,
        "amount": field_values,
        "accept": field_values,
        "text": field_values,
        "HEADERS": field_values,
    },
)


def _parse_or_protocol_error(frame, html):
    try:
        result = parse_message(frame, html=html)
    except Refused as error:
        failure = error
    else:
        failure = None
    if failure is not None:
        assert failure.code in {"bad_message", "bad_amount"}
        assert failure.message
        return None
    assert result["action"] in ACTIONS
    assert isinstance(result["v"], int)
    assert not isinstance(result["v"], bool)
    return result


@settings(max_examples=400, deadline=None)
@given(value=json_values, html=st.booleans())
def test_arbitrary_json_values_never_crash(value, html):
    _parse_or_protocol_error(json.dumps(value), html)


@settings(max_examples=400, deadline=None)
@given(message=messages, html=st.booleans())
def test_arbitrary_messages_never_crash_and_results_are_well_typed(message, html):
    result = _parse_or_protocol_error(json.dumps(message), html)
    if result is None:
        return
    if "amount" in result:
        assert isinstance(result["amount"], int)
        assert 1 <= result["amount"] <= MAX_AMOUNT
    for name, low, high in (("seat", 1, 7), ("hand", 0, 3)):
        if result.get(name) is not None:
            assert low <= result[name] <= high
    if "accept" in result:
        # Only early surrender's answer is optional (docs/protocol.md): omitted, it is None.
        optional = result["action"] == "surrender" and result["accept"] is None
        assert optional or isinstance(result["accept"], bool)
    if "text" in result:
        assert 1 <= len(result["text"]) <= 300


@settings(max_examples=400, deadline=None)
@given(frame=st.text(max_size=200) | st.binary(max_size=200), html=st.booleans())
def test_arbitrary_text_and_bytes_never_crash(frame, html):
    _parse_or_protocol_error(frame, html)


def test_early_surrender_answers_parse_in_both_formats():
    assert parse_message('{"action": "surrender", "accept": true, "v": 1}', html=False)["accept"] is True
    form = '{"action": "surrender", "accept": "false", "v": "1", "HEADERS": {}}'
    assert parse_message(form, html=True)["accept"] is False
    with pytest.raises(Refused) as refused:
        parse_message('{"action": "surrender", "accept": "false", "v": 1}', html=False)
    assert refused.value.code == "bad_message"
