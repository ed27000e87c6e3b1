from django.apps import AppConfig
from django.utils.translation import gettext_noop


class DurakConfig(AppConfig):
    name = "durak"
    verbose_name = "Durak"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import memos
        from durak import demo, remote, services, views
        from durak.actor import DurakActor, load
        from durak.consumers import DurakConsumer
        from durak.models import GAME
        from live import games

        games.register(
            games.Game(
                name=GAME,
                label=gettext_noop("Durak"),
                actor=DurakActor,
                read_view=load,
                chips_in_play=services.chips_in_play,
                release_user=lambda user: remote.release_user_seats(user=user),
                urls="durak.urls",
                url_prefix="durak/",
                socket="ws/durak/<int:table_id>/",
                consumer=DurakConsumer,
                lobby=games.Lobby(
                    template="durak/lobby_section.html",
                    rows=services.lobby_section,
                    footer="durak/quick_play.html",
                ),
                pages=games.Pages(
                    history="durak_history", leaderboard="durak_leaderboard", guide="durak_guide"
                ),
                profile=views.profile_section,
                seed_demo=demo.seed,
            )
        )
        remote.DurakRoute.serve()
        # The memos of a game's chips (`durak.actor`), on the player's profile in their language.
        memos.register(r"Durak game (?P<number>\d+) stake", gettext_noop("Durak game %(number)s stake"))
        memos.register(r"Durak game (?P<number>\d+) voided", gettext_noop("Durak game %(number)s voided"))
        memos.register(r"Durak game (?P<number>\d+)", gettext_noop("Durak game %(number)s"))
