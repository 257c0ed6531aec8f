"""Atheris target: ``okfx.bundle.frontmatter.parse`` may raise nothing but ``FrontmatterError``.

Bytes go through the loader's own decoding (``okfx.bundle.walk.decode_text``; undecodable input
is decoded with replacement instead, so the fuzzer still reaches the YAML). When the first
byte is odd the rest is wrapped in ``---`` fences, so most inputs reach the YAML parser.
A successful parse must give a mapping whose JSON form (``okfx.tools.payloads.jsonable``) is
strict JSON, since tools return it. Run: ``python fuzz/fuzz_frontmatter.py -runs=20000``.
"""

from __future__ import annotations

import json
import sys

import atheris

with atheris.instrument_imports(include=["okfx", "yaml"]):
    from okfx.bundle.frontmatter import FrontmatterError, parse
    from okfx.bundle.walk import decode_text
    from okfx.limits import Limits
    from okfx.tools.payloads import jsonable

LIMITS = Limits()
CODES = {"malformed_yaml", "frontmatter_not_mapping", "unterminated_frontmatter", "no_frontmatter"}


def to_text(data: bytes) -> str:
    try:
        return decode_text(data)
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        return text.replace("\r\n", "\n").replace("\r", "\n")


def test_one_input(data: bytes) -> None:
    if not data:
        return
    text = to_text(data[1:])
    if data[0] & 1:
        text = "---\n" + text + "\n---\nbody\n"
    try:
        parsed = parse(text, LIMITS)
    except FrontmatterError as exc:
        if exc.code not in CODES:
            raise AssertionError(f"unknown FrontmatterError code {exc.code!r}") from None
        return
    if not isinstance(parsed.data, dict):
        raise AssertionError(f"parse returned {type(parsed.data).__name__}, not a dict")
    json.dumps(jsonable(parsed.data), allow_nan=False)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
