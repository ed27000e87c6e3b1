"""Pages: leaderboards, the player's history and its exports, round replay with fairness, public profiles."""

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils import timezone

from accounts.models import LedgerEntry
from blackjack.engine.rules import RuleSet
from blackjack.history import exports, selectors
from blackjack.history.charts import line_chart
from blackjack.history.fairness import verify_command
from blackjack.history.forms import HistoryFilter
from blackjack.history.records import Mistake, PlayerRound
from blackjack.history.replay import replay_round
from blackjack.models import ActionLog, Round

HISTORY_PAGE_SIZE = 25


def leaderboard(request):
    key = request.GET.get("board", "chips")
    if key not in selectors.BOARDS:
        key = "chips"
    board = selectors.leaderboard(key=key, viewer=request.user)
    context = {
        "boards": selectors.BOARDS.values(),
        "lb": board,
        "min_hands": selectors.MIN_HANDS_FOR_WIN_RATE,
    }
    return render(request, "blackjack/history/leaderboard.html", context)


def _history_rows(request):
    form = HistoryFilter(request.GET or None, tables=selectors.tables_played(user=request.user))
    rows = selectors.player_rounds(user=request.user, **form.filters())
    return form, rows


@login_required
def history(request):
    form, rows = _history_rows(request)
    page = Paginator(rows, HISTORY_PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page": page, "query": query.urlencode()}
    return render(request, "blackjack/history/history.html", context)


@login_required
def history_export(request, fmt: str):
    if fmt not in ("csv", "json"):
        raise Http404("Export as CSV or JSON.")
    _, rows = _history_rows(request)
    rows = rows.iterator(chunk_size=2000)
    stamp = timezone.now().strftime("%Y%m%d")
    if fmt == "csv":
        response = StreamingHttpResponse(exports.csv_lines(rows), content_type="text/csv; charset=utf-8")
    else:
        response = StreamingHttpResponse(
            exports.json_chunks(rows, user=request.user), content_type="application/json"
        )
    filename = f"blackjack-history-{request.user.username}-{stamp}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def round_replay(request, round_id: int):
    """Any finished round of a public table (a private table's rounds: its players and staff only). Only the
    viewer's own ledger entries and coach notes are shown; other players appear by public name and bets."""
    rnd = get_object_or_404(Round.objects.select_related("table", "shoe"), pk=round_id)
    viewer = request.user if request.user.is_authenticated else None
    if rnd.table.is_private and not (viewer and (viewer.is_staff or _played_at(viewer, rnd.table_id))):
        raise Http404("No such round.")
    if not rnd.is_over:
        raise Http404("This round is still being played: watch it at the table.")
    seat_users = {seat["seat"]: seat["user_id"] for seat in (rnd.results or {}).get("seats", [])}
    users = get_user_model().objects.in_bulk(set(seat_users.values()))
    names = {seat: users[uid].public_name for seat, uid in seat_users.items() if uid in users}
    actions = list(ActionLog.objects.filter(round_id=rnd.pk).order_by("seq"))
    replay = replay_round(rnd, actions, names=names) if not rnd.voided else None
    entries, mistakes = [], []
    if viewer is not None:
        entries = list(LedgerEntry.objects.filter(round_ref=rnd.pk, wallet__user_id=viewer.pk).order_by("id"))
        mistakes = list(Mistake.objects.filter(round_id=rnd.pk, user_id=viewer.pk).order_by("id"))
    finished = Round.objects.filter(table_id=rnd.table_id, settled_at__isnull=False)
    previous = finished.filter(number__lt=rnd.number).order_by("-number").values_list("pk", flat=True).first()
    following = finished.filter(number__gt=rnd.number).order_by("number").values_list("pk", flat=True).first()
    shoe = rnd.shoe
    context = {
        "previous_round": previous,
        "next_round": following,
        "rnd": rnd,
        "table": rnd.table,
        "rules": RuleSet.from_dict(rnd.rules),
        "replay": replay,
        "results": _result_rows(rnd, users),
        "entries": entries,
        "mistakes": mistakes,
        "shoe": shoe,
        "revealed": shoe.revealed_seed is not None,
        "verify_command": verify_command(
            shoe, ran_out_from=replay.start_position if replay and replay.discards_dealt else None
        ),
    }
    return render(request, "blackjack/history/replay.html", context)


def _played_at(user, table_id: int) -> bool:
    return PlayerRound.objects.filter(user_id=user.pk, table_id=table_id).exists()


def _result_rows(rnd: Round, users: dict) -> list[dict]:
    rows = []
    for seat in (rnd.results or {}).get("seats", []):
        user = users.get(seat["user_id"])
        rows.append(
            {
                "seat": seat["seat"],
                "user": user,
                "stake": seat["stake"],
                "returned": seat["returned"],
                "net": seat["net"],
                "hands": seat["hands"],
            }
        )
    return rows


def profile_section(user, owner: bool) -> str:
    """Blackjack's section of a player's profile and public page (`live.games.Game.profile`)."""
    return render_to_string(
        "blackjack/history/_stats.html", {**stats_context(user=user, owner=owner), "player": user}
    )


def stats_context(*, user, owner: bool) -> dict:
    """What `history/_stats.html` draws. The owner's chart is their balance (from the ledger); anyone else
    sees the cumulative net result of play instead, which reveals no balance. The coach's notes (the share of
    decisions unlike basic strategy and the costliest of them) are the owner's, unless the player chose to
    show them (`User.show_mistakes`)."""
    stats = selectors.player_stats(user=user)
    if owner:
        chart = line_chart(selectors.balance_points(user=user))
    else:
        chart = line_chart(selectors.net_points(user=user, stats=stats))
    return {
        "stats": stats,
        "chart": chart,
        "chart_is_balance": owner,
        "show_coach": owner or user.show_mistakes,
        "mistakes": selectors.costliest_mistakes(user=user) if owner or user.show_mistakes else [],
        "min_hands": selectors.MIN_HANDS_FOR_WIN_RATE,
    }


def fairness(request):
    return render(request, "blackjack/history/fairness.html")
