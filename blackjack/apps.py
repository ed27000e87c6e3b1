from django.apps import AppConfig


class BlackjackConfig(AppConfig):
    """Blackjack. The app keeps the label "tables" it was made with, so its migrations and database tables
    stay as they are."""

    name = "blackjack"
    label = "tables"
    verbose_name = "Blackjack"
