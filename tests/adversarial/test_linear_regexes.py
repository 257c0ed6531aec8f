"""Every regular expression that bundle text can reach runs in linear time.

Python's ``re`` backtracks: a pattern with two ways to split one run of characters (a
greedy run next to another that accepts the same characters) costs quadratic or cubic
time on a long run. One such pattern made a 4 KB file stall a load for 100 s (issue 16).

:data:`CATALOG` names every compiled pattern in okfx, how the code calls it and the shapes
that would hurt it; each is timed on ``n`` and ``4n`` characters (:func:`hostile.growth_4n`)
and must grow by less than :data:`hostile.LINEAR_BOUND` (linear is 4, quadratic 16). A
second pass tries a generic battery of runs built from the pattern's own characters. A
pattern added without a catalog entry, or written inline in a call, fails
:func:`test_every_pattern_is_in_the_catalog`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile import LINEAR_BOUND, concept, growth_4n, quick_growth, write

import okfx
from okfx import Bundle
from okfx.bundle import quickyaml
from okfx.search.index import without_parentheses
from okfx.sources.spec import redact, scrub

Shape = Callable[[int], str]

# How the code calls a pattern. "scan" stands for search, finditer, findall, split and sub,
# which all try every start position; "match" for match and fullmatch (one start).
RUN: dict[str, Callable[[re.Pattern[str]], Callable[[str], object]]] = {
    "scan": lambda rx: lambda text: sum(1 for _ in rx.finditer(text)),
    "match": lambda rx: rx.match,
    "fullmatch": lambda rx: rx.fullmatch,
}


def rep(unit: str, head: str = "", tail: str = "") -> Shape:
    """``head + unit * k + tail`` with about ``n`` characters of repeated ``unit``."""
    return lambda n: head + unit * max(n // len(unit), 0) + tail


# name -> (how it is called, shapes that would make it backtrack)
CATALOG: dict[str, tuple[str, list[Shape]]] = {
    # -- the path guard: tool arguments, links, frontmatter paths
    "okfx.bundle.paths._FORBIDDEN": ("scan", [rep("a"), rep("a/")]),
    "okfx.bundle.paths._DRIVE": ("match", [rep("a")]),
    "okfx.bundle.parse._WS": ("scan", [rep("a/")]),
    "okfx.bundle.parse._NOT_ID": ("scan", [rep("a.")]),
    "okfx.bundle.parse._DATE_SHAPE": ("fullmatch", [rep("1"), rep("1-"), rep("1", tail="-")]),
    # -- frontmatter
    "okfx.bundle.frontmatter._CLOSE": (
        "scan",
        [rep("\n---", tail=" x"), rep(" ", "\n---", "x"), rep("\n--- x")],
    ),
    "okfx.bundle.frontmatter._OPEN": ("match", [rep(" ", "---", "x"), rep("\t", "---", "x")]),
    "okfx.bundle.frontmatter._COMPACT_NEST": (
        "scan",
        [rep("- "), rep("- ", tail="x"), rep(" ", tail="-x"), rep("-"), rep("- \t?\t")],
    ),
    "okfx.bundle.frontmatter._BRACKETS": ("scan", [rep("["), rep("a")]),
    "okfx.bundle.yamlrepair._LINE": (
        "fullmatch",
        [
            rep("a"),
            rep("a "),
            rep(" ", "a: x", "y"),
            rep(": ", "a"),
            rep(" ", "a:"),
            rep("a ", tail=":"),
        ],
    ),
    "okfx.bundle.quickyaml._ODD": ("scan", [rep("a"), rep("\u00e9")]),
    "okfx.bundle.quickyaml._SINGLE": (
        "match",
        [rep("a", "'"), rep("''", "'"), rep("'a'", "'"), rep("''", "'", "a")],
    ),
    "okfx.bundle.quickyaml._DOUBLE": ("match", [rep("a", '"', "\\"), rep("a", '"')]),
    "okfx.bundle.quickyaml._FLOW_ITEM": (
        "match",
        [rep(" ", tail="x"), rep(" "), rep("a "), rep("a", "'"), rep("a", '"'), rep(" a")],
    ),
    "okfx.bundle.quickyaml._FLOW_KEY": (
        "match",
        [rep(" ", tail="a"), rep("a", tail=":"), rep("a ", tail=":"), rep(": ", "a")],
    ),
    "okfx.bundle.quickyaml._FLOW_MAP_END": ("match", [rep(" "), rep(" ", tail="x")]),
    "okfx.bundle.quickyaml._FLOW_PLAIN_ONLY": ("fullmatch", [rep("a", tail="["), rep("a, ")]),
    # -- markdown links
    "okfx.codeblocks.FENCE": (
        "match",
        [
            rep("`", tail="`a"),
            rep("~", tail="x"),
            rep("`", "   "),
            rep(" ", "```", "`"),
            rep("`"),
            rep("~", "   "),
            rep(" "),
        ],
    ),
    "okfx.codeblocks._LIST_ITEM": ("match", [rep("1"), rep(" "), rep("1", tail="x")]),
    "okfx.bundle.links._INLINE": (
        "scan",
        [
            rep(" ", "[a](", "x"),
            rep("[a]("),
            rep("["),
            rep(" ", "[a](b", '"'),
            rep("a(", "[]("),
            rep("\\[", "["),
            rep("a", "[a](<"),
            rep("a", "[a](b '"),
            rep("a", "[a](b (", "x"),
            rep("[a]", "[", "("),
            rep("(a)", "[a](b"),
            rep("[x]a", "["),
        ],
    ),
    "okfx.bundle.links._REFDEF": (
        "scan",
        [
            rep(" ", "\n[a]: ", "x"),
            rep(" ", "\n[a]: b", "x"),
            rep("\n[a]:"),
            rep("a", "\n["),
            rep("a", "\n[a]: <"),
            rep("a", '\n[a]: b "'),
            rep("\\a", "\n["),
            rep(" \t", "\n[a]:", "x"),
        ],
    ),
    "okfx.bundle.links._FULLREF": (
        "scan",
        [rep("a", "[a]["), rep("["), rep("[a]"), rep("\\[", "["), rep("[a]", "[", "[")],
    ),
    "okfx.bundle.links._SHORTREF": (
        "scan",
        [rep("a", "["), rep("[a]"), rep("[\\"), rep("\\]", "["), rep("[a"), rep("a]")],
    ),
    "okfx.codeblocks._FENCE_LINE": (
        "scan",
        [rep("a", "\n```"), rep("`", "\n"), rep("\n   `"), rep("\n ~~~")],
    ),
    "okfx.codeblocks._HTML_TAG": (
        "scan",
        [rep("a", "<td "), rep("<td"), rep("<td "), rep("</"), rep("<a", tail=">"), rep("<p <")],
    ),
    "okfx.codeblocks._INDENTED_AFTER_BLANK": (
        "scan",
        [rep(" ", "\n"), rep(" ", "\n\n"), rep("\n \n"), rep(" ", "\n\n", "\n"), rep("\n\t")],
    ),
    "okfx.bundle.images._IMAGE": (
        "scan",
        [rep("!["), rep("a", "!["), rep("a", "![x](", ")"), rep("![x](a ")],
    ),
    "okfx.bundle.problems._QUOTED": ("scan", [rep("'"), rep("a", "'"), rep("'a")]),
    "okfx.bundle.links._FOOTNOTE": ("scan", [rep("a", "[^"), rep("[^"), rep("[^a")]),
    "okfx.bundle.links._FOOTNOTE_DEF": (
        "scan",
        [rep("\n[^"), rep("a", "\n[^"), rep("\n   [^a]"), rep("\n[^a]")],
    ),
    "okfx.bundle.wikilinks.WIKILINK": (
        "scan",
        [
            rep("[["),
            rep("a", "[["),
            rep("a", "[[a#"),
            rep("a", "[[a|"),
            rep("[[a]"),
            rep("[[a|b"),
            rep("#", "[[a"),
            rep("|", "[[a#b"),
        ],
    ),
    "okfx.bundle.scope._OKF_VERSION": (
        "scan",
        [rep(" ", "okf_version", "x"), rep("okf_version \n"), rep("a", "okf_version: ")],
    ),
    "okfx.codeblocks.BACKTICKS": ("scan", [rep("`"), rep("`a")]),
    "okfx.codeblocks._TILDES": ("scan", [rep("~"), rep("~a")]),
    "okfx.bundle.links._SINGLE_TICK_SPAN": ("scan", [rep("a", "`"), rep("`a"), rep("a`")]),
    "okfx.bundle.links._SCP": ("match", [rep("a"), rep("a", "a@"), rep(".", "a@", "/")]),
    "okfx.bundle.links._SCHEME": ("match", [rep("a"), rep("a", tail="/")]),
    "okfx.bundle.links._ESCAPED": (
        "scan",
        [rep("&a"), rep("a", "&"), rep("&#1"), rep("1", "&#"), rep("\\"), rep("&#x")],
    ),
    "okfx.tools.views._SURROGATE": ("scan", [rep("a"), rep("\ud800a")]),
    "okfx.bundle.links._SIMPLE": (
        "fullmatch",
        [rep("a", tail=".mdx"), rep("a/", tail="a.mdx"), rep("../", tail="a"), rep("a-")],
    ),
    # -- typed fields: the Attested Computation fence (issue 16's cubic case)
    "okfx.bundle.fields._COMPUTATION_HEADING": (
        "scan",
        [
            rep(" ", "# ", "computation x"),
            rep("#"),
            rep("#", "# computation", "x"),
            rep("# \n"),
            rep(" ", "# computation", "x"),
            rep("# computation \n"),
        ],
    ),
    "okfx.bundle.fields._HEADING": ("match", [rep("#"), rep(" ", "# ")]),
    "okfx.bundle.fields._FENCE_OPEN": (
        "match",
        [
            rep("~", tail="`"),
            rep("a", "```", "`"),
            rep(" ", "```", "`"),
            rep("`", tail="x`"),
            rep("a ", "~~~", "`"),
            rep("\t", "~~~ ", "`"),
        ],
    ),
    "okfx.bundle.fields._ACTOR_WORD": ("scan", [rep("a"), rep("a_"), rep("a ")]),
    "okfx.bundle.fields._FENCE_CLOSE": (
        "match",
        [rep("`", tail="x"), rep(" ", "~~~", "x"), rep("~", tail=" x")],
    ),
    # -- the line a problem's message names (messages quote bundle text)
    "okfx.bundle.problems._LINK_LINE": ("scan", [rep("(line "), rep("1", "(line "), rep("(")]),
    "okfx.bundle.problems._LAST_LINE": (
        "scan",
        [rep(" (line "), rep("1", " (line "), rep(" (line 1)"), rep(" (line 1", tail="x")],
    ),
    # -- the knowledge block's tool names (okfx's own text; bundle text only in a cut hint)
    "okfx.tools.prompt._TOOL_NAME": ("scan", [rep("read_concept"), rep("read_"), rep("_", "read")]),
    # -- YAML errors said to the author
    "okfx.bundle.yamlerrors._QUOTED_VALUE": (
        "fullmatch",
        [
            rep(" ", "", '"x'),
            rep("a", "", ': "'),
            rep("- ", "", "'"),
            rep("a ", "", "x"),
            rep(" a", "- ", ": '"),
            rep("a:", "", ' "'),
        ],
    ),
    # -- heading anchors (validate's broken_anchor)
    "okfx.bundle.anchors._HEADING": (
        "scan",
        [rep(" ", "# ", "x"), rep("#"), rep("# \n"), rep("="), rep("-", "", " x"), rep(" ", "==")],
    ),
    "okfx.bundle.anchors._INLINE_LINK": (
        "scan",
        [
            rep("["),
            rep("]("),
            rep("a", "[", "]("),
            rep("![a]"),
            rep("[a]["),
            rep("!"),
            rep("a", '[a](x "'),
            rep('"', "[a]("),
            rep("'", "[a](x "),
            rep('[a](x "") '),
        ],  # fmt: skip
    ),
    "okfx.bundle.anchors._TAG": ("scan", [rep("<"), rep("a", "<"), rep("<a")]),
    "okfx.bundle.anchors._EMPHASIS": ("scan", [rep("_"), rep("a_"), rep("_ ")]),
    "okfx.bundle.anchors._SHORTCODE": ("scan", [rep(":"), rep("a", ":"), rep(":a")]),
    "okfx.bundle.anchors._ATTRIBUTE": (
        "scan",
        [rep(" ", "id"), rep("id="), rep("a", 'id="'), rep("name"), rep("\t", "id=", "=")],
    ),
    # -- reserved files
    "okfx.bundle.reserved.HEADING": ("match", [rep(" ", "# ", "x #"), rep("#"), rep("# ")]),
    "okfx.bundle.reserved._ENTRY": (
        "match",
        [
            rep("a", "* ["),
            rep(" ", "* [a](", "x"),
            rep(" ", "* [a](b", "x"),
            rep(" ", "* [a](b)", "x"),
            rep(" ", "* [a](b) -", "\n"),
            rep("\\a", "* ["),
            rep("a", '* [a](b "'),
            rep("]", "* [a"),
            rep("[a", "* ["),
            rep("[a]", "* ["),
            rep("[a]", "* [", "]("),
            rep("[\\]", "* ["),
        ],
    ),
    "okfx.bundle.reserved._LINK": (
        "scan",
        [rep("a", "["), rep(" ", "[a](", "x"), rep("[a](b) "), rep("\\a", "["), rep("[[a]")],
    ),
    "okfx.bundle.reserved._ITEM": ("match", [rep(" ", "* "), rep(" ")]),
    "okfx.bundle.reserved._ISO_DATE": ("match", [rep("1")]),
    "okfx.bundle.logdates._NUMERIC": ("fullmatch", [rep("1"), rep("1", "1-1-")]),
    "okfx.bundle.logdates._COMPACT": ("fullmatch", [rep("1")]),
    "okfx.bundle.logdates._MONTH_DAY": ("fullmatch", [rep("a"), rep(" ", "Aug"), rep("1", "Aug ")]),
    "okfx.bundle.logdates._DAY_MONTH": ("fullmatch", [rep("1"), rep(" ", "1"), rep("a", "1 ")]),
    "okfx.bundle.reserved._TIME": ("match", [rep("T"), rep("1", "T")]),
    "okfx.bundle.reserved._LABEL": ("match", [rep("*", "**"), rep("_", "__"), rep("a", "**")]),
    "okfx.bundle.reserved._SETEXT": ("match", [rep("="), rep("-", "", " x"), rep(" ", "==")]),
    "okfx.bundle.reserved._BREAK": (
        "match",
        [rep("- ", tail="x"), rep("-", tail="x"), rep(" ", "---", "x"), rep("*\t", tail="-")],
    ),
    # -- search over concept text
    "okfx.search.analyzer._PIECE_SEP": ("scan", [rep("a"), rep(" "), rep("a b")]),
    "okfx.search.analyzer._WORD_SEP": ("scan", [rep("_"), rep("a_")]),
    "okfx.search.analyzer._RUNS": ("scan", [rep("a1"), rep("a")]),
    "okfx.search.analyzer._LATIN_MARKED": ("scan", [rep("ā"), rep("a"), rep("aā")]),
    "okfx.search.snippets._ALNUM": ("scan", [rep("_"), rep(" ")]),
    "okfx.search.snippets._DEFINITION": (
        "scan",
        [rep(" ", tail="[^a]: x"), rep("[^"), rep("\t", "[^", "]:"), rep("[^a]:\n")],
    ),
    "okfx.search.snippets._LABEL": ("scan", [rep("[^"), rep("a", "[^"), rep("[^a")]),
    "okfx.search.snippets._ADDRESS": (
        "scan",
        [
            rep("]("),
            rep("a", "]("),
            rep("<a:"),
            rep("a", "<a:"),
            rep("http://"),
            rep("a", "https://"),
        ],
    ),
    "okfx.search.scoring._WORDS": ("scan", [rep("a"), rep("a_"), rep("_")]),
    "okfx.search.cjk._CJK": ("scan", [rep("a"), rep("\u00e9")]),
    "okfx.search.cjk._CJK_RUN": ("scan", [rep("\u4e2d"), rep("\u4e2da")]),
    "okfx.search.cjk._LATIN_WORD": ("scan", [rep("a"), rep("a1"), rep("a_"), rep("\u00e9")]),
    "okfx.search.cjk._KANA": ("scan", [rep("a"), rep("\u4e2d")]),
    "okfx.search.cjk._HANGUL": ("scan", [rep("a"), rep("\u4e2d")]),
    "okfx.search.cjk._HANGUL_WORD": ("scan", [rep("\uac00"), rep("\uac00a")]),
    "okfx.search.cjk._LETTER_BEFORE_CJK": (
        "scan",
        [rep("a \u4e2d"), rep("a "), rep("ab"), rep("\u4e2da")],
    ),
    "okfx.search.cjk._LETTER_AFTER_CJK": (
        "scan",
        [rep("\u4e2d a"), rep("\u4e2d "), rep("\u4e2dab"), rep("\u4e2da\u4e2d")],
    ),
    "okfx.search.hybrid._IDENTIFIER": (
        "fullmatch",
        [
            rep("a_", tail="!"),
            rep("a", tail="!"),
            rep("_", tail="!"),
            rep("a."),
            rep("aA", tail="!"),
        ],
    ),
    "okfx.search.snippets._BLOCK": ("match", [rep("1"), rep("-"), rep("#")]),
    "okfx.search.snippets._ITEM": ("match", [rep("1"), rep("-")]),
    "okfx.search.acronyms._ACRONYM": ("fullmatch", [rep("A", tail="s!"), rep("As")]),
    "okfx.search.versions._VERSION": (
        "fullmatch",
        [rep("1.", tail="a"), rep(".1", "v1", "a"), rep(".x", "1", "."), rep("1"), rep("v")],
    ),
    "okfx.search.suggest._SEPARATORS": ("scan", [rep("_"), rep("a_"), rep(" "), rep("a")]),
    "okfx.search.suggest._LETTERS": ("scan", [rep("a"), rep("a1"), rep("é_")]),
    "okfx.search.suggest._CAMEL_PARTS": ("scan", [rep("A"), rep("Ab"), rep("a"), rep("AB", "c")]),
    "okfx.tools.notices._LETTERS": ("scan", [rep("a"), rep("a "), rep("1a")]),
    "okfx.tools.hostpaths._FILE_URL": (
        "match",
        [rep("/", "file://"), rep("a@", "file://"), rep("a", "file://", "#"), rep("@/")],
    ),
    "okfx.tools.hostpaths._FILE_URLS": (
        "scan",
        [rep("file://"), rep("a", "file://"), rep("file:/"), rep(" file://a")],
    ),
    "okfx.cli.commands._NAMED": ("fullmatch", [rep("a", tail="="), rep("a="), rep("=", "a")]),
    # -- the viewer's markdown
    "okfx.web.document._NOT_PROSE": (
        "scan",
        [rep("]("), rep("`"), rep("https://"), rep("](a"), rep("`a")],
    ),
    "okfx.web.markdown._INVISIBLE": ("scan", [rep(" "), rep("a "), rep("\x00a")]),
    "okfx.web.markdown._SCHEME": ("match", [rep("a"), rep("a", tail=":"), rep("a1")]),
    "okfx.web.markdown._INERT_TAG": (
        "scan",
        [rep("<"), rep("</"), rep("<br"), rep(" ", "<b"), rep("<b /"), rep("&lt;b&gt;")],
    ),
    "okfx.web.markdown._INLINE": (
        "scan",
        [rep("`"), rep("**"), rep("[a"), rep("[a](", "("), rep("`a")],
    ),
    "okfx.search.grep._TEXT_ANCHORED": ("scan", [rep("\\"), rep("a", "(?")]),
    "okfx.bundle.reserved.HEADING_LINES": ("scan", [rep(" ", "# ", "x"), rep("#"), rep("# \n")]),
    "okfx.bundle.bundle._NOT_IN_NAME": ("scan", [rep("a"), rep("+"), rep("a+")]),
    "okfx.adapters._mcp_sdk._BIDI": ("scan", [rep("a"), rep("\u202e"), rep("a\u200f")]),
    "okfx.adapters._source._TOOL_NAME": ("fullmatch", [rep("a"), rep("a", tail=" "), rep("-")]),
    "okfx.cli.computations._REQUIRED": (
        "fullmatch",
        [
            rep("a", "parameter '"),
            rep("'", "parameter '"),
            rep(" ", "parameter 'x' is required: give "),
        ],
    ),
    "okfx.tools.display._ACTS": ("scan", [rep("a"), rep("\x1b"), rep("a\u2066")]),
    "okfx.tools.display._IN_REPR": ("scan", [rep("\\"), rep("\\x"), rep("\\u20"), rep("\\x1")]),
    "okfx.adapters._mcp_resources._LABEL_LOOKALIKE": (
        "scan",
        [rep(" ", "<!--"), rep("<!-- "), rep("<!--\n\t")],
    ),
    "okfx.tools.payloads._DAY": ("fullmatch", [rep("1"), rep("1-"), rep("1", "2026-01-")]),
    "okfx.tools.views._REGEX_LOOK": (
        "scan",
        [rep("\\"), rep("["), rep("(", tail="x"), rep("(a"), rep(".")],
    ),
    "okfx.bundle.links._CITED": ("scan", [rep("[^"), rep("[^a"), rep("[^a]:")]),
    "okfx.bundle.links._FOOTNOTE_LINE": (
        "scan",
        [
            rep("[^a]: x\n"),
            rep("\n", "[^a]: x"),
            rep("\n    x", "[^a]: x"),
            rep(" \n", "[^a]: x", "    y"),
            rep("[^"),
        ],
    ),
    "okfx.trust._PLACEHOLDER": ("match", [rep("<"), rep("{", "{{"), rep("a", "<", ">>")]),
    "okfx.trust._ACTOR": (
        "match",
        [rep("a"), rep("b", "a:", " "), rep("a/", tail=" "), rep("a", tail=" ")],
    ),
    # -- sources: archive member names and what a user typed
    "okfx.sources.archive._DRIVE": ("match", [rep("a")]),
    "okfx.sources.archive._SEPARATORS": ("scan", [rep("a"), rep("/\\")]),
    "okfx.sources.spec._SCHEME": ("match", [rep("a", tail=":/")]),
    "okfx.sources.spec._REMOTE_HELPER": ("match", [rep("a", tail=":")]),
    "okfx.sources.spec._SCP_LIKE": ("match", [rep("a", tail="@b"), rep("b", "a@[")]),
    "okfx.sources.spec._CONTROL": ("scan", [rep("a")]),
    "okfx.sources.spec._COMMIT_ID": ("fullmatch", [rep("a"), rep("a", tail="x")]),
    "okfx.sources.spec._SHORT_COMMIT": ("fullmatch", [rep("a"), rep("a", tail="x")]),
}

# PyYAML's implicit resolvers type every plain scalar of a frontmatter.
_YAML_SHAPES = [
    rep("1", tail="x"),
    rep("1_", tail="x"),
    rep("1:", tail="x"),
    rep("1:5", tail="x"),
    rep("1", ".", "e"),
    rep("f", "0x", "g"),
    rep("1", "0b", "2"),
    rep("1", "-", ".x"),
    rep("5:5", "1", ".x"),
    rep("0", "0", "8"),
    rep("1", "1:", "."),
]


def _yaml_patterns() -> dict[str, re.Pattern[str]]:
    out: dict[str, re.Pattern[str]] = {}
    for entries in quickyaml._BY_FIRST.values():
        for tag, rx in entries:
            out["yaml:" + tag.rsplit(":", 1)[-1]] = rx
    return out


def _pattern(name: str) -> re.Pattern[str]:
    if name.startswith("yaml:"):
        return _yaml_patterns()[name]
    module, _, attr = name.rpartition(".")
    rx = getattr(pytest.importorskip(module), attr)  # the viewer needs the web extra
    assert isinstance(rx, re.Pattern), name
    return rx


def _cases() -> list[tuple[str, str, list[Shape]]]:
    cases = [(name, mode, shapes) for name, (mode, shapes) in CATALOG.items()]
    cases += [(name, "match", _YAML_SHAPES) for name in sorted(_yaml_patterns())]
    return cases


SOURCE = Path(okfx.__file__).parent


def _compiled_patterns() -> tuple[set[str], list[str]]:
    """Module-level ``NAME = re.compile(...)`` in okfx's source (read, not imported:
    the adapters import whole agent frameworks), and any other ``re.`` call that takes
    a pattern: one compiled elsewhere, or ``re.split(r"...", text)``, would escape the
    catalog."""
    names: set[str] = set()
    stray: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        module = ".".join(("okfx", *path.relative_to(SOURCE).with_suffix("").parts))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top: set[int] = set()
        for node in tree.body:
            value = getattr(node, "value", None)
            if isinstance(node, ast.Assign | ast.AnnAssign) and _is_re_call(value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(f"{module}.{t.id}" for t in targets if isinstance(t, ast.Name))
                top.add(id(value))
        stray += _stray_calls(tree, module, top)
    return names, stray


def _stray_calls(tree: ast.AST, module: str, top: set[int]) -> list[str]:
    """``module.function`` (or ``module``) of each ``re.`` call not in ``top``."""
    found: list[str] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, f"{module}.{child.name}")
                continue
            if _is_re_call(child) and id(child) not in top:
                found.append(where)
            visit(child, where)

    visit(tree, module)
    return found


_PATTERN_CALLS = frozenset(
    {"compile", "search", "match", "fullmatch", "finditer", "findall", "split", "sub", "subn"}
)


def _is_re_call(node: object) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _PATTERN_CALLS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
    )


#: Patterns built at run time from escaped words, each with its own linearity test below.
BUILT = frozenset(
    {"okfx.web.finding.marked", "okfx.cli.render._cut_around", "okfx.adapters._source.renamer"}
)


@pytest.mark.parametrize(
    "shape", [rep("a"), rep("ab "), rep("a", tail="!"), rep("b a"), rep("aab")]
)
def test_the_viewers_match_marker_grows_linearly(shape: Shape) -> None:
    marked = pytest.importorskip("okfx.web.finding").marked  # needs the web extra

    assert growth_4n(lambda text: marked(text, ["a", "aa", "ab", "aab"]), shape) < LINEAR_BOUND


@pytest.mark.parametrize("shape", [rep("a"), rep("ab "), rep("b a", tail="aab"), rep("界a")])
def test_the_cli_excerpt_cut_grows_linearly(shape: Shape) -> None:
    from okfx.cli.render import _cut_around

    assert growth_4n(lambda text: _cut_around(text, 100, ["aab", "ab"]), shape) < LINEAR_BOUND


@pytest.mark.parametrize(
    "shape", [rep("read_concept "), rep("read_concep"), rep("a.read_concept"), rep("_")]
)
def test_the_adapters_tool_renamer_grows_linearly(shape: Shape) -> None:
    from okfx.adapters._source import renamer

    rename = renamer({"read_concept": "okf_read_concept", "read_resource": "okf_read_resource"})
    assert growth_4n(lambda text: rename({"notice": text}), shape) < LINEAR_BOUND


def test_every_pattern_is_in_the_catalog() -> None:
    found, stray = _compiled_patterns()
    stray = [where for where in stray if where not in BUILT]
    assert stray == [], f"compile these patterns at module level (and catalog them): {stray}"
    assert sorted(found - set(CATALOG)) == [], "add a linearity case to CATALOG for these"
    assert sorted(set(CATALOG) - found) == [], "CATALOG names a pattern that is gone"


@pytest.mark.parametrize(("name", "mode", "shapes"), _cases(), ids=[c[0] for c in _cases()])
def test_worst_case_shapes_grow_linearly(name: str, mode: str, shapes: list[Shape]) -> None:
    run = RUN[mode](_pattern(name))
    for i, shape in enumerate(shapes):
        ratio = growth_4n(run, shape)
        assert ratio < LINEAR_BOUND, (
            f"{name} shape {i} ({shape(8)!r}...): 4x input, {ratio:.1f}x time"
        )


def _battery(rx: re.Pattern[str]) -> list[tuple[str, Shape]]:
    """Runs of the pattern's own characters (and a few common ones): ``a*n``, ``a*n + b``,
    ``b*3 + a*n + b`` and ``(ab)*n`` for every pair."""
    chars = sorted({c for c in rx.pattern if not c.isalnum()} | set("a0 \t\n"))
    shapes: list[tuple[str, Shape]] = []
    for a in chars:
        shapes.append((f"{a!r}*n", rep(a)))
        for b in chars:
            shapes.append((f"{a!r}*n+{b!r}", rep(a, tail=b)))
            shapes.append((f"{b * 3!r}+{a!r}*n+{b!r}", rep(a, b * 3, b)))
            shapes.append((f"({a + b!r})*n", rep(a + b)))
    return shapes


@pytest.mark.parametrize(("name", "mode", "shapes"), _cases(), ids=[c[0] for c in _cases()])
def test_generic_runs_grow_linearly(name: str, mode: str, shapes: list[Shape]) -> None:
    rx = _pattern(name)
    run = RUN[mode](rx)
    slow = []
    for label, shape in _battery(rx):
        ratio = quick_growth(run, shape)
        if ratio is not None and ratio >= LINEAR_BOUND:
            slow.append(f"{label}: {ratio:.1f}x")
    assert slow == [], f"{name} grows superlinearly on: {slow}"


# -- functions that replaced a pattern ------------------------------------------------------------
@pytest.mark.parametrize(
    "shape",
    [rep("a"), rep("a", tail="://"), rep("a", "https://", "/"), rep("a1"), rep("a://")],
)
def test_redacting_credentials_grows_linearly(shape: Shape) -> None:
    """A remote's stderr (scrubbed before it is shown) is text a git server controls."""
    assert growth_4n(redact, shape) < LINEAR_BOUND
    assert growth_4n(lambda text: scrub(text, "https://u:pw@h/r"), shape) < LINEAR_BOUND


