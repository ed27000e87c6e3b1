import re

import pytest
from django.urls import reverse

from accounts import throttling
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db
NEW_PASSWORD = "Shuffle-the-shoe-77"


def test_change_password(client, player):
    client.force_login(player)
    response = client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.url == reverse("password_change_done")
    assert client.get(response.url).status_code == 200
    player.refresh_from_db()
    assert player.check_password(NEW_PASSWORD)
    assert "_auth_user_id" in client.session  # still logged in on this device


def test_change_password_refuses_wrong_old_password_and_weak_new(client, player):
    client.force_login(player)
    wrong_old = client.post(
        reverse("password_change"),
        {"old_password": "nope", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert "old_password" in wrong_old.context["form"].errors
    weak_password = {"old_password": PASSWORD, "new_password1": "alice", "new_password2": "alice"}
    weak = client.post(reverse("password_change"), weak_password)
    assert "new_password2" in weak.context["form"].errors
    player.refresh_from_db()
    assert player.check_password(PASSWORD)


def test_change_password_needs_log_in(client):
    assert client.get(reverse("password_change")).url.startswith(reverse("login"))


def test_reset_password_through_the_emailed_link(client, player, mailoutbox):
    response = client.post(reverse("password_reset"), {"email": "alice@example.com"})
    assert response.url == reverse("password_reset_done")
    assert len(mailoutbox) == 1
    mail = mailoutbox[0]
    assert mail.to == ["alice@example.com"]
    assert "alice" in mail.body
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/\S+/)", mail.body).group(1)

    form_page = client.get(link, follow=True)
    assert form_page.context["validlink"] is True
    set_url = form_page.redirect_chain[-1][0]
    done = client.post(set_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.url == reverse("password_reset_complete")
    assert client.get(done.url).status_code == 200

    player.refresh_from_db()
    assert player.check_password(NEW_PASSWORD)
    # The link works once.
    assert client.get(link, follow=True).context["validlink"] is False
    login = client.post(reverse("login"), {"username": "alice", "password": NEW_PASSWORD})
    assert login.status_code == 302


def test_reset_for_unknown_address_sends_nothing_and_looks_the_same(client, player, mailoutbox):
    response = client.post(reverse("password_reset"), {"email": "nobody@example.com"})
    assert response.url == reverse("password_reset_done")
    assert mailoutbox == []


def test_reset_mails_to_one_address_are_capped(client, player, mailoutbox):
    for attempt in range(throttling.RESET_LIMIT_PER_ADDRESS):
        response = client.post(
            reverse("password_reset"), {"email": "alice@example.com"}, REMOTE_ADDR=f"10.1.0.{attempt}"
        )
        assert response.status_code == 302
    refused = client.post(reverse("password_reset"), {"email": "ALICE@example.com"}, REMOTE_ADDR="10.1.1.1")
    assert refused.status_code == 429
    assert throttling.RESET_REFUSED_MESSAGE in refused.text
    assert len(mailoutbox) == throttling.RESET_LIMIT_PER_ADDRESS


def test_reset_requests_from_one_network_are_capped(client, player, mailoutbox):
    for attempt in range(throttling.RESET_LIMIT_PER_NETWORK):
        client.post(
            reverse("password_reset"), {"email": f"nobody{attempt}@example.com"}, REMOTE_ADDR="10.2.0.1"
        )
    refused = client.post(reverse("password_reset"), {"email": "alice@example.com"}, REMOTE_ADDR="10.2.0.1")
    assert refused.status_code == 429
    assert mailoutbox == []
    assert (
        client.post(
            reverse("password_reset"), {"email": "alice@example.com"}, REMOTE_ADDR="10.2.0.2"
        ).status_code
        == 302
    )
    assert len(mailoutbox) == 1


def test_reset_email_is_plain_text_so_its_link_copies_whole(client, player, mailoutbox):
    client.post(reverse("password_reset"), {"email": "alice@example.com"})
    raw = mailoutbox[0].message().as_string()
    assert "Content-Transfer-Encoding: 7bit" in raw
    assert "quoted-printable" not in raw
    link = re.search(r"http://testserver/accounts/password/reset/\S+/\S+/", mailoutbox[0].body).group(0)
    assert link in raw.splitlines()  # on one line of its own, without "=" soft line breaks
