"""Every colour of the site is a theme variable: the light theme's ``:root`` block in
static/core/css/base.css and the dark theme's in static/core/css/dark.css name colours; no
other rule of any stylesheet of the project does (hex, ``rgb()`` and the other colour
functions, named and system colours), or it would stay the same in both themes. The dark
theme sets every colour variable the light one does, so none leaks from light into dark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.agentdash.project_files import ROOT, project_static, rel

THEME_FILES = {ROOT / "static/core/css/base.css", ROOT / "static/core/css/dark.css"}
THEME_SELECTOR = ":root"

# CSS Color 4's named colours and system colours (transparent and currentColor follow the
# theme, so they are allowed).
_NAMED = """
    aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue
    blueviolet brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk
    crimson cyan darkblue darkcyan darkgoldenrod darkgray darkgreen darkgrey darkkhaki
    darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen
    darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue
    dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite
    gold goldenrod gray green greenyellow grey honeydew hotpink indianred indigo ivory khaki
    lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
    lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen
    lightskyblue lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen
    magenta maroon mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen
    mediumslateblue mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream
    mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid
    palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum
    powderblue purple rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown
    seagreen seashell sienna silver skyblue slateblue slategray slategrey snow springgreen
    steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke yellow
    yellowgreen
    accentcolor accentcolortext activetext buttonborder buttonface buttontext canvas
    canvastext field fieldtext graytext highlight highlighttext linktext mark marktext
    selecteditem selecteditemtext visitedtext
"""
NAMED_COLOURS = frozenset(_NAMED.split())
HEX = re.compile(r"#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})\b")
COLOUR_FUNCTION = re.compile(
    r"\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color|light-dark)\s*\(", re.IGNORECASE
)
STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|url\([^)]*\)', re.IGNORECASE)
WORD = re.compile(r"[A-Za-z][\w-]*")


@dataclass(frozen=True)
class Declaration:
    path: Path
    line: int
    selector: str
    name: str
    value: str


def declarations(path: Path) -> list[Declaration]:
    """Every ``name: value`` of a stylesheet, with the selector of its block (the innermost
    block: inside ``@media`` the rule's own selector)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    found = []
    for block in re.finditer(r"([^{};]*)\{([^{}]*)\}", text):
        selector = " ".join(block.group(1).split())
        offset = block.start(2)
        for part in re.finditer(r"[^;]+", block.group(2)):
            name, colon, value = part.group().partition(":")
            if not colon:
                continue
            line = text.count("\n", 0, offset + part.start() + len(name) - len(name.lstrip())) + 1
            found.append(Declaration(path, line, selector, name.strip(), value.strip()))
    return found


def literal_colours(value: str) -> list[str]:
    """The colours ``value`` names literally."""
    value = STRINGS.sub(" ", value)
    found = HEX.findall(value) + [m.group().rstrip("( ") for m in COLOUR_FUNCTION.finditer(value)]
    found += [w for w in WORD.findall(value) if w.lower() in NAMED_COLOURS]
    return found


def stylesheets() -> list[Path]:
    return [path for name, path in project_static().items() if name.endswith(".css")]


def in_theme_block(decl: Declaration) -> bool:
    return decl.path in THEME_FILES and decl.selector == THEME_SELECTOR


def theme_colours(path: Path) -> dict[str, str]:
    """The colour variables a theme file's ``:root`` block sets."""
    return {
        d.name: d.value
        for d in declarations(path)
        if in_theme_block(d) and d.name.startswith("--") and literal_colours(d.value)
    }


def test_the_stylesheets_are_found() -> None:
    names = {rel(p) for p in stylesheets()}
    assert {
        "static/core/css/base.css",
        "static/core/css/dark.css",
        "agentdash/dashboard/static/dashboard/css/session.css",
        "agentdash/dashboard/static/dashboard/css/timeline.css",
    } <= names


@pytest.mark.parametrize("path", stylesheets(), ids=rel)
def test_no_literal_colour_outside_the_theme_blocks(path: Path) -> None:
    problems = [
        f"{rel(d.path)}:{d.line}: {d.selector} {{ {d.name}: {d.value} }} names {found}"
        for d in declarations(path)
        if not in_theme_block(d) and (found := literal_colours(d.value))
    ]
    assert not problems, (
        "literal colours outside the theme (use a variable of static/core/css/base.css and "
        "set it in dark.css too):\n  " + "\n  ".join(problems)
    )


def test_the_dark_theme_sets_every_colour_the_light_one_does() -> None:
    light = theme_colours(ROOT / "static/core/css/base.css")
    dark = theme_colours(ROOT / "static/core/css/dark.css")
    assert len(light) >= 20, light
    assert sorted(set(light) - set(dark)) == [], "set in light only: they would stay light"
    assert sorted(set(dark) - set(light)) == [], "set in dark only: light has no value"


def test_every_theme_variable_used_is_defined() -> None:
    """A misspelt ``var(--pannel)`` is no colour at all: every variable a stylesheet reads
    without a fallback is set somewhere (a theme block, or a rule or script for the rest)."""
    defined = {
        d.name for path in stylesheets() for d in declarations(path) if d.name.startswith("--")
    }
    light = theme_colours(ROOT / "static/core/css/base.css")
    used = {
        name
        for path in stylesheets()
        for d in declarations(path)
        for name in re.findall(r"var\(\s*(--[\w-]+)\s*\)", d.value)
    }
    undefined = sorted(used - defined)
    assert not undefined, f"used, never set: {undefined}"
    assert set(light) <= defined


@pytest.mark.parametrize(
    "value",
    ["#fff", "#F0F0F0", "#12345678", "rgb(0 0 0)", "RGBA(1, 2, 3, .5)", "hsl(10 20% 30%)",
     "oklch(70% .1 200)", "light-dark(#fff, #000)", "white", "1px solid Red", "Canvas",
     "linear-gradient(90deg, transparent, black)"],
)  # fmt: skip
def test_the_scanner_catches(value: str) -> None:
    assert literal_colours(value)


@pytest.mark.parametrize(
    "value",
    ["var(--fg)", "1px solid var(--line)", "transparent", "currentColor", "inherit",
     'attr(data-label) " "', '"red"', "url(#white)", "nowrap", "blink 1.2s infinite",
     "ui-monospace, Menlo, Consolas, monospace", "0 0 0 3px var(--ok-glow)"],
)  # fmt: skip
def test_the_scanner_allows(value: str) -> None:
    assert not literal_colours(value)


def test_a_selector_is_never_read_as_a_colour() -> None:
    """``#fff`` in a selector is an id, not a colour; only declarations are read."""
    decls = declarations(ROOT / "static/core/css/base.css")
    assert all(not d.name.startswith("#") and "{" not in d.value for d in decls)
