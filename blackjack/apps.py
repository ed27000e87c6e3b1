from django.apps import AppConfig


class BlackjackConfig(AppConfig):
    """Blackjack. The app keeps the label "tables" it was made with, so its migrations and database tables
    stay as they are."""

    name = "blackjack"
    label = "tables"
    verbose_name = "Blackjack"

    def ready(self) -> None:
        from blackjack import operations, remote, selectors, services, viewmodel
        from blackjack.actors import BlackjackActor
        from blackjack.models import GAME
        from blackjack.services import floats
        from live import games

        games.register(
            games.Game(
                name=GAME,
                label="Blackjack",
                actor=BlackjackActor,
                read_view=viewmodel.read_shared,
                chips_in_play=selectors.chips_in_play,
                release_user=lambda user: operations.release_user_seats(user=user),
                recover=services.recover_tables,
                upkeep=(games.Upkeep(floats.REBALANCE_SECONDS, floats.rebalance, "rebalancing the floats"),),
            )
        )
        remote.Route.serve()
