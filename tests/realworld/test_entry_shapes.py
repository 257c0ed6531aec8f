"""List entries of the trust and provenance families written in the wrong shape, as another
OKF validator's fixtures write them (serradura/okf-gem, ``v0_2-malformed``): each warning says
what the entry is and where, and what plainly names a source is kept."""

from __future__ import annotations

from conftest import MakeBundle
from okfx import Bundle, Toolbox
from okfx.bundle.problems import problem_dict

DOC = """---
type: Note
verified:
  - just a string
  - at: 2026-06-26T02:00:00Z
  - by: human:maintainer
    at: whenever
  - by: owner
sources:
  - https://example.com/bare
  - title: No resource at all
  - 42
  - resource: https://example.com/kept
---
body
"""


def test_each_bad_entry_says_what_it_is_on_its_line(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"n.md": DOC}))
    lines = DOC.split("\n")
    said = [
        (lines[p["line"] - 1].strip(), p["message"].rsplit(" (line", 1)[0])
        for p in sorted(map(problem_dict, bundle.warnings), key=lambda p: p["line"])
    ]
    assert said == [
        ("- just a string", "verified[0] is a string, not a mapping {by, at}; entry ignored"),
        (
            "- at: 2026-06-26T02:00:00Z",
            "verified[1] has no 'by' (spec §5.2: each event has by and at); entry ignored",
        ),
        ("at: whenever", "verified[2].at 'whenever' is not a valid ISO 8601 date; ignored"),
        (
            "- by: owner",
            "verified[3].by 'owner' is not an actor (spec §7: human:<id>, process:<id> or "
            "producer/version, e.g. human:owner); entry ignored",
        ),
        (
            "- https://example.com/bare",
            "sources[0] is a string, not a mapping: read as "
            "{resource: 'https://example.com/bare'}; write it that way (spec §5.1)",
        ),
        ("- title: No resource at all", "sources[1] has no resource; entry ignored"),
        ("- 42", "sources[2] is a number, not a mapping with a resource; entry ignored"),
    ]


def test_a_bare_source_string_is_read_as_its_resource(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"n.md": DOC}))
    concept = bundle.concept("n")
    assert [s.resource for s in concept.sources] == [
        "https://example.com/bare",
        "https://example.com/kept",
    ]
    # the agent reads both; the one entry with a valid verifier makes it human-reviewed
    payload = Toolbox(bundle).read_concept(path="/n.md")
    assert [s["resource"] for s in payload["sources"]] == [s.resource for s in concept.sources]
    assert payload["trust_tier"] == "human-reviewed"


CONTRACT = """---
type: Attested Computation
runtime: bigquery
parameters:
  - name: year
    type: integer
  - just a string
executor: references/skills/run-on-bq.md
attester:
  language: python
---
# Computation

```sql
SELECT 1
```
"""


def test_a_contract_part_in_the_wrong_shape_is_read_or_reported(make_bundle: MakeBundle) -> None:
    """§10.2 shapes `executor` and `attester` as mappings with a `resource`. A path
    written where the mapping belongs was dropped without a word; an attester with no
    resource, which names no check, passed silently."""
    skill = "---\ntype: Skill\n---\nrun it\n"
    root = make_bundle({"c.md": CONTRACT, "references/skills/run-on-bq.md": skill})
    bundle = Bundle.load(root)
    lines = CONTRACT.split("\n")
    said = {
        lines[p["line"] - 1]: p["message"].rsplit(" (line", 1)[0]
        for p in map(problem_dict, bundle.warnings)
    }
    assert said == {
        "  - just a string": "parameters[1] is a string, not a mapping {name, type, required}; "
        "ignored",
        "executor: references/skills/run-on-bq.md": "executor is a string, not a mapping: read "
        "as {resource: 'references/skills/run-on-bq.md'}; write it that way (spec §10.2)",
        "attester:": "attester has no resource: it names no check of a run (spec §10.2)",
    }
    computation = bundle.concept("c").computation
    assert computation is not None
    assert computation.executor_resource == "references/skills/run-on-bq.md"
    assert [p.name for p in computation.parameters] == ["year"]
    # the path is followed like any executor.resource: an edge to the run instructions
    edges = Toolbox(bundle).get_neighbors(path="/c.md")["outbound"]
    assert "/references/skills/run-on-bq.md" in [e["path"] for e in edges]


def test_a_source_written_with_url_for_resource_is_read_and_reported(
    make_bundle: MakeBundle,
) -> None:
    """m3e-okf writes every source as ``{url, retrieved, note}``: the URL is what the
    concept derives from, plain to read, so it is the resource (not a lost source), the
    warning names the key to rename, and the other keys stay extensions under the path;
    a ``resource`` beside a ``url`` wins, and the ``url`` stays an extension."""
    doc = (
        "---\ntype: Note\nsources:\n"
        "  - url: https://example.com/a\n    retrieved: 2026-07-11\n    note: why\n"
        "  - resource: https://example.com/b\n    url: https://example.com/b.html\n"
        "  - note: nothing to follow\n"
        "---\nSee [^1].\n\n[^1]: a\n"
    )
    bundle = Bundle.load(make_bundle({"n.md": doc}))
    assert [s.resource for s in bundle.concept("n").sources] == [
        "https://example.com/a",
        "https://example.com/b",
    ]
    said = [(p["line"], p["message"]) for p in map(problem_dict, bundle.warnings)]
    assert said == [
        (
            4,
            "sources[0] has no resource, but url: 'https://example.com/a', read as its "
            "resource; rename url to resource (spec §5.1) (line 4)",
        ),
        (9, "sources[2] has no resource; entry ignored (line 9)"),
    ]
    payload = Toolbox(bundle).read_concept(path="/n.md")
    assert [s["resource"] for s in payload["sources"]] == [
        "https://example.com/a",
        "https://example.com/b",
    ]
    assert payload["extensions"] == {
        "sources[0].retrieved": "2026-07-11",
        "sources[0].note": "why",
        "sources[1].url": "https://example.com/b.html",
        "sources[2].note": "nothing to follow",
    }
