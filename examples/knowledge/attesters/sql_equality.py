"""Attester for Spokeway's BigQuery Attested Computations.

Given the sanctioned SQL of an Attested Computation and the receipt returned
by the run-on-bigquery executor, decide whether the run is attested:

1. Provenance: the SQL the job actually executed, canonicalized, must equal
   the sanctioned SQL canonicalized the same way. Parameters must stay as
   @name bind variables; literal substitution is a failure.
2. Fidelity: the value the agent wants to display must equal the value in
   the receipt's result.

Deterministic, standard library only, no network and no model calls.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r"""
    (?P<comment>--[^\n]*|/\*.*?\*/)      # comments are dropped
  | (?P<string>'(?:[^'\\]|\\.)*')        # string literals kept verbatim
  | (?P<ident>`[^`]*`)                   # quoted identifiers kept verbatim
  | (?P<param>@[A-Za-z_][A-Za-z0-9_]*)   # bind parameters
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)     # keywords and bare identifiers
  | (?P<number>\d+(?:\.\d+)?)
  | (?P<op><>|!=|<=|>=|\|\||[^\sA-Za-z0-9_])
  | (?P<space>\s+)
    """,
    re.VERBOSE | re.DOTALL,
)


def canonicalize(sql: str) -> list[str]:
    """Return the SQL as a list of tokens with comments, whitespace, letter
    case of bare words and a trailing semicolon normalized away."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup
        text = match.group()
        if kind in ("comment", "space"):
            continue
        if kind in ("word", "param"):
            text = text.lower()
        tokens.append(text)
    while tokens and tokens[-1] == ";":
        tokens.pop()
    return tokens


def declared_params(sql: str) -> set[str]:
    return {t[1:] for t in canonicalize(sql) if t.startswith("@")}


def attest(sanctioned_sql: str, receipt: dict, displayed_value: object) -> dict:
    """Return {"verdict": "ok" | "fail", "reasons": [...], "job_id": ...}."""
    reasons: list[str] = []
    for field in ("job_id", "executed_sql", "result"):
        if field not in receipt:
            reasons.append(f"receipt is missing {field!r}")
    if reasons:
        return {"verdict": "fail", "reasons": reasons, "job_id": receipt.get("job_id")}

    executed = receipt["executed_sql"]
    if canonicalize(executed) != canonicalize(sanctioned_sql):
        reasons.append("executed SQL differs from the sanctioned computation")
    if declared_params(executed) != declared_params(sanctioned_sql):
        reasons.append("bind parameters were added, removed or substituted")

    result = receipt["result"]
    value = result[0] if isinstance(result, (list, tuple)) and result else result
    if value is None:
        reasons.append("the job returned no value")
    elif str(value) != str(displayed_value):
        reasons.append("displayed value does not match the receipt")

    verdict = "fail" if reasons else "ok"
    return {"verdict": verdict, "reasons": reasons, "job_id": receipt["job_id"]}
