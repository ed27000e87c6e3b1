from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.translation import gettext_lazy as _

from blackjack.models import RulePreset, Table
from blackjack.services import OPEN_TABLE_MAX_BET, OPEN_TABLE_MIN_BET, open_table_bounds
from blackjack.templatetags.table_ui import summary_words


class OpenTableForm(forms.Form):
    """A player opens a table from the lobby; `blackjack.services.open_table` has the last word on the
    values."""

    name = forms.CharField(label=_("Name"), max_length=Table._meta.get_field("name").max_length, strip=True)
    preset = forms.ModelChoiceField(
        queryset=RulePreset.objects.all(),
        empty_label=None,
        label=_("Rules"),
        help_text=_("The rules the table plays."),
    )
    min_bet = forms.IntegerField(
        label=_("Minimum bet"), initial=10, min_value=OPEN_TABLE_MIN_BET, max_value=OPEN_TABLE_MAX_BET
    )
    max_bet = forms.IntegerField(
        label=_("Maximum bet"), initial=500, min_value=OPEN_TABLE_MIN_BET, max_value=OPEN_TABLE_MAX_BET
    )
    private = forms.BooleanField(
        required=False,
        label=_("Private table"),
        help_text=_("Not listed in the lobby; players join with the invitation link shown at the table."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["preset"].label_from_instance = _preset_label
        # Staff edit the bounds in the admin: read them for every form.
        lowest, highest = open_table_bounds()
        for name in ("min_bet", "max_bet"):
            field = self.fields[name]
            field.min_value, field.max_value = lowest, highest
            field.validators = [MinValueValidator(lowest), MaxValueValidator(highest)]
            field.widget.attrs.update(min=lowest, max=highest)

    def clean(self):
        cleaned = super().clean()
        low, high = cleaned.get("min_bet"), cleaned.get("max_bet")
        if low is not None and high is not None and low > high:
            self.add_error("max_bet", _("The maximum bet must be at least the minimum bet."))
        return cleaned


def _preset_label(preset: RulePreset) -> str:
    return f"{preset.name} \u2014 {summary_words(preset.ruleset().summary())}"
