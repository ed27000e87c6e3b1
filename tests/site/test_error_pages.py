"""The site's own error pages (the test settings run with DEBUG off, as production does): styled like the rest
of the site, with a way back to the lobby."""

import pytest
from django.template import loader
from django.test import Client

pytestmark = pytest.mark.django_db


def test_not_found_has_the_site_around_it():
    response = Client().get("/players/nobody/")
    assert response.status_code == 404
    page = response.text
    assert "Page not found" in page
    assert 'class="site-header"' in page
    assert 'href="/">Back to the lobby' in page


def test_a_bad_request_says_nothing_changed():
    response = Client().get("/tables/join/%00/")
    assert response.status_code == 400
    assert "Bad request" in response.text
    assert "Nothing was changed." in response.text


def test_the_server_error_page_renders_without_a_request():
    """Django renders 500.html with no request and no context processors: it must stand alone."""
    page = loader.get_template("500.html").render()
    assert "Something went wrong" in page
    assert "css/site" in page  # styled like the rest of the site
