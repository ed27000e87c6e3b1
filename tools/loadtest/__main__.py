"""`python -m tools.loadtest ...`: the load test against running servers (`tools.loadtest.command`), with the
site's settings (`DJANGO_SETTINGS_MODULE`, `cardroom.settings` by default) for the database it shares with
them."""

import os
import sys

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardroom.settings")
    django.setup()
    from tools.loadtest.command import Command  # needs the apps loaded

    Command().run_from_argv([sys.argv[0], "loadtest", *sys.argv[1:]])


if __name__ == "__main__":
    main()
