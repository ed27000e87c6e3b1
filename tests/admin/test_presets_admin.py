"""Rule presets in the staff admin: every engine rule is a form field, the engine refuses bad combinations
with its own message, and the house edge is estimated in the background when the rules change."""

import dataclasses
import math
import random
import threading

import pytest
from django.core.cache import cache
from django.urls import reverse

from blackjack import house_edge
from blackjack.admin import RULE_FIELDS, RulePresetForm
from blackjack.engine.rules import PRESETS, RuleSet
from blackjack.models import RulePreset


def form_data(name="House rules", **rules) -> dict:
    """POST data of the preset form: the default rules with `rules` changed."""
    data = {"name": name, "description": ""}
    for field, value in (RuleSet().to_dict() | rules).items():
        if isinstance(value, bool):
            if value:
                data[field] = "on"
        else:
            data[field] = "" if value is None else value
    return data


@pytest.fixture
def started(monkeypatch):
    """Preset ids whose background estimate was started (the thread itself is replaced)."""
    ids = []
    monkeypatch.setattr(house_edge, "start_refresh", ids.append)
    yield ids
    cache.clear()


def test_every_engine_rule_is_a_form_field():
    assert sorted(RULE_FIELDS) == sorted(field.name for field in dataclasses.fields(RuleSet))
    assert "rules" not in RulePresetForm.base_fields  # no raw JSON


@pytest.mark.django_db
def test_adding_a_preset_stores_the_rules_and_starts_an_estimate(
    admin_client, started, django_capture_on_commit_callbacks
):
    data = form_data(decks=2, dealer_hits_soft_17=True, surrender="none", charlie=5)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("admin:tables_rulepreset_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    preset = RulePreset.objects.get(name="House rules")
    expected = RuleSet(decks=2, dealer_hits_soft_17=True, surrender="none", charlie=5)
    assert preset.ruleset() == expected
    assert started == [preset.pk]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"surrender": "early", "dealer_peek": False}, "early surrender is offered before the dealer"),
        ({"resplit_aces": True, "max_split_hands": 2}, "resplit_aces needs max_split_hands"),
        ({"penetration": 0.95}, "penetration must be 0"),
        ({"suited_678_bonus": "two"}, "a payout must look like"),
    ],
)
def test_the_engine_refuses_bad_combinations_with_its_message(admin_client, started, rules, message):
    response = admin_client.post(reverse("admin:tables_rulepreset_add"), form_data(**rules))
    assert response.status_code == 200
    assert message in " ".join(response.context["adminform"].form.non_field_errors())
    assert message in response.text
    assert not RulePreset.objects.exists()
    assert started == []


@pytest.mark.django_db
def test_editing_shows_the_rules_and_only_a_rule_change_restarts_the_estimate(
    admin_client, started, django_capture_on_commit_callbacks
):
    rules = PRESETS["Downtown"]
    preset = RulePreset.objects.create(
        name="Downtown",
        rules=rules.to_dict(),
        house_edge=0.6,
        house_edge_stderr=0.2,
        house_edge_rounds=300_000,
    )
    url = reverse("admin:tables_rulepreset_change", args=[preset.pk])
    page = admin_client.get(url)
    assert page.context["adminform"].form.initial["decks"] == 2
    assert "+0.60% ± 0.20% (300,000 rounds)" in page.text

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, form_data("Downtown", **rules.to_dict()) | {"description": "Fremont St."})
    preset.refresh_from_db()
    assert (preset.description, preset.house_edge, started) == ("Fremont St.", 0.6, [])

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, form_data("Downtown", **(rules.to_dict() | {"blackjack_payout": "6:5"})))
    preset.refresh_from_db()
    assert preset.ruleset().blackjack_payout == "6:5"
    assert (preset.house_edge, preset.house_edge_stderr, preset.house_edge_rounds) == (None, None, None)
    assert started == [preset.pk]


