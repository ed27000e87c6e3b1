from django import forms
from django.utils.translation import gettext_lazy as _

from durak.bot import DEFAULT_LEVEL, LEVELS
from durak.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from durak.models import MAX_STAKE, MAX_TURN_SECONDS, MIN_TURN_SECONDS, OPTION_LABELS, DurakTable
from durak.services import QUICK_STAKES


class OpenDurakTableForm(forms.ModelForm):
    seats = forms.IntegerField(label=_("Seats"), min_value=MIN_PLAYERS, max_value=MAX_PLAYERS, initial=2)
    stake = forms.IntegerField(
        label=_("Stake"), min_value=0, max_value=MAX_STAKE, initial=0, help_text=_("0: a casual table.")
    )
    turn_seconds = forms.IntegerField(
        label=_("Seconds for a move"), min_value=MIN_TURN_SECONDS, max_value=MAX_TURN_SECONDS, initial=30
    )
    bot_level = forms.ChoiceField(
        choices=[(level, OPTION_LABELS[level]) for level in LEVELS],
        initial=DEFAULT_LEVEL,
        required=False,
        label=_("Bots"),
        help_text=_("How well the bots added to this table play (normal if not given)."),
    )
    private = forms.BooleanField(
        required=False,
        label=_("Private table"),
        help_text=_("Not listed in the lobby; players join with the invitation link shown at the table."),
    )

    class Meta:
        model = DurakTable
        fields = [
            "name",
            "variant",
            "attack",
            "limit",
            "seats",
            "stake",
            "rated",
            "turn_seconds",
            "bot_level",
        ]
        labels = {
            "name": _("Name"),
            "variant": _("Variant"),
            "attack": _("Attack type"),
            "limit": _("Bout limit"),
            "rated": _("Rated"),
        }

    def clean_bot_level(self) -> str:
        return self.cleaned_data["bot_level"] or DEFAULT_LEVEL


class QuickPlayForm(forms.Form):
    """Quick play's choices (`durak.quick`)."""

    variant = forms.ChoiceField(choices=DurakTable._meta.get_field("variant").choices, initial="podkidnoy")
    stake = forms.TypedChoiceField(
        coerce=int,
        choices=[(stake, f"{stake:,}" if stake else _("Casual")) for stake in QUICK_STAKES],
        initial=0,
    )
    players = forms.TypedChoiceField(
        coerce=int, choices=[(n, str(n)) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)], initial=2
    )
