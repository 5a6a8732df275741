"""The colour theme a person chose: light, dark, or whatever their system asks for.

The choice lives in a cookie (:data:`THEME_COOKIE`), not in the database: it belongs to the
browser, works on the login page, and is read with the request at no cost. The server puts
it into the page itself (``templates/base.html``), so the first paint is already in the
chosen theme — no script has to run first, and none could: the CSP allows no inline script,
and a module runs only after the page has been painted once. ``static/core/js/theme.js``
switches a page that is already open, and writes the same cookie.
"""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest

THEME_COOKIE = "agentdash_theme"
THEME_COOKIE_MAX_AGE = 365 * 24 * 3600  # seconds: the choice outlives the visit
THEMES = ("light", "dark", "system")
Theme = Literal["light", "dark", "system"]

# The dark palette's stylesheet (static/core/css/dark.css) applies under this media query:
# always, never, or when the system prefers dark. One file holds the dark palette; choosing
# a theme only changes where it applies.
_DARK_MEDIA: dict[str, str] = {
    "light": "not all",
    "dark": "all",
    "system": "(prefers-color-scheme: dark)",
}
_COLOR_SCHEME = {"light": "light", "dark": "dark", "system": "light dark"}
# The toggle is one button going round the three; static/core/js/theme.js says the same.
_NEXT: dict[str, Theme] = {"light": "dark", "dark": "system", "system": "light"}


def theme_parse(value: str | None) -> Theme:
    """The theme a cookie value names; anything else (absent, unknown, hostile) is
    ``"system"``."""
    match value:
        case "light" | "dark":
            return value
    return "system"


def theme_of(request: HttpRequest) -> Theme:
    """The theme ``request``'s browser chose (``"system"`` when it chose none)."""
    return theme_parse(request.COOKIES.get(THEME_COOKIE))


def theme_page_data(choice: Theme) -> dict[str, str | int]:
    """What a page needs of the theme: ``choice`` (``light``/``dark``/``system``), ``dark_media``
    (the ``media`` of the dark stylesheet's ``<link>``), ``color_scheme`` (the page's
    ``color-scheme``, for the browser's own controls), ``next`` and ``label`` (the toggle's
    next choice and what it says), and the cookie's name and lifetime for the toggle's
    script."""
    following = _NEXT[choice]
    return {
        "choice": choice,
        "next": following,
        "label": f"Theme: {choice} (switch to {following})",
        "dark_media": _DARK_MEDIA[choice],
        "color_scheme": _COLOR_SCHEME[choice],
        "cookie": THEME_COOKIE,
        "max_age": THEME_COOKIE_MAX_AGE,
    }