def test_combining_batches_gives_the_figures_of_all_rounds():
    rng = random.Random(7)
    results = [rng.choice([-1, -1, 1, 1, 1.5, -2, 2, 0]) for _ in range(3_000)]

    def figures(rounds):
        n = len(rounds)
        mean = sum(rounds) / n
        variance = sum(r * r for r in rounds) / n - mean * mean
        return n, -100 * mean, 100 * math.sqrt(variance / n)

    batches = [figures(results[:1_000]), figures(results[1_000:2_500]), figures(results[2_500:])]
    combined = house_edge.combine(batches)
    n, edge, stderr = figures(results)
    assert combined["rounds"] == n
    assert combined["house_edge"] == pytest.approx(edge, abs=1e-9)
    assert combined["stderr"] == pytest.approx(stderr, rel=1e-9)


def test_the_estimate_stops_at_its_time_bound():
    figures = house_edge.estimate(RuleSet().to_dict(), rounds=10**9, seconds=0)
    assert figures["rounds"] == 20_000  # one batch, then the time is up


@pytest.mark.django_db(transaction=True)
def test_the_background_refresh_stores_edge_and_standard_error(settings):
    settings.HOUSE_EDGE_ROUNDS = 4_000
    preset = RulePreset.objects.create(name="Vegas Strip", rules=RuleSet().to_dict())
    thread = house_edge.start_refresh(preset.pk)
    assert isinstance(thread, threading.Thread)
    assert house_edge.is_estimating(preset.pk)
    thread.join(timeout=120)
    assert not thread.is_alive()
    preset.refresh_from_db()
    assert preset.house_edge_rounds == 4_000
    # One round's standard deviation is about 1.14 bets: the standard error of 4,000 rounds is about 1.8%.
    assert 1.5 < preset.house_edge_stderr < 2.2
    assert abs(preset.house_edge - 0.5) < 4 * preset.house_edge_stderr
    assert preset.house_edge_updated_at is not None
    assert not house_edge.is_estimating(preset.pk)


@pytest.mark.django_db
def test_an_estimate_for_rules_changed_since_is_not_stored():
    preset = RulePreset.objects.create(name="Mine", rules=RuleSet(decks=2).to_dict())
    figures = {"house_edge": 0.4, "stderr": 0.2, "rounds": 300_000}
    assert not house_edge.store(preset_id=preset.pk, rules=RuleSet(decks=6), figures=figures)
    assert RulePreset.objects.get(pk=preset.pk).house_edge is None
    assert house_edge.store(preset_id=preset.pk, rules=RuleSet(decks=2), figures=figures)
    assert RulePreset.objects.get(pk=preset.pk).house_edge == 0.4


@pytest.mark.django_db(transaction=True)
def test_saving_in_the_admin_returns_at_once_and_the_estimate_lands_later(
    admin_client, settings, monkeypatch
):
    settings.HOUSE_EDGE_ROUNDS = 2_000
    release = threading.Event()
    real = house_edge._run_in_process

    def held(rules, rounds, seconds):
        assert release.wait(timeout=60)  # the simulation cannot start before the page has answered
        return real(rules, rounds, seconds)

    monkeypatch.setattr(house_edge, "_run_in_process", held)
    response = admin_client.post(reverse("admin:tables_rulepreset_add"), form_data("Quick", decks=2))
    assert response.status_code == 302
    preset = RulePreset.objects.get(name="Quick")
    assert preset.house_edge is None
    assert "estimating…" in admin_client.get(reverse("admin:tables_rulepreset_changelist")).text

    release.set()
    [thread] = [thread for thread in threading.enumerate() if thread.name == f"house-edge-{preset.pk}"]
    thread.join(timeout=120)
    preset.refresh_from_db()
    assert preset.house_edge_rounds == 2_000
    assert preset.house_edge_stderr > 0
    listing = admin_client.get(reverse("admin:tables_rulepreset_changelist")).text
    assert f"({preset.house_edge_rounds:,} rounds)" in listing
    assert "estimating…" not in listing


@pytest.mark.django_db
def test_staff_can_ask_for_a_fresh_estimate(admin_client, started, django_capture_on_commit_callbacks):
    preset = RulePreset.objects.create(name="Seeded", rules=RuleSet().to_dict())
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:tables_rulepreset_changelist"),
            {"action": "estimate_again", "_selected_action": [preset.pk]},
        )
    assert response.status_code == 302
    assert started == [preset.pk]
