"""Durak pages: open a table, the table (its live part rendered by the partial the consumer sends), the
leaderboard, a player's finished games and a game's replay from its action log."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext, pgettext
from django.views.decorators.http import require_POST

from cards.errors import Refused
from durak import exports, quick, refusals, services
from durak.actor import load
from durak.engine import Match, shuffled_deck, start_game, view_for
from durak.engine.cards import RANKS, SUITS
from durak.engine.game import apply
from durak.engine.rules import VARIANTS
from durak.forms import OpenDurakTableForm, QuickPlayForm
from durak.models import GAME, MAX_TURN_SECONDS, MIN_TURN_SECONDS, DurakGame, DurakTable, Status
from durak.table import GRACE_SECONDS, READY_SECONDS, bot_name
from durak.view import table_view
from live import chat, private


@login_required
def open_table(request):
    form = OpenDurakTableForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            created = services.open_table(user=request.user, **form.cleaned_data)
        except Refused as refusal:
            form.add_error(None, refusals.translated(refusal.code, refusal.message))
        else:
            return redirect("durak_table", table_id=created.pk)
    return render(request, "durak/open_table.html", {"form": form})


@login_required
@require_POST
def quick_play(request):
    """Seat the player for a game of the chosen variant, stake and number of players (`durak.quick`)."""
    form = QuickPlayForm(request.POST)
    if not form.is_valid():
        messages.error(request, gettext("Choose a variant, a stake and a number of players."))
        return redirect("lobby")
    try:
        table_id = quick.quick_play(user=request.user, **form.cleaned_data)
    except Refused as refusal:
        messages.error(request, refusals.translated(refusal.code, refusal.message))
        return redirect("lobby")
    return redirect("durak_table", table_id=table_id)


def table(request, table_id: int):
    token = private.token_of(request, game=GAME, table_id=table_id)
    row = services.visible_table(table_id, user=request.user, token=token)
    if row is None:
        raise Http404("No such Durak table, or it is private.")
    try:
        loaded = load(table_id)
    except DurakTable.DoesNotExist:
        raise Http404("No such Durak table.") from None
    user_id = request.user.pk if request.user.is_authenticated else None
    invite = reverse("durak_join", args=[row.private_token]) if row.is_private else None
    context = {
        "view": table_view(loaded, user_id),
        "ws_url": f"/ws/durak/{table_id}/" + (f"?{urlencode({'token': token})}" if token else ""),
        "invite_url": request.build_absolute_uri(invite) if invite else None,
        **chat.panel(game=GAME, table_id=table_id),
    }
    return render(request, "durak/table.html", context)


def join(request, token: str):
    """A private table's invitation link: remember the token for this browser, then show the table."""
    found = get_object_or_404(
        DurakTable.objects.exclude(status=Status.CLOSED), private_token=token, is_private=True
    )
    private.remember(request, game=GAME, table_id=found.pk, token=token)
    return redirect("durak_table", table_id=found.pk)


def guide(request):
    """The rules of Durak as the site plays them: the deck, a bout, the variants and options, the fool,
    stakes, rating, bots and timeouts, and the provably fair deck (its figures come from the settings and the
    table flow, so the page says what the tables do)."""
    context = {
        "grace_seconds": GRACE_SECONDS,
        "ready_seconds": READY_SECONDS,
        "min_turn_seconds": MIN_TURN_SECONDS,
        "max_turn_seconds": MAX_TURN_SECONDS,
        "min_opponents": settings.DURAK_LEADERBOARD_MIN_OPPONENTS,
        "new_account_limit": settings.NEW_ACCOUNT_STAKE_LIMIT,
        "new_account_days": settings.NEW_ACCOUNT_DAYS,
        "new_account_games": settings.NEW_ACCOUNT_GAMES,
    }
    return render(request, "durak/guide.html", context)


def leaderboard(request):
    """One variant's leaderboard (`?variant=`, Podkidnoy by default): rating, games, fool rate, streaks."""
    variant = request.GET.get("variant") or VARIANTS[0]
    if variant not in VARIANTS:
        raise Http404("No such Durak variant.")
    context = {
        "ratings": services.leaderboard(variant),
        "min_opponents": settings.DURAK_LEADERBOARD_MIN_OPPONENTS,
        "variant": variant,
        "variants": [(name, name.capitalize()) for name in VARIANTS],
    }
    return render(request, "durak/leaderboard.html", context)


