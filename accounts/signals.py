"""Every new user gets a wallet with the starting grant, exactly once, however the user was created
(registration, createsuperuser, the admin, a test fixture)."""

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver

from accounts import services


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts_open_wallet")
def open_wallet_for_new_user(sender, instance, created, raw=False, **kwargs):
    if created and not raw:
        services.open_wallet(user=instance)
