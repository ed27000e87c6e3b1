from django.apps import AppConfig


class DurakConfig(AppConfig):
    name = "durak"
    verbose_name = "Durak"
    default_auto_field = "django.db.models.BigAutoField"
