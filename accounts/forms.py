import unicodedata

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from accounts import throttling
from accounts.names import skeleton

User = get_user_model()


class ThrottledLoginMixin:
    """Refuse log-ins while the client's network, or this account from it, is cooling off
    (`accounts.throttling`), before any password is checked."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        ip = throttling.client_ip(self.request)
        throttle = throttling.check(ip=ip, username=username)
        if throttle is not None:
            raise ValidationError(throttle.message, code="throttled")
        try:
            cleaned = super().clean()
        except ValidationError as error:
            if any(e.code == "invalid_login" for e in error.error_list):
                throttling.record_failure(ip=ip, username=username)
            raise
        throttling.record_success(ip=ip, username=username)
        return cleaned


class LoginForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class AdminLoginForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass


class RegistrationForm(UserCreationForm):
    email = forms.EmailField(
        label=_("Email"),
        required=False,
        help_text=_("Optional; only used to reset a forgotten password."),
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self):
        return _unused_email(self.cleaned_data["email"], user=None)

    def clean_username(self):
        username = super().clean_username()
        if username and _name_taken(username, user=None):
            raise ValidationError(NAME_TAKEN, code="impersonation")
        return username


NAME_TAKEN = _("That name is another player's or the house's; pick a different one.")

#: Names only the house speaks as.
RESERVED_NAMES = frozenset({"dealer", "house", "casino", "admin", "staff", "support", "system", "moderator"})
_RESERVED_SKELETONS = frozenset(skeleton(name) for name in RESERVED_NAMES)


def _name_taken(name: str, *, user) -> bool:
    """Would `name` look like someone else at the tables: another player's username or display name, or a
    name the house uses, once both are reduced to their skeletons (`accounts.names.skeleton`: case,
    full-width forms, accents, invisible characters and Cyrillic or Greek look-alikes do not count)?

    Every other account's names are compared: a skeleton column would let the database do it, if sign-ups
    ever come too fast for this."""
    wanted = skeleton(name)
    if wanted in _RESERVED_SKELETONS:
        return True
    others = User.objects.exclude(pk=getattr(user, "pk", None)).values_list("username", "display_name")
    return any(
        skeleton(username) == wanted or (display_name and skeleton(display_name) == wanted)
        for username, display_name in others.iterator(chunk_size=2000)
    )


def _unused_email(email: str, *, user) -> str:
    """One account per address, so a password-reset link always reaches the account it was asked for."""
    email = email.strip()
    if email and User.objects.exclude(pk=getattr(user, "pk", None)).filter(email__iexact=email).exists():
        raise ValidationError(_("An account with this e-mail address already exists."), code="email_taken")
    return email


class ProfileForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("display_name", "avatar", "email", "show_mistakes")
        widgets = {"avatar": forms.RadioSelect}
        help_texts = {"email": _("Optional; only used to reset a forgotten password.")}
        labels = {"display_name": _("Display name"), "avatar": _("Avatar")}

    def clean_email(self):
        return _unused_email(self.cleaned_data["email"], user=self.instance)

    def clean_display_name(self):
        # NFC first, so a name typed with combining accents is judged (and stored) like its precomposed twin.
        # Invisible characters (zero-width, bidi overrides) are refused by `validate_display_name`.
        name = unicodedata.normalize("NFC", self.cleaned_data["display_name"])
        if name and _name_taken(name, user=self.instance):
            raise ValidationError(NAME_TAKEN, code="impersonation")
        return name
