from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and chips"

    def ready(self):
        from accounts import signals  # noqa: F401  (connects the wallet-opening receiver)
