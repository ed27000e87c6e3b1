"""Jinja2 environments for the games' live fragments, with Django's translations.

A live table renders its out-of-band regions for every version it plays, and for each variant of its
viewers; Django's template language spent about twice the CPU of Jinja2 on the same markup
(docs/benchmarks.md, "Browser viewers"), so those fragments are Jinja2 templates while the pages stay in
Django's language. Each game builds its own environment with its own filters (no registry shared between
games); each region is a macro of the game's template, called with the inputs it is a function of.

The strings are Django's: `gettext` and friends of the active language (the request's or the connection's),
collected into the catalogue by `make messages` (`cardroom`'s `makemessages` reads `.jinja` files too).
"""

from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from django.contrib.humanize.templatetags.humanize import intcomma
from django.template.defaultfilters import capfirst
from django.urls import reverse
from django.utils.translation import get_language, gettext, ngettext, npgettext, pgettext
from jinja2 import Environment, FileSystemLoader
from jinja2.runtime import Macro
from markupsafe import Markup

from live.faces import card_face
from live.templatetags.live_ui import clock, iso, seconds_left


def _once(translate: Callable[..., str]) -> Callable[..., str]:
    """`translate` (of the active language) remembering its answer to each message: called only in one
    language (`Fragments`), for the template's own constant messages."""
    answers: dict[tuple, str] = {}

    def translated(*message: str) -> str:
        found = answers.get(message)
        if found is None:
            found = answers[message] = translate(*message)
        return found

    return translated


def url(name: str, *args: Any) -> str:
    """The path of the URL pattern `name` with positional `args` (Django's `{% url %}`)."""
    return reverse(name, args=args)


class _Environment(Environment):
    def getattr(self, obj: Any, attribute: str) -> Any:
        """`a.b` of a dict is its item (as in Django's templates): the views are dicts, on which the attribute
        Jinja2 looks for first is never there."""
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def environment(
    directory: Path, *, filters: dict[str, Callable[..., Any]], globals: dict[str, Any]
) -> Environment:
    """An environment for the templates under `directory`: autoescaped, Django's translations (`_`,
    `pgettext`, `{% trans %}`), the filters every game's tables share and the game's own `filters` and
    `globals`."""
    env = _Environment(
        loader=FileSystemLoader(directory),
        autoescape=True,
        auto_reload=False,
        extensions=["jinja2.ext.i18n"],
    )
    # added to the environment by the i18n extension
    env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext, ngettext, newstyle=False, pgettext=pgettext, npgettext=npgettext
    )
    shared = {
        "intcomma": intcomma,
        "capfirst": capfirst,
        "card_face": card_face,
        "clock": clock,
        "iso": iso,
        "seconds_left": seconds_left,
    }
    env.filters.update(shared | filters)  # a game's own filter of a shared name is the one it gets
    env.globals.update({"url": url} | globals)
    return env


class Fragments:
    """The macros of one template: `render(name, context)` calls the macro `name` with the entries of
    `context` it takes (by their names).

    The template is made into a module per language, whose strings each come from Django's catalogue once:
    a message of the template is looked up once per process and language, not at every rendering (Django
    finds the active language anew for each string)."""

    def __init__(self, env: Environment, template: str) -> None:
        self.env, self.template = env, template
        self._modules: dict[str | None, Any] = {}
        self._made: dict[tuple, Markup] = {}  # `once`'s

    def once(self, name: str, *arguments: Hashable) -> Markup:
        """The macro `name` of `arguments`, made once per process and language: for markup that is a function
        of its arguments alone and takes few values (a card's face)."""
        key = (name, arguments, get_language())
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = Markup(self.macro(name)(*arguments))
        return made

    def macro(self, name: str) -> Macro:
        language = get_language()
        module = self._modules.get(language)
        if module is None:  # made at first use in each language, under it
            words = {"gettext": _once(gettext), "pgettext": _once(pgettext)}
            module = self.env.get_template(self.template).make_module({**words, "ngettext": ngettext})
            self._modules[language] = module
        return getattr(module, name)

    def render(self, name: str, context: dict[str, Any]) -> Markup:
        macro = self.macro(name)
        arguments = {argument: context[argument] for argument in macro.arguments if argument in context}
        return Markup(macro(**arguments))
