"""The site's pages over every registered game: the lobby (`lobby.sections`, live over `/ws/lobby/`), a
player's public page, and the way into the games' histories and leaderboards."""

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe

from live import games
from lobby import sections


def lobby(request):
    page = page_of(request.GET.get("page"))
    game = sections.chosen(request.GET.get("game"))
    context = {
        "page": page,
        "game": game,
        "footers": [found.lobby.footer for found in sections.shown(game) if found.lobby.footer],
        # The sections are the games' own templates, rendered (and escaped) by them.
        "sections": mark_safe(sections.html(game=game, page=page, user=request.user)),
    }
    return render(request, "lobby/lobby.html", context)


def page_of(value: str | None) -> int:
    """The page a query asks for (`?page=N`): 1 unless N is a small whole number."""
    if value and value.isascii() and value.isdigit() and len(value) <= 6:
        return int(value)
    return 1


def player(request, username: str):
    """A player's public page: every game's section of it, without balance, e-mail or ledger."""
    user = get_object_or_404(get_user_model(), username=username, is_active=True, suspended=False)
    owner = request.user.is_authenticated and request.user.pk == user.pk
    return render(request, "lobby/player.html", {"player": user, "owner": owner})


@login_required
def history(request):
    """The first game's history; each game's history page has tabs to the others'."""
    return _first_page("history")


def leaderboards(request):
    """The first game's leaderboard; each game's leaderboard has tabs to the others'."""
    return _first_page("leaderboard")


def _first_page(kind: str):
    for game in games.all_games():
        name = getattr(game.pages, kind)
        if name:
            return redirect(name)
    raise Http404("No game has such a page.")
