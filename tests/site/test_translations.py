"""The Russian catalog is complete and compiled: every string marked for translation in the site (collected
afresh with `makemessages` into a copy of the catalog) has a Russian translation, none fuzzy, none left over;
and the committed .mo holds exactly what the committed .po says (CI also recompiles it and checks git)."""

import gettext
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

ROOT = Path(settings.BASE_DIR)
CATALOG = ROOT / "locale" / "ru" / "LC_MESSAGES"
#: As `make messages`: the site's code and templates, not the tests' or tools'.
IGNORED = ["tests", "tools", "staticfiles", "deploy", "docs", "locale"]

needs_gettext = pytest.mark.skipif(
    shutil.which("msgfmt") is None and not os.environ.get("CI"),
    reason="needs GNU gettext (apt-get install gettext); CI installs it",
)


def statistics(po: Path) -> str:
    done = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", os.devnull, str(po)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


@needs_gettext
def test_every_marked_string_has_a_russian_translation(tmp_path, settings, monkeypatch):
    copy = tmp_path / "locale" / "ru" / "LC_MESSAGES"
    copy.mkdir(parents=True)
    shutil.copy(CATALOG / "django.po", copy / "django.po")
    # The sources through links, without the repository's locale/ (makemessages would write there).
    sources = tmp_path / "src"
    sources.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in IGNORED and not entry.name.startswith("."):
            (sources / entry.name).symlink_to(entry)
    settings.LOCALE_PATHS = [str(tmp_path / "locale")]
    monkeypatch.chdir(sources)
    call_command(
        "makemessages", locale=["ru"], ignore_patterns=IGNORED, symlinks=True, no_obsolete=False, verbosity=0
    )
    fresh = (copy / "django.po").read_text()
    counts = statistics(copy / "django.po")
    assert "untranslated" not in counts, counts
    assert "fuzzy" not in counts, counts
    assert "\n#~ " not in fresh, "strings no longer marked anywhere: run `make messages`"


@needs_gettext
def test_the_committed_catalog_is_clean_and_compiled(tmp_path):
    counts = statistics(CATALOG / "django.po")
    assert "untranslated" not in counts, counts
    assert "fuzzy" not in counts, counts
    subprocess.run(["msgfmt", "-o", str(tmp_path / "django.mo"), str(CATALOG / "django.po")], check=True)
    with (tmp_path / "django.mo").open("rb") as fresh, (CATALOG / "django.mo").open("rb") as committed:
        assert gettext.GNUTranslations(committed)._catalog == gettext.GNUTranslations(fresh)._catalog
