"""The site's settings with high card installed: the servers of `test_highcard` run on these."""

from cardroom.settings import *  # noqa: F403
from cardroom.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.highcard"]
