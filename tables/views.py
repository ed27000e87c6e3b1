from django.contrib.auth.decorators import login_required
from django.shortcuts import render


def lobby(request):
    return render(request, "tables/lobby.html")


def leaderboard(request):
    return render(request, "tables/coming_soon.html", {"title": "Leaderboard"})


@login_required
def history(request):
    return render(request, "tables/coming_soon.html", {"title": "History"})
