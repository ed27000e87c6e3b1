from django import forms
from django.utils.translation import gettext_lazy as _

from blackjack.history.records import RoundResult


class HistoryFilter(forms.Form):
    table = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label=_("Table"))
    result = forms.ChoiceField(
        required=False, label=_("Result"), choices=[("", _("Any result")), *RoundResult.choices]
    )
    date_from = forms.DateField(
        required=False, label=_("From"), widget=forms.DateInput(attrs={"type": "date"}), help_text="UTC"
    )
    date_to = forms.DateField(
        required=False, label=_("To"), widget=forms.DateInput(attrs={"type": "date"}), help_text="UTC"
    )

    def __init__(self, *args, tables: list[tuple[int, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["table"].choices = [("", _("All tables")), *tables]

    def clean(self):
        data = super().clean()
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and start > end:
            raise forms.ValidationError(_("The first day must come before the last."))
        return data

    def filters(self) -> dict:
        """Keyword arguments for `selectors.player_rounds` (none when the form is invalid)."""
        if not self.is_valid():
            return {}
        data = self.cleaned_data
        return {
            "table_id": data.get("table"),
            "result": data.get("result") or None,
            "date_from": data.get("date_from"),
            "date_to": data.get("date_to"),
        }
