"""Template helpers of the Durak pages, and the live table's (`durak.rendering` hands those to its Jinja2
macros): labels and the JSON each button sends. No rules here: what may be played comes from the engine's
`allowed` list in the view."""

import json

from django import template
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext, gettext_noop, pgettext

from cards.faces import RANK_LABELS
from durak.engine import RANKS, SUITS
from durak.forms import QuickPlayForm
from durak.models import OPTION_LABELS
from live.faces import card_face

register = template.Library()


def _short(card: str) -> str:
    face = card_face(card)
    return f"{face['rank']}{face['suit']}"


def action_label(action: dict, taking: bool = False) -> str:
    """A move's button, in the words players say at the table: "Done" is "Бито" in Russian when it ends a bout
    of beaten cards, and "Пас" while the defender takes (`taking`: nothing more to throw in)."""
    name = action["action"]
    if name == "attack":
        return gettext("Play %(card)s") % {"card": _short(action["card"])}
    if name == "beat":
        return gettext("Beat %(target)s with %(card)s") % {
            "target": _short(action["target"]),
            "card": _short(action["card"]),
        }
    if name == "transfer":
        return gettext("Transfer with %(card)s") % {"card": _short(action["card"])}
    if name == "take":
        return pgettext("durak: the defender takes the cards", "Take")
    if name == "done":
        if taking:
            return pgettext("durak: nothing more to throw in while the defender takes", "Done")
        return pgettext("durak: the attacker ends the bout, every card beaten", "Done")
    if name == "surrender":
        return pgettext("durak: concede the game", "Surrender")
    return name


@register.filter
def card_chip(card: str, trump_suit: str = "") -> str:
    """A small face-up card of the pages around the table (history.css's `.pc`): "Th" -> 10♥ in red, its
    name as the tooltip; a trump (of `trump_suit`) is outlined."""
    face = card_face(card)
    classes = (
        "pc" + (" pc-red" if face["colour"] == "red" else "") + (" pc-trump" if card[1] == trump_suit else "")
    )
    return format_html(
        '<span class="{}" title="{}">{}{}</span>', classes, face["label"], face["rank"], face["suit"]
    )


#: A replay's sentences, (the viewer's, another player's): each language words "you" and "Bob" apart.
_STEP_WORDS = {
    "lead": (gettext_noop("You lead %(card)s"), gettext_noop("%(name)s leads %(card)s")),
    "throw": (gettext_noop("You throw in %(card)s"), gettext_noop("%(name)s throws in %(card)s")),
    "beat": (
        gettext_noop("You beat %(target)s with %(card)s"),
        gettext_noop("%(name)s beats %(target)s with %(card)s"),
    ),
    "transfer": (
        gettext_noop("You transfer the attack with %(card)s"),
        gettext_noop("%(name)s transfers the attack with %(card)s"),
    ),
    "take": (gettext_noop("You take"), gettext_noop("%(name)s takes")),
    "surrender": (gettext_noop("You concede the game"), gettext_noop("%(name)s concedes the game")),
    "done": (gettext_noop("You are done"), gettext_noop("%(name)s is done")),
    "picked_up": (
        gettext_noop("You pick up the bout's cards"),
        gettext_noop("%(name)s picks up the bout's cards"),
    ),
    "fool": (gettext_noop("You are the fool"), gettext_noop("%(name)s is the fool")),
}


def _sentence(key: str, me: bool, name: str, **cards) -> str:
    """One of `_STEP_WORDS`'s sentences in the active language, the name in bold and the cards as chips
    (`cards`: already safe HTML)."""
    return _html(
        gettext(_STEP_WORDS[key][0 if me else 1]), name=format_html("<strong>{}</strong>", name), **cards
    )


def _html(text: str, **words) -> str:
    """A translated sentence with %(name)s placeholders as safe HTML, the values escaped unless safe."""
    return format_html(
        text.replace("{", "{{").replace("}", "}}").replace("%(", "{").replace(")s", "}"), **words
    )


@register.filter
def replay_step(step: dict) -> str:
    """A replay step in words: who did what, how the bout closed, how the game ended (`durak.views._step`)."""
    trump = step["trump_suit"]
    action = step.get("action")
    if action is None:
        return _html(
            gettext("<strong>The deal</strong>: six cards each; trump %(card)s"),
            card=card_chip(step["view"]["trump"], trump),
        )
    me, who, kind = step["who_me"], step["who"], action["action"]
    chips = {key: card_chip(action[key], trump) for key in ("card", "target") if key in action}
    if kind == "attack":
        parts = [_sentence("lead" if step["lead"] else "throw", me, who, **chips)]
    elif kind in _STEP_WORDS:
        parts = [_sentence(kind, me, who, **chips)]
    else:
        parts = [_sentence("done", me, who)]
    if step["by_bot"]:
        parts[0] = format_html('{} <span class="muted">{}</span>', parts[0], gettext("(played by the bot)"))
    if kind == "take" and not step.get("closed"):
        parts[0] = format_html(
            '{} <span class="muted">{}</span>', parts[0], gettext("(the attackers may still throw in)")
        )
    if step.get("closed") == "taken":
        parts.append(_sentence("picked_up", step["defender_me"], step["defender"]))
    elif step.get("closed") == "beaten":
        parts.append(gettext("bito: the bout's cards are discarded"))
    if step["view"]["finished"]:
        if step.get("fool"):
            ending = _sentence("fool", step["fool_me"], step["fool"])
        else:
            ending = format_html("<strong>{}</strong>", gettext("a draw"))
        parts.append(ending)
    return format_html_join(" · ", "{}", ((part,) for part in parts))


