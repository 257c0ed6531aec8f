"""A SQL tokenizer for comparing statements, not for running them.

The scanner walks the text once, character by character (no regular expression, so no
backtracking): whitespace and comments are dropped, and each token gets a *key* that
is equal for two spellings of the same token (keyword case, parameter syntax) and
different for anything else. Two statements are the same computation when their key
sequences are equal; that is the whole of "canonicalisation".

It errs on the side of a mismatch. Where engines disagree on what a piece of text means
(a block comment inside a block comment, an unterminated string), the text is refused
with :class:`SqlSyntaxError` rather than read one way: a check that reads a comment
where the engine reads code could be fooled, a refused receipt cannot.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "DIALECTS",
    "Dialect",
    "SqlSyntaxError",
    "Token",
    "canonical_text",
    "dialect_for",
    "strip_terminators",
    "tokenize",
]

_SPACE = frozenset(" \t\n\r\f\v")
_DIGITS = frozenset("0123456789")
# Longest first: the scanner takes the longest operator that matches (maximal munch).
_OPERATORS = (
    "->>", "!~*", "<=>",
    "<>", "!=", "<=", ">=", "==", "||", "::", "->", "=>", "**", "<<", ">>", "!~", "~*",
    "@>", "<@", "&&",
)  # fmt: skip


class SqlSyntaxError(ValueError):
    """Text the tokenizer will not read one way: an unterminated string or comment, a
    nested block comment. ``offset`` is where the problem starts."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one family of engines writes strings, identifiers and case.

    ``fold_case``: unquoted identifiers are case-insensitive (PostgreSQL, DuckDB), so every
    bare word compares lower-cased; otherwise (BigQuery: table names are case-sensitive)
    only SQL keywords and built-in functions do.
    """

    name: str
    backslash_escapes: bool  # '\'' escapes a quote inside '...' (BigQuery, Snowflake)
    double_quote_strings: bool  # "..." is a string (BigQuery), not an identifier
    triple_quotes: bool  # '''...''' and """...""" (BigQuery)
    backtick_identifiers: bool  # `project.dataset.table` (BigQuery)
    dollar_quotes: bool  # $$...$$ and $tag$...$tag$ (PostgreSQL, DuckDB)
    fold_case: bool
    # How a named parameter may be written: only prefixes that mean nothing else here
    # (``@x`` is the absolute value of column x in PostgreSQL and DuckDB; BigQuery has no
    # ``$``, so ``$year`` there can only be the same parameter as ``@year``).
    param_prefixes: str
    # What starts a comment to the end of the line besides ``--``: ``#`` in GoogleSQL,
    # ``//`` in Snowflake. Read as an operator, a receipt could move a newline so that the
    # engine reads a sanctioned filter as a comment and okfx still matched it (AC QA).
    line_comments: tuple[str, ...] = ("--",)


STANDARD = Dialect("standard", False, False, False, False, True, True, "$")
BIGQUERY = Dialect("bigquery", True, True, True, True, False, False, "@$", ("--", "#"))
# Snowflake reads a backslash in '...' as an escape ('it\'s'): a value holding \' must be
# written so, or its expanded literal ends early (security QA: "\' OR 1=1 --").
SNOWFLAKE = Dialect("snowflake", True, False, False, False, True, True, "$", ("--", "//"))
DIALECTS = {"standard": STANDARD, "bigquery": BIGQUERY, "snowflake": SNOWFLAKE}

#: The runtimes whose computations are SQL, and the dialect each is read in.
_RUNTIMES = {
    "bigquery": BIGQUERY,
    "duckdb": STANDARD,
    "postgres": STANDARD,
    "postgresql": STANDARD,
    "athena": STANDARD,  # Trino's SQL
    "presto": STANDARD,
    "redshift": STANDARD,
    "snowflake": SNOWFLAKE,
    "sqlite": STANDARD,
    "trino": STANDARD,
}


#: Engines fold unquoted identifiers by ASCII letters only (PostgreSQL's
#: downcase_identifier; DuckDB finds no table ``biKe_days``, with a Kelvin sign, for
#: ``bike_days``): ``casefold`` made ``tripſ`` (a long s) the sanctioned ``trips`` (AC QA).
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def dialect_for(runtime: str | None) -> Dialect | None:
    """The SQL dialect of ``runtime`` (case-insensitive), or None when it is not SQL okfx reads."""
    return _RUNTIMES.get((runtime or "").strip().casefold())


class Token(NamedTuple):
    """One token: ``kind`` (word, quoted, string, number, param, op), the text as written,
    its comparison ``key`` and where it starts in the text."""

    kind: str
    text: str
    key: str
    start: int


# Keywords and built-in functions: compared without case in every dialect. Other bare
# words keep their case in BigQuery, where table and dataset names are case-sensitive.
KEYWORDS = frozenset(
    """
    all and any array as asc at avg between bigint boolean both by case cast coalesce
    collate count countif cross cube current_date current_datetime current_time
    current_timestamp date date_add date_diff date_sub date_trunc datetime datetime_diff
    day dayofweek decimal default desc distinct double else end except exists extract
    false fetch filter first float float64 following for format from full group grouping
    having hour if ifnull iif ilike in inner int int64 integer intersect interval into is
    join last lateral left like limit max min minute month natural not null nullif nulls
    numeric offset on or order outer over partition preceding qualify quarter range
    recursive replace respect right rollup round row rows safe_cast safe_divide second
    select set some string struct sum table then time timestamp timestamp_diff
    timestamp_trunc to true union unbounded unnest using values varchar week when where
    window with within year
    """.split()
)


def _word_end(text: str, i: int) -> int:
    n = len(text)
    while i < n and (text[i].isalnum() or text[i] in "_$"):
        i += 1
    return i


def _quoted_end(text: str, i: int, quote: str, backslash: bool) -> int:
    """Index just past the closing ``quote`` of a literal opened at ``i``."""
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if backslash and c == "\\":
            j += 2
            continue
        if c == quote:
            if not backslash and j + 1 < n and text[j + 1] == quote:
                j += 2  # a doubled quote stands for one
                continue
            return j + 1
        j += 1
    raise SqlSyntaxError(f"unterminated {quote}...{quote} starting here", i)


def _triple_end(text: str, i: int, quote: str) -> int:
    closing = quote * 3
    j = i + 3
    n = len(text)
    while j < n:
        if text[j] == "\\":
            j += 2
            continue
        if text.startswith(closing, j):
            return j + 3
        j += 1
    raise SqlSyntaxError(f"unterminated {closing}...{closing} starting here", i)


def _dollar_tag(text: str, i: int) -> str | None:
    """The ``$tag$`` opening a dollar-quoted string at ``i``, or None."""
    j = i + 1
    if j < len(text) and text[j] == "$":
        return "$$"
    if j < len(text) and (text[j].isalpha() or text[j] == "_"):
        k = j
        while k < len(text) and (text[k].isalnum() or text[k] == "_"):
            k += 1
        if k < len(text) and text[k] == "$":
            return text[i : k + 1]
    return None


def _block_comment_end(text: str, i: int) -> int:
    end = text.find("*/", i + 2)
    if end < 0:
        raise SqlSyntaxError("unterminated /* comment starting here", i)
    inner = text.find("/*", i + 2, end)
    if inner >= 0:
        # PostgreSQL and DuckDB nest block comments, BigQuery does not: refuse both readings.
        raise SqlSyntaxError("a /* comment inside a /* comment: engines disagree on it", inner)
    return end + 2


def _number_end(text: str, i: int) -> int:
    n = len(text)
    if text.startswith(("0x", "0X"), i):
        j = i + 2
        while j < n and text[j] in "0123456789abcdefABCDEF":
            j += 1
        return j
    j = i
    while j < n and text[j] in _DIGITS:
        j += 1
    if j < n and text[j] == ".":
        j += 1
        while j < n and text[j] in _DIGITS:
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and text[k] in _DIGITS:
            while k < n and text[k] in _DIGITS:
                k += 1
            j = k
    return j


def _string_prefix(word: str, dialect: Dialect) -> bool:
    """True when ``word`` written right before a quote makes it a prefixed string."""
    lower = word.casefold()
    if dialect.name == "bigquery":
        return lower in ("r", "b", "rb", "br")
    return lower in ("e", "n", "x", "b")


def _string(text: str, i: int, prefix: str, dialect: Dialect) -> tuple[int, str]:
    """End and key of the string literal whose quote is at ``i`` (``prefix`` before it)."""
    quote = text[i]
    lower = prefix.casefold()
    raw = "r" in lower
    if dialect.triple_quotes and text.startswith(quote * 3, i):
        end = _triple_end(text, i, quote)
        body = text[i + 3 : end - 3]
    else:
        backslash = (dialect.backslash_escapes and not raw) or lower == "e"
        end = _quoted_end(text, i, quote, backslash)
        body = text[i + 1 : end - 1]
        if not backslash:
            body = body.replace(quote * 2, quote)
    # The body as written (escapes undecoded) keeps two different literals different;
    # the prefix letters that change the value (raw, bytes, escapes) are part of the key.
    return end, f"{''.join(sorted(lower))}'{body}"


def _declared_hole(text: str, i: int, names: frozenset[str]) -> bool:
    """Is the ``@`` or ``:`` at ``i`` the start of ``@name`` / ``:name`` for a declared
    ``name``, not after a word, a number, another ``@`` or a ``:`` (``x::date`` casts)?"""
    before = text[i - 1] if i else " "
    if before.isalnum() or before in "_@$:":
        return False
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if not (nxt.isalpha() or nxt == "_"):
        return False
    return text[i + 1 : _word_end(text, i + 1)].casefold() in names


def tokenize(text: str, dialect: Dialect, names: frozenset[str] = frozenset()) -> list[Token]:
    """The tokens of ``text`` in ``dialect``, comments and whitespace dropped.

    ``names`` are the computation's declared parameters, case-folded: ``@name`` and
    ``:name`` are one of them in any dialect when ``name`` is declared and the ``@`` or
    ``:`` does not follow a word or a ``:`` (Athena and Redshift computations are written
    with ``@``, where it reads as no placeholder, and in PostgreSQL it is also the absolute
    value, which the declared contract outranks; ``:name`` is the named binding of the
    pg8000, SQLAlchemy, JDBC-style and Oracle drivers, as okf4net writes it). Raises
    :class:`SqlSyntaxError` for text the scanner refuses to guess about.
    """
    tokens: list[Token] = []
    append = tokens.append
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c in _SPACE:
            i += 1
        elif (c == "-" and nxt == "-") or (
            c in "#/" and (c if c == "#" else c + nxt) in dialect.line_comments
        ):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif c == "/" and nxt == "*":
            i = _block_comment_end(text, i)
        elif c == "'" or (c == '"' and dialect.double_quote_strings):
            end, key = _string(text, i, "", dialect)
            append(Token("string", text[i:end], key, i))
            i = end
        elif c == '"' or (c == "`" and dialect.backtick_identifiers):
            end = _quoted_end(text, i, c, c == "`")
            body = text[i + 1 : end - 1]
            append(Token("quoted", text[i:end], body if c == "`" else body.replace('""', '"'), i))
            i = end
        elif c == "$" and dialect.dollar_quotes and _dollar_tag(text, i) is not None:
            tag = _dollar_tag(text, i) or ""
            end = text.find(tag, i + len(tag))
            if end < 0:
                raise SqlSyntaxError(f"unterminated {tag}...{tag} string starting here", i)
            body = text[i + len(tag) : end]
            append(Token("string", text[i : end + len(tag)], f"'{body}", i))
            i = end + len(tag)
        elif c in dialect.param_prefixes and (nxt.isalpha() or nxt == "_"):
            end = _word_end(text, i + 1)
            # One named parameter, in any case, whichever prefix the dialect allows.
            append(Token("param", text[i:end], text[i + 1 : end].casefold(), i))
            i = end
        elif c in "@:" and names and _declared_hole(text, i, names):
            end = _word_end(text, i + 1)
            append(Token("param", text[i:end], text[i + 1 : end].casefold(), i))
            i = end
        elif c == "@" and nxt == "@":
            end = _word_end(text, i + 2)
            append(Token("word", text[i:end], text[i:end].translate(_ASCII_LOWER), i))
            i = end
        elif c in _DIGITS or (c == "." and nxt in _DIGITS and nxt != ""):
            end = _number_end(text, i)
            append(Token("number", text[i:end], text[i:end].casefold(), i))
            i = end
        elif c.isalpha() or c == "_":
            end = _word_end(text, i)
            word = text[i:end]
            if end < n and text[end] in "'\"" and _string_prefix(word, dialect):
                if text[end] == "'" or dialect.double_quote_strings:
                    close, key = _string(text, end, word, dialect)
                    append(Token("string", text[i:close], key, i))
                    i = close
                    continue
            folded = word.translate(_ASCII_LOWER)
            key = folded if dialect.fold_case or folded in KEYWORDS else word
            append(Token("word", word, key, i))
            i = end
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), c)
            append(Token("op", op, op, i))
            i += len(op)
    return tokens


def strip_terminators(tokens: list[Token]) -> list[Token]:
    """``tokens`` without the ``;`` that end the statement (a formatting choice)."""
    end = len(tokens)
    while end and tokens[end - 1].kind == "op" and tokens[end - 1].text == ";":
        end -= 1
    return tokens[:end]


def canonical_text(tokens: list[Token]) -> str:
    """The tokens as one line, keywords lower-case, parameters as ``@name``: for people."""
    parts: list[str] = []
    for token in tokens:
        if token.kind == "param":
            parts.append("@" + token.key)
        elif token.kind == "word" and token.key != token.text:
            parts.append(token.key)
        else:
            parts.append(token.text)
    return " ".join(parts)