@login_required
def history(request):
    return render(request, "durak/history.html", {"games": services.played_games(request.user)})


@login_required
def history_export(request, fmt: str):
    """Every finished game of the player, as CSV or JSON, with its seeds (the history page shows the last
    50)."""
    if fmt not in ("csv", "json"):
        raise Http404("Export as CSV or JSON.")
    games = (
        request.user.durak_games.filter(finished=True)
        .select_related("table")
        .order_by("-finished_at")
        .iterator(chunk_size=500)
    )
    if fmt == "csv":
        body = exports.csv_lines(games, request.user.pk)
        response = StreamingHttpResponse(body, content_type="text/csv; charset=utf-8")
    else:
        body = exports.json_chunks(games, user=request.user)
        response = StreamingHttpResponse(body, content_type="application/json")
    stamp = timezone.now().strftime("%Y%m%d")
    filename = f"durak-history-{request.user.username}-{stamp}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def replay(request, game_id: int):
    """A finished game step by step, rebuilt by the engine from its seeds and action log, as the requesting
    player saw it (their own hand; the others' counts)."""
    game = get_object_or_404(DurakGame.objects.select_related("table"), pk=game_id, finished=True)
    if request.user.pk not in game.players:
        raise Http404("You did not play this game.")
    seat = game.players.index(request.user.pk)
    names = _seat_names(game, viewer=seat)
    deck = shuffled_deck(server_seed=game.server_seed, client_seed=game.client_seed, nonce=game.nonce)
    state = start_game(Match.from_dict(game.match), deck)
    before = view_for(state, seat)
    steps = [_step(None, before, before, names, game.players, seat)]
    for row in game.actions.order_by("version"):
        state = apply(state, row.action)
        after = view_for(state, seat)
        steps.append(_step(row, before, after, names, game.players, seat))
        before = after
    context = {
        "game": game,
        "seat": seat,
        "opponents": [name for other, name in enumerate(names) if other != seat],
        "steps": steps,
        "deck": deck,
        "matches": state.to_dict() == game.state,
    }
    return render(request, "durak/replay.html", context)


def _seat_names(game: DurakGame, *, viewer: int) -> list[str]:
    """Per seat of `game`: "You" (in the active language) for the viewer, a player's public name, or the
    bot's name."""
    users = get_user_model().objects.in_bulk([user for user in game.players if user is not None])
    return [
        pgettext("durak replay: the viewer", "You")
        if seat == viewer
        else users[user].public_name
        if user in users
        else bot_name(seat)
        for seat, user in enumerate(game.players)
    ]


def _step(row, before: dict, after: dict, names: list[str], players: list[int | None], viewer: int) -> dict:
    """One line of the replay: who did what (`row`: the action log's row; None: the deal) and the game as
    the viewer saw it after, with the bout's end said in words (picked up, or beaten off: bito); `*_me`: that
    player is the viewer (a sentence's own wording, `durak_ui.replay_step`)."""
    trump_suit = after["trump"][1]
    step = {
        "view": after,
        "trump_suit": trump_suit,
        # By suit, trumps last, each suit by rank: as the table shows a hand.
        "hand": sorted(
            after["hand"], key=lambda c: (c[1] == trump_suit, SUITS.index(c[1]), RANKS.index(c[0]))
        ),
        "counts": [(names[seat], count) for seat, count in enumerate(after["hand_counts"])],
    }
    if row is None:
        return step
    action = row.action
    player = action["player"]
    step |= {
        "action": action,
        "who": names[player],
        "who_me": player == viewer,
        # A player's seat played by the bot: a timeout, or they had left.
        "by_bot": row.by_bot and players[player] is not None,
        "lead": action["action"] == "attack" and not before["table"],
    }
    if after["finished"]:
        step["fool"] = names[after["fool"]] if after["fool"] is not None else None
        step["fool_me"] = after["fool"] == viewer
    if after["bout"] > before["bout"]:
        taken = before["taking"] or action["action"] == "take"
        step["closed"] = "taken" if taken else "beaten"
        step["defender"] = names[before["defender"]]
        step["defender_me"] = before["defender"] == viewer
    return step


def profile_section(user, owner: bool) -> str:
    """Durak's section of a player's profile and public page (`live.games.Game.profile`)."""
    context = {
        "player": user,
        "owner": owner,
        "ratings": services.ratings_of(user),
        "games": user.durak_games.filter(finished=True).count(),
    }
    return render_to_string("durak/profile_section.html", context)
