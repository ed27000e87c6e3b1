"""The site's language: English or Russian (`settings.LANGUAGES`), chosen with the header's switch.

A visitor's choice is Django's language cookie (`LocaleMiddleware` reads it, else Accept-Language); a
logged-in user's is also stored on the account (`User.language`) and wins on every device they log in on
(`AccountLanguageMiddleware`). Websockets render outside a request: `of_scope` finds the connection's
language once, at connect, the same way.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpResponseRedirect
from django.utils import translation
from django.utils.deprecation import MiddlewareMixin
from django.utils.translation import trans_real
from django.views.decorators.http import require_POST
from django.views.i18n import set_language as django_set_language


def supported(code: object) -> str | None:
    """`code` as one of the site's languages, or None."""
    if not isinstance(code, str) or not code:
        return None
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return None


def of_user(user) -> str | None:
    """The language stored on the account of a logged-in `user` (None: never chosen, or a visitor)."""
    if user is None or not user.is_authenticated:
        return None
    return supported(getattr(user, "language", ""))


class AccountLanguageMiddleware(MiddlewareMixin):
    """After authentication: a logged-in user's stored language replaces the one `LocaleMiddleware` found (the
    cookie of this browser, or its Accept-Language)."""

    def process_request(self, request):
        language = of_user(getattr(request, "user", None))
        if language is not None and language != translation.get_language():
            translation.activate(language)
            request.LANGUAGE_CODE = language


@require_POST
def set_language(request):
    """Django's `set_language` (the cookie, the redirect to `next`), and for a logged-in user the choice
    stored on the account too."""
    response = django_set_language(request)
    language = supported(request.POST.get("language"))
    if language is not None and isinstance(response, HttpResponseRedirect) and request.user.is_authenticated:
        get_user_model().objects.filter(pk=request.user.pk).update(language=language)
        request.user.language = language
    return response


def of_scope(scope) -> str:
    """A websocket connection's language: the account's, else the language cookie's, else the browser's
    Accept-Language, else the site's default."""
    user = scope.get("user")
    language = of_user(user) if user is not None else None
    if language is None:
        language = supported(scope.get("cookies", {}).get(settings.LANGUAGE_COOKIE_NAME))
    if language is None:
        headers = dict(scope.get("headers") or ())
        accepted = headers.get(b"accept-language", b"").decode("latin-1")
        for code, _quality in trans_real.parse_accept_lang_header(accepted):
            if code != "*" and (language := supported(code)) is not None:
                break
    return language or settings.LANGUAGE_CODE
