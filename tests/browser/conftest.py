"""Fixtures of the table and lobby browser tests."""

import pytest

from tests.browser.table_support import log_in


@pytest.fixture
def open_page(browser, live_site):
    """`open_page(user=None, **context_options)`: a page in a fresh browser context, logged in as `user`.
    The test fails if a page raised a JavaScript error or the content security policy refused something."""
    contexts = []
    errors = []

    def open_as(user=None, **options):
        context = browser.new_context(base_url=live_site, **options)
        contexts.append(context)
        if user is not None:
            log_in(context, user, live_site)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: refused_by_csp(message, errors))
        return page

    yield open_as
    for context in contexts:
        for page in context.pages:
            page.close()
        context.close()
    assert errors == [], "JavaScript errors on the page"


def refused_by_csp(message, errors: list[str]) -> None:
    if message.type == "error" and "Content Security Policy" in message.text:
        errors.append(message.text)
