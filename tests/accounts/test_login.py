import pytest
from django.contrib.auth import forms as auth_forms
from django.urls import reverse

from accounts import throttling
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def log_in(client, username="alice", password=PASSWORD, ip="10.0.0.1"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip)


def errors(response):
    return response.context["form"].non_field_errors()


def test_log_in_and_out(client, player):
    response = log_in(client)
    assert response.status_code == 302
    assert response.url == reverse("lobby")
    assert client.session["_auth_user_id"] == str(player.pk)
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session


def test_log_in_honours_next(client, player):
    response = client.post(
        reverse("login"), {"username": "alice", "password": PASSWORD, "next": reverse("profile")}
    )
    assert response.url == reverse("profile")


def test_logout_needs_post(client, player):
    client.force_login(player)
    assert client.get(reverse("logout")).status_code == 405
    assert "_auth_user_id" in client.session


def test_wrong_password_is_refused(client, player):
    response = log_in(client, password="wrong")
    assert response.status_code == 200
    assert "_auth_user_id" not in client.session
    assert "correct username and password" in str(errors(response))


def test_forms_carry_csrf_tokens(client, player):
    assert "csrfmiddlewaretoken" in client.get(reverse("login")).text
    client.force_login(player)
    profile = client.get(reverse("profile")).text
    assert profile.count("csrfmiddlewaretoken") >= 3  # log out, daily grant, profile


def test_an_account_is_throttled_after_five_failures_from_one_address(client, player):
    for _ in range(throttling.MAX_FAILURES):
        log_in(client, password="wrong", ip="10.0.1.1")
    response = log_in(client, ip="10.0.1.1")  # right password, same address
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    message = str(errors(response))
    assert "Too many failed log-in attempts for this account from your network" in message
    assert "15 minutes" in message
    # Another account from the same address is unaffected, and so is this account from elsewhere.
    assert log_in(client, username="bob", password="wrong", ip="10.0.1.1").status_code == 200
    assert log_in(client, ip="10.0.2.1").status_code == 302


def test_ip_is_throttled_after_many_failures_for_many_usernames(client, player):
    for attempt in range(throttling.MAX_FAILURES_PER_NETWORK):
        log_in(client, username=f"guess{attempt}", password="wrong", ip="10.0.3.3")
    response = log_in(client, ip="10.0.3.3")
    assert "_auth_user_id" not in client.session
    assert "Too many failed log-in attempts from your network" in str(errors(response))
    # The same account from another address still gets in: only that address cools off.
    assert log_in(client, ip="10.0.3.4").status_code == 302


def test_four_failures_do_not_throttle(client, player):
    for _ in range(throttling.MAX_FAILURES - 1):
        log_in(client, password="wrong")
    assert log_in(client).status_code == 302


def test_success_resets_the_username_counter(client, player):
    for attempt in range(throttling.MAX_FAILURES - 1):
        log_in(client, password="wrong", ip=f"10.0.4.{attempt}")
    assert log_in(client, ip="10.0.4.99").status_code == 302
    client.post(reverse("logout"))
    for attempt in range(throttling.MAX_FAILURES - 1):
        log_in(client, password="wrong", ip=f"10.0.5.{attempt}")
    assert log_in(client, ip="10.0.5.99").status_code == 302


def test_throttled_attempt_does_not_check_the_password(client, player, monkeypatch):
    for _ in range(throttling.MAX_FAILURES):
        log_in(client, password="wrong")
    calls = []
    real_authenticate = auth_forms.authenticate

    def spy(*args, **kwargs):
        calls.append(kwargs.get("username"))
        return real_authenticate(*args, **kwargs)

    monkeypatch.setattr(auth_forms, "authenticate", spy)
    response = log_in(client)
    assert "Too many failed" in str(errors(response))
    assert calls == []
    log_in(client, username="bob", ip="10.9.9.9")
    assert calls == ["bob"]  # the spy does see attempts that are not throttled


def test_an_ipv6_client_is_counted_by_its_64_network(client, player):
    for attempt in range(throttling.MAX_FAILURES_PER_NETWORK):
        log_in(client, username=f"guess{attempt}", password="wrong", ip=f"2001:db8:1:2::{attempt + 1:x}")
    response = log_in(client, ip="2001:db8:1:2:ffff::9")
    assert "from your network" in str(errors(response))
    assert log_in(client, ip="2001:db8:1:3::1").status_code == 302  # the neighbouring /64 is unaffected


def test_ipv4_mapped_and_plain_ipv4_share_a_counter():
    for _ in range(throttling.MAX_FAILURES_PER_NETWORK):
        throttling.record_failure(ip="::ffff:192.0.2.7", username="")
    assert throttling.check(ip="192.0.2.7", username="").scope == "ip"
    assert throttling.check(ip="192.0.2.8", username="") is None


def test_cool_off_ends_and_reports_remaining_time():
    now = 1_000_000.0
    for _ in range(throttling.MAX_FAILURES):
        throttling.record_failure(ip="10.0.6.6", username="carol", now=now)
    throttle = throttling.check(ip="10.0.6.6", username="Carol ", now=now + 60)
    assert throttle.scope == "username"
    assert throttle.retry_after == throttling.COOL_OFF_SECONDS - 60
    assert "14 minutes" in throttle.message
    later = now + throttling.COOL_OFF_SECONDS + 1
    assert throttling.check(ip="10.0.6.6", username="carol", now=later) is None


def test_admin_log_in_is_throttled_too(client, staff):
    for _ in range(throttling.MAX_FAILURES):
        client.post(reverse("admin:login"), {"username": "pit-boss", "password": "wrong"})
    response = client.post(reverse("admin:login"), {"username": "pit-boss", "password": PASSWORD})
    assert response.status_code == 200
    assert "Too many failed log-in attempts" in response.text
    assert "_auth_user_id" not in client.session
