from django.apps import AppConfig
from django.utils.translation import gettext_noop


class BlackjackConfig(AppConfig):
    """Blackjack. The app keeps the label "tables" it was made with, so its migrations and database tables
    stay as they are."""

    name = "blackjack"
    label = "tables"
    verbose_name = "Blackjack"

    def ready(self) -> None:
        from blackjack import demo, operations, remote, selectors, services, viewmodel
        from blackjack.actors import BlackjackActor
        from blackjack.consumers import BlackjackConsumer
        from blackjack.history.views import profile_section
        from blackjack.models import GAME
        from blackjack.services import floats
        from live import games

        games.register(
            games.Game(
                name=GAME,
                label=gettext_noop("Blackjack"),
                actor=BlackjackActor,
                read_view=viewmodel.read_shared,
                chips_in_play=selectors.chips_in_play,
                release_user=lambda user: operations.release_user_seats(user=user),
                recover=services.recover_tables,
                upkeep=(games.Upkeep(floats.REBALANCE_SECONDS, floats.rebalance, "rebalancing the floats"),),
                urls="blackjack.urls",
                socket="ws/tables/<int:table_id>/",
                consumer=BlackjackConsumer,
                lobby=games.Lobby(
                    template="blackjack/lobby_section.html",
                    rows=viewmodel.lobby_section,
                    footer="blackjack/partials/rules_key.html",
                ),
                pages=games.Pages(
                    history="blackjack_history", leaderboard="blackjack_leaderboard", guide="how_to_play"
                ),
                profile=profile_section,
                seed_demo=demo.seed,
            )
        )
        remote.Route.serve()