def action_json(action: dict) -> str:
    """The message a button sends for this engine action (the server fills in the seat)."""
    return json.dumps({key: value for key, value in action.items() if key != "player"})


def card_moves(game: dict) -> list[dict]:
    """The viewer's hand (by suit, trumps last, each suit by rank), each card with the one action it plays
    when clicked (None: no single action; the buttons below the hand list every choice)."""
    allowed = game.get("allowed") or []
    trump_suit = game["trump"][1]
    hand = sorted(
        game.get("hand") or [], key=lambda c: (c[1] == trump_suit, SUITS.index(c[1]), RANKS.index(c[0]))
    )
    moves = []
    for card in hand:
        plays = [action for action in allowed if action.get("card") == card]
        moves.append({"card": card, "action": plays[0] if len(plays) == 1 else None, "playable": bool(plays)})
    return moves


def choices(game: dict) -> list[dict]:
    """The actions shown as buttons: take and done, and every move of a card that has more than one."""
    allowed = game.get("allowed") or []
    per_card: dict[str, int] = {}
    for action in allowed:
        if "card" in action:
            per_card[action["card"]] = per_card.get(action["card"], 0) + 1
    return [action for action in allowed if "card" not in action or per_card[action["card"]] > 1]


def seconds_left(deadline: str | None) -> int:
    moment = parse_datetime(deadline) if deadline else None
    if moment is None:
        return 0
    return max(0, round((moment - timezone.now()).total_seconds()))


def seat_name(view: dict, seat) -> str:
    if seat is None:
        return ""
    return view["seats"][seat]["name"]


def player_name(game: dict, seat) -> str:
    """The name of the player the game dealt `seat` to (one who left since is named as such)."""
    names = game.get("names") or []
    return names[seat] if seat is not None and 0 <= seat < len(names) else ""


def last_move(view: dict) -> str:
    """The game's last move in words: "Bob beats 7♥ with 9♥", "Bot 2 takes", and when a player's move was
    made for them, why (nothing to add, their time ran out, or they left and the bot plays)."""
    game = view.get("game") or {}
    last = game.get("last")
    if not last:
        return ""
    seat = view["seats"][last["seat"]]
    action, name = last["action"], player_name(game, last["seat"])
    kind = action["action"]
    words = {"name": name, "card": _short(action["card"]) if "card" in action else ""}
    if kind == "beat":
        words["target"] = _short(action["target"])
        text = gettext("%(name)s beats %(target)s with %(card)s") % words
    elif kind == "attack":
        text = gettext("%(name)s plays %(card)s") % words
    elif kind == "transfer":
        text = gettext("%(name)s transfers with %(card)s") % words
    elif kind == "take":
        text = gettext("%(name)s takes") % words
    elif kind == "done":
        text = gettext("%(name)s is done") % words
    elif kind == "surrender":
        text = gettext("%(name)s concedes the game") % words
    else:
        text = f"{name} {kind}"
    if last["by_bot"] and not game["bots"][last["seat"]]:
        if seat["away"]:
            text = gettext("%(move)s (the bot plays for them)") % {"move": text}
        elif kind == "done":
            text = gettext("%(move)s (nothing to add)") % {"move": text}
        else:
            text = gettext("%(move)s (their time ran out)") % {"move": text}
    return gettext("%(move)s.") % {"move": text}


def backs(count) -> range:
    """The card backs drawn for an opponent's hand: one a card, at most eight (the count says the rest)."""
    return range(min(int(count or 0), 8))


def rank_label(rank: str) -> str:
    """A rank as players write it: "T" -> "10"."""
    return RANK_LABELS.get(rank, rank)


@register.filter
def option_label(value: str) -> str:
    """A table option's name in the viewer's language: "all_sides" -> "All sides"."""
    label = OPTION_LABELS.get(value)
    return str(label) if label is not None else words(value)


def words(value: str) -> str:
    """An option's name as words: "all_sides" -> "all sides"."""
    return str(value).replace("_", " ")


@register.filter
def signed(value) -> str:
    """A change as players read it, rounded to a whole number: "+12", "-30", "±0"."""
    number = round(value)
    if number == 0:
        return "±0"
    return f"+{number:,}" if number > 0 else f"-{-number:,}"


def rating_change(rating: dict) -> str:
    """A rating's change in a game to a tenth, signed: "+12.4", "-8.0", "±0.0"."""
    change = round(rating["after"] - rating["before"], 1)
    if change == 0:
        return "±0.0"
    return f"{change:+.1f}"


@register.simple_tag
def quick_play_form():
    """Quick play's form (`durak.forms.QuickPlayForm`), for the lobby page's Durak footer."""
    return QuickPlayForm()
