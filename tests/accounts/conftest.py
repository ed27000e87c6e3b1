import pytest
from django.core.cache import cache

PASSWORD = "Felt-and-chips-42"


@pytest.fixture(autouse=True)
def _fresh_throttle_counters(settings):
    """Log-in throttle counters live in the cache: give every test an empty private one (never clear a shared
    Redis that other tests or servers use)."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "accounts-tests"}
    }
    cache.clear()


@pytest.fixture
def make_user(django_user_model):
    def make(username="alice", **extra):
        return django_user_model.objects.create_user(username=username, password=PASSWORD, **extra)

    return make


@pytest.fixture
def player(make_user):
    return make_user("alice", email="alice@example.com")


@pytest.fixture
def other_player(make_user):
    return make_user("bob")


@pytest.fixture
def staff(make_user):
    return make_user("pit-boss", is_staff=True)
