"""Pages of the tables app. Thin: read through the view model, write through `blackjack.services`, render.

The live part of the table page is rendered by the same partial the websocket consumer sends
(`blackjack/live.jinja`), so a first load and every update look alike.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from accounts.preferences import preferences_of
from blackjack import refusals, remote, services
from blackjack.engine.rules import RuleSet
from blackjack.engine.strategy import basic_strategy
from blackjack.forms import OpenTableForm
from blackjack.models import GAME, Table
from blackjack.viewmodel import (
    TableUnavailable,
    build_table_view,
    visible_table,
)
from cards.errors import Refused
from live import chat, private

#: How often "Sit" from the lobby tries again when another player takes the seat first.
SIT_ATTEMPTS = 3
#: Open tables a player (not staff) may have opened: one person cannot fill the lobby.
MAX_OPEN_TABLES_PER_PLAYER = 3


def _private_token(request, table_id: int) -> str | None:
    return private.token_of(request, game=GAME, table_id=table_id)


def _visible_or_404(request, table_id: int) -> Table:
    try:
        token = _private_token(request, table_id)
        return visible_table(table_id=table_id, user=request.user, private_token=token)
    except TableUnavailable:
        raise Http404("No such table, or it is private.") from None


def table(request, table_id: int):
    found = _visible_or_404(request, table_id)
    token = _private_token(request, found.pk)
    invite_url = None
    if found.is_private:
        invite_url = request.build_absolute_uri(reverse("join_private", args=[found.private_token]))
    context = {
        "view": build_table_view(table_id=found.pk, user=request.user, now=timezone.now()),
        "ws_url": f"/ws/tables/{found.pk}/" + (f"?{urlencode({'token': token})}" if token else ""),
        "invite_url": invite_url,
        **chat.panel(game=GAME, table_id=found.pk),
        "preferences": preferences_of(request.user) if request.user.is_authenticated else None,
    }
    return render(request, "blackjack/table.html", context)


def strategy_chart(request, table_id: int):
    """The basic-strategy chart for the rules the table plays now, computed by the engine (a partial for the
    table page's dialog)."""
    found = _visible_or_404(request, table_id)
    rules = build_table_view(table_id=found.pk, user=request.user)["table"]["rules"]
    chart = basic_strategy(RuleSet.from_dict(rules)).chart()
    return render(request, "blackjack/partials/strategy_chart.html", {"chart": chart, "rules": rules})


def how_to_play(request):
    return render(request, "blackjack/how_to_play.html")


@require_POST
@login_required
def sit(request, table_id: int):
    """One click from the lobby: take the first free seat, then show the table."""
    found = _visible_or_404(request, table_id)
    for _ in range(SIT_ATTEMPTS):
        view = build_table_view(table_id=found.pk, user=request.user)
        if view["you"]["seats"]:
            break
        free = [seat["seat"] for seat in view["table"]["seats"] if seat["player"] is None]
        if not free or not view["you"]["can_sit"]:
            messages.info(
                request, gettext("There is no seat for you at this table right now; you are watching.")
            )
            break
        action = {"action": "sit", "seat": free[0], "v": view["v"]}
        command = {"op": "act", "message": action, "user": request.user.pk}
        try:
            remote.Route.from_sync(  # through the table's owner, if a live process holds it
                found.pk,
                command,
                lambda action=action: services.perform(
                    table_id=found.pk, user=request.user, action=action, expected_version=action["v"]
                ),
            )
            break
        except Refused as refusal:
            if refusal.code not in ("seat_taken", "stale_version"):
                messages.error(request, refusals.translated(refusal.code, refusal.message))
                break
    return redirect("table", table_id=found.pk)


@login_required
def open_table(request):
    form = OpenTableForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            created = services.open_table(
                user=request.user,
                name=data["name"],
                preset=data["preset"],
                min_bet=data["min_bet"],
                max_bet=data["max_bet"],
                private=data["private"],
            )
        except Refused as refusal:
            form.add_error(None, refusals.translated(refusal.code, refusal.message))
        else:
            return redirect("table", table_id=created.pk)
    return render(request, "blackjack/open_table.html", {"form": form})


def join_private(request, token: str):
    """The invitation link of a private table: remember the token for this browser, then show the table."""
    found = get_object_or_404(Table, private_token=token, is_private=True, is_open=True)
    private.remember(request, game=GAME, table_id=found.pk, token=token)
    return redirect("table", table_id=found.pk)
