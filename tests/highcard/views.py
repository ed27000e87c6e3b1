from django.shortcuts import get_object_or_404, render

from tests.highcard.models import HighCardRound, HighCardTable


def history(request, table_id: int):
    """A table's rounds, each with its revealed server seed."""
    table = get_object_or_404(HighCardTable, pk=table_id)
    rounds = HighCardRound.objects.filter(table=table).select_related("winner")
    return render(request, "highcard/history.html", {"table": table, "rounds": rounds})
