from django.apps import AppConfig


class LiveConfig(AppConfig):
    """The live runtime every game runs on (its one model: the tables' chat, `live.chat`)."""

    name = "live"
    verbose_name = "Live tables"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from live import presence

        presence.serve()