@pytest.mark.parametrize("shape", [rep("("), rep("a", "("), rep("(a"), rep("()"), rep(")(")])
def test_dropping_parenthesised_words_from_a_title_grows_linearly(shape: Shape) -> None:
    assert growth_4n(without_parentheses, shape) < LINEAR_BOUND


@pytest.mark.parametrize(
    "text",
    ["a (b) c", "(((x)", "a (b (c) d) e", "no close (at all", ")(", "", "(x)(y)z", "((("],
)
def test_dropping_parenthesised_words_is_what_the_pattern_did(text: str) -> None:
    assert without_parentheses(text) == re.sub(r"\([^)]*\)", " ", text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://user:pw@host/repo", "https://***@host/repo"),
        ("see 1http://a:b@h/x and ssh://git@h:2/x", "see 1http://***@h/x and ssh://***@h:2/x"),
        ("x+y.z-w://u@v@h/p", "x+y.z-w://***@h/p"),
        ("https://host/a@b", "https://host/a@b"),
        ("no url here: a@b", "no url here: a@b"),
        ("://u@h", "://u@h"),
        ("9://u@h 7a://u@h", "9://u@h 7a://***@h"),
        ("https://u@h\nhttps://v:w@h", "https://***@h\nhttps://***@h"),
    ],
)
def test_redact_hides_every_userinfo(text: str, expected: str) -> None:
    assert redact(text) == expected


