"""`makemessages` that also collects the strings of the games' Jinja2 fragments (`*.jinja`, `live.jinja`).

Django's own command reads its template language's tags; a `.jinja` file is read by Jinja2's parser instead
(`_("...")`, `pgettext(...)`, `{% trans %}` blocks), and what it finds is handed to xgettext as the calls of
a Python file, each on its line of the template, so the catalogue names the template's lines.
"""

from django.core.management.commands import makemessages
from jinja2 import Environment

#: What the catalogue's Python reader takes for each of Jinja2's translation functions.
_CALLS = {"_": "gettext", "gettext": "gettext", "ngettext": "ngettext"}


def as_python(source: str) -> str:
    """The translatable strings of a Jinja2 template as gettext calls, on the lines where they are."""
    lines: list[list[str]] = [[] for _ in source.splitlines()] or [[]]
    env = Environment(extensions=["jinja2.ext.i18n"])
    found = env.extract_translations(source)  # type: ignore[attr-defined]  # the i18n extension's
    for line, function, message in found:
        strings = message if isinstance(message, tuple) else (message,)
        if function == "ngettext":
            strings = (*strings[:2], 1)
        elif function == "npgettext":
            strings = (*strings[:3], 1)
        if None in strings:
            continue  # not a constant: nothing to collect
        call = _CALLS.get(function, function)
        lines[line - 1].append(f"{call}({', '.join(repr(string) for string in strings)})")
    return "\n".join("; ".join(calls) for calls in lines) + "\n"


class BuildFile(makemessages.BuildFile):
    def preprocess(self):
        if not self.path.endswith(".jinja"):
            return super().preprocess()
        with open(self.path, encoding="utf-8") as source, open(self.work_path, "w", encoding="utf-8") as out:
            out.write(as_python(source.read()))


class Command(makemessages.Command):
    build_file_class = BuildFile

    def handle(self, *args, **options):
        options["extensions"] = [*(options.get("extensions") or ["html", "txt", "py"]), "jinja"]
        return super().handle(*args, **options)
