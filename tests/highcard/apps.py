from django.apps import AppConfig


class HighCardConfig(AppConfig):
    name = "tests.highcard"
    label = "highcard"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from live import games
        from tests.highcard import store
        from tests.highcard.consumer import HighCardConsumer
        from tests.highcard.route import HighCardActor, HighCardRoute

        games.register(
            games.Game(
                name=store.GAME,
                label="High card",
                actor=HighCardActor,
                read_view=store.load,
                chips_in_play=lambda user_id: 0,  # a round stakes and pays in one transaction
                release_user=store.release_user,
                urls="tests.highcard.urls",
                url_prefix="highcard/",
                socket="ws/highcard/<int:table_id>/",
                consumer=HighCardConsumer,
                lobby=games.Lobby(template="highcard/lobby_section.html", rows=store.lobby_rows),
                pages=games.Pages(history="highcard_history"),
            )
        )
        HighCardRoute.serve()