# -- whole loads: the reproductions from issue 16 ------------------------------------------------
def _bundles(
    tmp_path: Path, text: Callable[[int], str], name: str = "c.md"
) -> Callable[[int], Path]:
    made: dict[int, Path] = {}

    def make(n: int) -> Path:
        if n not in made:
            made[n] = write(tmp_path / f"n{n}", {name: text(n)})
        return made[n]

    return make


COMPUTATION = "---\ntype: Metric\nruntime: bigquery\n---\n# Computation\n\n"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(lambda n: "~" * n + "`\n", id="tildes-then-a-backtick"),
        pytest.param(lambda n: "```" + "a" * n + "`\n", id="backtick-fence-then-letters"),
        pytest.param(lambda n: "```\n" + "`" * n + "x\n", id="backtick-run-in-the-fence"),
        pytest.param(lambda n: "~~~" + " " * n + "`\n", id="blanks-after-the-fence"),
    ],
)
def test_a_computation_fence_loads_in_linear_time(tmp_path: Path, body: Shape) -> None:
    make = _bundles(tmp_path, lambda n: COMPUTATION + body(n))
    assert growth_4n(Bundle.load, make, start=64, floor=0.003) < LINEAR_BOUND


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(lambda n: concept(body="[a](" + " " * n + "x"), id="link-then-blanks"),
        pytest.param(lambda n: concept(body="\n[a]: " + " " * n + "x"), id="refdef-blanks"),
        pytest.param(lambda n: "---\ntype: A\nx: [" + " " * n + "a\n---\n", id="flow-blanks"),
        pytest.param(lambda n: concept(body="```\n" + "~" * n + "`\n"), id="fence-in-body"),
    ],
)
def test_other_hostile_bodies_load_in_linear_time(tmp_path: Path, text: Shape) -> None:
    make = _bundles(tmp_path, text)
    assert growth_4n(Bundle.load, make, start=64, floor=0.003) < LINEAR_BOUND


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(lambda n: "# a" + " " * n + "x\n", id="heading-blanks"),
        pytest.param(lambda n: "* [a](b)" + " " * n + "x\n", id="entry-blanks"),
        pytest.param(lambda n: "* [" + "\\a" * (n // 2) + "\n", id="entry-escapes"),
    ],
)
def test_hostile_index_files_load_in_linear_time(tmp_path: Path, text: Shape) -> None:
    make = _bundles(tmp_path, text, "index.md")
    assert growth_4n(Bundle.load, make, start=64, floor=0.003) < LINEAR_BOUND
