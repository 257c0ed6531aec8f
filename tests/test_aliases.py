"""A concept's other names (the producer key ``aliases``): read in the shapes producers
write, searched as part of the title, and read by the embedding model with the title."""

from __future__ import annotations

from conftest import concept
from conftest_search import FakeConcept
from okfx import Bundle
from okfx.bundle.fields import MAX_ALIASES
from okfx.search import vectors


def _aliases(make_bundle, value: str) -> tuple[str, ...]:
    root = make_bundle({"a.md": concept("Term", "Body.\n", title="Virtual host", aliases=value)})
    return Bundle.load(root, state_cache=False).concept("/a.md").aliases


def test_aliases_are_read_from_a_list_or_a_separated_string(make_bundle) -> None:
    assert _aliases(make_bundle, "[VirtualHost, vhost, 2024]") == ("VirtualHost", "vhost", "2024")
    assert _aliases(make_bundle, '"vhost; name-based host, port host"') == (
        "vhost",
        "name-based host, port host",
    )
    assert _aliases(make_bundle, "vhost, site") == ("vhost", "site")
    assert _aliases(make_bundle, "vhost") == ("vhost",)


def test_aliases_skip_empty_repeated_and_non_scalar_entries_without_a_warning(
    make_bundle,
) -> None:
    assert _aliases(make_bundle, "[vhost, VHOST, '', {a: b}, [x], true]") == ("vhost",)
    assert _aliases(make_bundle, "{a: b}") == ()
    assert _aliases(make_bundle, "[]") == ()
    many = "[" + ", ".join(f"n{i}" for i in range(MAX_ALIASES + 5)) + "]"
    assert len(_aliases(make_bundle, many)) == MAX_ALIASES
    root = make_bundle({"a.md": concept("Term", "Body.\n", aliases="{a: b}")})
    bundle = Bundle.load(root, state_cache=False)
    assert bundle.warnings == []
    # Not a field of the spec: the key stays in the frontmatter as written.
    assert bundle.concept("/a.md").frontmatter["aliases"] == {"a": "b"}


def test_a_query_in_an_alias_finds_the_concept_and_survives_the_state_cache(
    make_bundle,
) -> None:
    root = make_bundle(
        {
            "vhost.md": concept(
                "Term", "Serves several sites.\n", title="Virtual host", aliases="[vhost]"
            ),
            "other.md": concept("Term", "A vhost is mentioned once here.\n", title="Other"),
        }
    )
    for _ in range(2):  # cold, then read back from the state cache
        bundle = Bundle.load(root)
        assert bundle.concept("/vhost.md").aliases == ("vhost",)
        hits = bundle.search("vhost").hits
        assert [hit.path for hit in hits] == ["/vhost.md", "/other.md"]
        assert "vhost" in hits[0].matched


def test_an_alias_that_repeats_the_title_counts_nothing_more(make_bundle) -> None:
    body = "Pods run containers.\n"
    plain = concept("Term", body, title="Pod")
    repeated = concept("Term", body, title="Pod", aliases="[Pods, pod]")
    scores = []
    for text in (plain, repeated):
        root = make_bundle({"pod.md": text, "other.md": concept("Term", "About nodes.\n")})
        scores.append(Bundle.load(root, state_cache=False).search("pods").hits[0].score)
    assert scores[0] == scores[1]


def test_the_model_reads_the_aliases_that_add_a_word_in_the_head_only() -> None:
    body = " ".join(f"w{i}" for i in range(1000))
    named = FakeConcept(
        "/vhost.md",
        title="Virtual host",
        aliases=("vhost", "virtual-host", "Virtual Hosts"),
        body=body,
    )
    texts = vectors.concept_texts(named)
    assert texts[0].startswith("Virtual host (vhost). Reference.")
    assert all(text.startswith("Virtual host. ") for text in texts[1:])
    plain = FakeConcept("/vhost.md", title="Virtual host", body=body)
    assert vectors.concept_texts(plain)[1:] == texts[1:]  # chunks keep their vectors
