"""Read the one YAML mistake authors make most: a plain value holding ``": "``.

``description: RAG: search, then paste`` is not valid YAML (a plain scalar may not hold
``": "``), so a strict parser rejects the whole frontmatter and the file is not a
concept. Real bundles are full of it: 17 of the 63 files of one published bundle. Every
such line means one thing, the text after the key, so :func:`quote_colon_values`
rewrites exactly those lines as double-quoted strings and nothing else. The loader
parses the result as strictly as any frontmatter and reports each line it rewrote
(``unquoted_colon``: other consumers will still reject the file, spec §11 rule 1).

Only a top-level ``key: value`` line is rewritten, and only when its value is a plain
scalar (it opens with no quote, bracket, brace, block indicator, anchor, alias, tag or
comment), holds ``": "`` or ends with ``":"``, and holds no ``" #"`` (a comment would
make the author's meaning ambiguous). Nothing is evaluated: the value becomes text.
"""

from __future__ import annotations

import json
import re

__all__ = ["COLON_PROBLEM", "quote_colon_values"]

#: What PyYAML says about such a line ("... here" in Python, "... in this context" from
#: libyaml): the error the rewrite is tried after.
COLON_PROBLEM = "mapping values are not allowed"

# A top-level key (no indent, no quote, no flow or block indicator) and its value.
# (Trailing blanks are stripped in code: a lazy value before "[ \t]*" backtracks on runs
# of blanks inside the value.)
_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_ .-]*?):[ \t]+(\S.*)")
_NOT_PLAIN = tuple("'\"[{|>&*!#%@`")


def quote_colon_values(yaml_text: str) -> tuple[str, list[int]] | None:
    """``yaml_text`` with each plain value that holds ``": "`` double-quoted, and the
    1-based frontmatter lines rewritten; None when no line needs it."""
    lines = yaml_text.split("\n")
    rewritten: list[int] = []
    for number, line in enumerate(lines):
        found = _LINE.fullmatch(line)
        if found is None:
            continue
        key, value = found.group(1), found.group(2).rstrip(" \t")
        if value.startswith(_NOT_PLAIN) or " #" in value:
            continue
        if ": " in value or value.endswith(":"):
            lines[number] = f"{key}: {json.dumps(value, ensure_ascii=False)}"
            rewritten.append(number + 1)
    if not rewritten:
        return None
    return "\n".join(lines), rewritten
