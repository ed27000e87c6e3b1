import json
import logging

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordResetForm
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.core.mail import EmailMessage
from django.db import transaction
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.template import loader
from django.utils.formats import date_format, number_format
from django.utils.timezone import localtime
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from accounts import preferences, selectors, services, throttling
from accounts.forms import LoginForm, ProfileForm, RegistrationForm
from accounts.models import Wallet

logger = logging.getLogger(__name__)

RECENT_ENTRIES = 15


class LoginView(auth_views.LoginView):
    form_class = LoginForm
    redirect_authenticated_user = True

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.has_error(NON_FIELD_ERRORS, code="throttled"):
            response.status_code = 429  # Too Many Requests: the page still explains how long to wait
        return response


class PlainTextEmail(EmailMessage):
    """A text e-mail whose body is sent as it is (7bit, or 8bit with non-ASCII text) rather than
    quoted-printable, which breaks a long link with "=" line ends when it is copied from a console or log."""

    def message(self, **kwargs):
        msg = super().message(**kwargs)
        cte = "7bit" if self.body.isascii() else "8bit"
        msg.set_content(self.body, subtype="plain", charset="utf-8", cte=cte)
        return msg


class PlainPasswordResetForm(PasswordResetForm):
    def send_mail(self, subject_template_name, email_template_name, context, from_email, to_email, **kwargs):
        subject = "".join(loader.render_to_string(subject_template_name, context).splitlines())
        body = loader.render_to_string(email_template_name, context)
        try:
            PlainTextEmail(subject, body, from_email, [to_email]).send()
        except Exception:  # as Django's form does: a failed send must not tell whether the address exists
            logger.exception("Failed to send password reset email to %s", context["user"].pk)


class PasswordResetView(auth_views.PasswordResetView):
    form_class = PlainPasswordResetForm

    def form_valid(self, form):
        ip = throttling.client_ip(self.request)
        if not throttling.allow_password_reset(ip=ip, email=form.cleaned_data["email"]):
            form.add_error(None, ValidationError(gettext(throttling.RESET_REFUSED_MESSAGE), code="throttled"))
            response = self.form_invalid(form)
            response.status_code = 429
            return response
        return super().form_valid(form)


def register(request):
    if request.user.is_authenticated:
        return redirect("profile")
    form = RegistrationForm(request.POST or None)
    if request.method == "POST":
        # A client that has made its accounts is refused before the form is even checked (its name checks
        # read every account); a valid form is counted (`reserve_registration`) just before its account is
        # made.
        ip = throttling.client_ip(request)
        refused = throttling.check_registration(ip=ip)
        if refused is None and form.is_valid():
            refused = throttling.reserve_registration(ip=ip)
            if refused is None:
                return _registered(request, form)
        if refused is not None:
            return _registration_refused(request, refused)
    return render(request, "accounts/register.html", {"form": form})


def _registered(request, form):
    """Make the account of a valid registration form, log its player in and show their profile."""
    with transaction.atomic():  # the user and its wallet (opened by a signal) land together or not at all
        user = form.save()
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(
        request, gettext("Welcome! Your account is ready and your starting chips are in your wallet.")
    )
    return redirect("profile")


def _registration_refused(request, refused: throttling.RegistrationRefused):
    """The form again, unchecked (with the name and address typed), saying how long to wait: 429 Too Many
    Requests with Retry-After."""
    typed = {name: request.POST.get(name, "") for name in ("username", "email")}
    context = {"form": RegistrationForm(initial=typed), "refused": refused.message}
    response = render(request, "accounts/register.html", context, status=429)
    response["Retry-After"] = str(refused.retry_after)
    return response


@login_required
def profile(request):
    user = request.user
    if request.method == "POST":
        form = ProfileForm(request.POST, instance=user)
        if form.is_valid():
            form.save()
            messages.success(request, gettext("Profile saved."))
            return redirect("profile")
        # Validation copied the refused input onto request.user; the page header shows the stored values.
        user.refresh_from_db(fields=["display_name", "avatar", "email", "show_mistakes"])
    else:
        form = ProfileForm(instance=user)
    wallet = Wallet.objects.filter(user=user).first()
    context = {
        "form": form,
        "wallet": wallet,
        "grant": selectors.daily_grant_status(wallet=wallet) if wallet else None,
        "entries": selectors.recent_entries(user=user, limit=RECENT_ENTRIES),
    }
    return render(request, "accounts/profile.html", context)


@login_required
@require_POST
def claim_grant(request):
    try:
        entry = services.claim_daily_grant(user=request.user)
    except services.WalletError as refusal:
        wallet = Wallet.objects.filter(user=request.user).first()
        status = selectors.daily_grant_status(wallet=wallet) if wallet else None
        if refusal.code == "balance_too_high" and status and status["next_claim_at"]:
            # Claimed already: say so, not that the chips (lifted to the floor by that grant) are too many.
            when = date_format(localtime(status["next_claim_at"]), "j M, H:i")
            messages.info(
                request,
                gettext("You claimed today's grant already; the next one is from %(when)s UTC.")
                % {"when": when},
            )
        else:
            messages.error(request, refusal.message)
    else:
        words = {
            "chips": number_format(entry.amount, force_grouping=True),
            "balance": number_format(entry.balance_after, force_grouping=True),
        }
        messages.success(
            request, gettext("Daily grant claimed: %(chips)s chips. Your balance is %(balance)s.") % words
        )
    return redirect("profile")


@require_POST
def update_preferences(request):
    """Change some of the account's table preferences (`accounts.preferences`): a JSON object in, all the
    preferences out; a refused change (400) changes none."""
    if not request.user.is_authenticated:
        return JsonResponse({"error": "Log in to keep preferences on your account."}, status=403)
    try:
        changes = json.loads(request.body or b"null")
    except ValueError:
        return JsonResponse({"error": "The body must be a JSON object."}, status=400)
    try:
        chosen = preferences.update_preferences(user=request.user, changes=changes)
    except preferences.PreferenceError as refusal:
        return JsonResponse({"error": str(refusal)}, status=400)
    return JsonResponse({"preferences": chosen})
