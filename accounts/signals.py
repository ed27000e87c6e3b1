"""Every new user gets a wallet with the starting grant, exactly once, however the user was created
(registration, createsuperuser, the admin, a test fixture). A user's open websockets close when their
session ends: on log-out (that session's), a password change or a deactivation (all of them;
`accounts.sockets`)."""

from django.conf import settings
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_save
from django.dispatch import receiver

from accounts import services, sockets


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts_open_wallet")
def open_wallet_for_new_user(sender, instance, created, raw=False, **kwargs):
    if created and not raw:
        services.open_wallet(user=instance)


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts_close_sockets")
def close_sockets_when_access_ends(sender, instance, created, raw=False, **kwargs):
    # `set_password` keeps the new password in `_password` until the save that stores it has finished.
    password_changed = getattr(instance, "_password", None) is not None
    if not created and not raw and (password_changed or not instance.is_active):
        sockets.close_sockets(user_id=instance.pk)


@receiver(user_logged_out, dispatch_uid="accounts_close_session_sockets")
def close_sockets_on_log_out(sender, request, user, **kwargs):
    session = getattr(request, "session", None)
    if user is not None and session is not None and session.session_key:
        sockets.close_sockets(user_id=user.pk, session_key=session.session_key)
