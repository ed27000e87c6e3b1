"""Registrations are throttled per address (an IPv4 address, an IPv6 /64) and per network (an IPv4 /24, an
IPv6 /48), in the cache shared by every server process: one client cannot make accounts by the dozen, each
with its starting chips (issue 34: 8 accounts in 9.9 s). A refused registration makes nothing and says how
long to wait."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts import forms, throttling
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.REGISTRATION_LIMIT_PER_ADDRESS = 3
    settings.REGISTRATION_ADDRESS_WINDOW_SECONDS = 3600
    settings.REGISTRATION_LIMIT_PER_NETWORK = 10
    settings.REGISTRATION_NETWORK_WINDOW_SECONDS = 24 * 3600


def register(username: str, ip: str, **fields):
    """A registration from a fresh browser at `ip`."""
    data = {"username": username, "email": "", "password1": PASSWORD, "password2": PASSWORD, **fields}
    return Client().post(reverse("register"), data, REMOTE_ADDR=ip)


def test_an_address_registers_three_accounts_an_hour_then_is_told_to_wait():
    for n in range(3):
        assert register(f"player{n}", "203.0.113.5").status_code == 302
    refused = register("player3", "203.0.113.5", email="p3@example.com")
    assert refused.status_code == 429
    assert 3590 <= int(refused["Retry-After"]) <= 3600
    page = refused.content.decode()
    assert "Too many accounts have been registered from your address recently" in page
    assert "Please wait 60 minutes before registering another." in page
    assert 'value="player3"' in page  # the form comes back with what was typed
    assert not User.objects.filter(username="player3").exists()
    assert User.objects.count() == 3
    assert register("player3", "203.0.114.5").status_code == 302  # another network is not held up


def test_a_network_registers_ten_a_day_from_all_its_addresses():
    for n in range(10):
        assert register(f"player{n}", f"198.51.100.{n + 1}").status_code == 302
    refused = register("player10", "198.51.100.200")  # a fresh address of the same /24
    assert refused.status_code == 429
    assert "from your network recently" in refused.content.decode()
    assert "Please wait 24 hours" in refused.content.decode()
    assert User.objects.count() == 10


def test_an_ipv6_client_is_one_address_per_64_and_one_network_per_48():
    for n in range(3):
        assert register(f"six{n}", f"2001:db8:1:2::{n + 1}").status_code == 302
    assert register("six3", "2001:db8:1:2:ffff::9").status_code == 429  # the same /64
    assert register("six3", "::ffff:203.0.113.9").status_code == 302  # an IPv4-mapped address is IPv4
    for n in range(7):
        assert register(f"net{n}", f"2001:db8:1:{n + 3}::1").status_code == 302  # other /64s of the /48
    refused = register("net7", "2001:db8:1:ff::1")
    assert "from your network recently" in refused.content.decode()
    assert register("net7", "2001:db8:2::1").status_code == 302  # another /48


def test_refused_and_invalid_registrations_are_not_counted():
    for _ in range(5):
        assert (
            register("bad name!", "192.0.2.7").status_code == 200
        )  # field errors: nothing made, not counted
    for n in range(3):
        assert register(f"player{n}", "192.0.2.7").status_code == 302
    for _ in range(3):
        assert register("player3", "192.0.2.7").status_code == 429
    # The refusals took nothing from the network's allowance: 3 + 7 others of the /24 make ten.
    for n in range(7):
        assert register(f"other{n}", f"192.0.2.{n + 100}").status_code == 302
    assert register("other7", "192.0.2.200").status_code == 429


def test_a_throttled_client_is_refused_before_its_form_is_checked(monkeypatch):
    for n in range(3):
        assert register(f"player{n}", "203.0.113.5").status_code == 302

    def read_every_account(self):
        raise AssertionError("a throttled registration must not check the form")

    monkeypatch.setattr(forms.RegistrationForm, "clean_username", read_every_account)
    assert register("player3", "203.0.113.5").status_code == 429


def test_the_wait_runs_from_the_first_registration_of_the_window():
    for _ in range(3):
        assert throttling.reserve_registration(ip="203.0.113.5", now=1_000.0) is None
    refused = throttling.reserve_registration(ip="203.0.113.5", now=1_600.0)
    assert (refused.scope, refused.retry_after) == ("address", 3000)
    assert throttling.check_registration(ip="203.0.113.5", now=1_600.0) == refused
