from django.apps import AppConfig


class DurakConfig(AppConfig):
    name = "durak"
    verbose_name = "Durak"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from durak import remote, services
        from durak.actor import DurakActor, load
        from durak.models import GAME
        from live import games

        games.register(
            games.Game(
                name=GAME,
                label="Durak",
                actor=DurakActor,
                read_view=load,
                chips_in_play=services.chips_in_play,
                release_user=lambda user: remote.release_user_seats(user=user),
            )
        )
        remote.DurakRoute.serve()
