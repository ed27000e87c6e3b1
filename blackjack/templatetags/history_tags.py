# The history tag library lives with the history code; this makes it loadable as {% load history_tags %}.
from blackjack.history.tags import register  # noqa: F401
