"""The extraction's shortcuts answer exactly what their plain definitions answer."""

import codecs
import hashlib

import pytest
from selectolax.lexbor import LexborHTMLParser
from w3lib.encoding import html_to_unicode

from siteaudit.adapters.html.extract import extract_html_facts, facts_from_tree, sketch_of
from siteaudit.adapters.url import ReferenceResolver, normalise
from siteaudit.domain.judgement import SHINGLE_WORDS, SKETCH_BINS, has_not_found_phrase

ORIGIN = "https://retro-clock.example"
PAGE = "https://retro-clock.example/shop/clocks/alarm.html"

REFERENCES = [
    "wall.html",
    "wall.html#dials",
    "wall.html #dials",  # the space before the fragment is part of the path
    "wall.html#",
    "../about/",
    "./parts/../gears.html?size=2&utm_source=x#top",
    "/contact#form",
    "/ #x",
    "//cdn.retro-clock.example/app.js#v1",
    "https://Other.EXAMPLE:443/a/../b#c",
    "http://other.example/x #y",
    "?page=2#list",
    "#top",
    "",
    "mailto:shop@retro-clock.example",
    "tel:+1",
    "c:/windows",
    "wa\tll.html#x",
    "wall.html#\tx",
    "ünïcode.html#x",
    "%2e%2e/up.html",
    "\\\\evil.example\\x",
]


@pytest.mark.parametrize("reference", REFERENCES)
def test_a_resolver_answers_what_normalise_answers(reference: str) -> None:
    resolver = ReferenceResolver(PAGE)
    assert resolver(reference) == normalise(reference, PAGE)
    assert resolver(reference) == normalise(reference, PAGE)  # the remembered answer


@pytest.mark.parametrize(
    "base",
    [
        "https://retro-clock.example/shop/clocks/cuckoo.html?colour=red#top",
        "https://Retro-Clock.EXAMPLE:443/shop/clocks/",
        "https://retro-clock.example/shop/clocks",
        "https://user:pw@retro-clock.example/shop/clocks/x.html",
        "http://127.0.0.1:8080/a/b/c",
        "https://retro-clock.example",
    ],
)
def test_resolvers_of_pages_in_one_directory_share_answers_without_mixing_directories(base: str) -> None:
    ReferenceResolver(PAGE)  # fills the shared answers of the /shop/clocks/ directory first
    for reference in [*REFERENCES, "x.html", "../y.html"]:
        ReferenceResolver(PAGE)(reference)
        assert ReferenceResolver(base)(reference) == normalise(reference, base), reference


def test_a_fragment_is_cut_only_where_that_cannot_change_the_url() -> None:
    resolver = ReferenceResolver(PAGE)
    assert resolver("wall.html#a") == resolver("wall.html#b") == f"{ORIGIN}/shop/clocks/wall.html"
    assert resolver("wall.html #a") == f"{ORIGIN}/shop/clocks/wall.html%20"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the page cannot be found", True),
        ("cannot found", False),
        ("the knot found its way", False),
        ("it is not   found", True),
        ("could not be found", True),
        ("nothing was found", True),
        ("isn’t be found", True),
        ("404 page", True),
        ("1404 page", False),
        ("error 404", True),
        ("error 4040", False),
        ("it doesn’t exist", True),
        ("it does not existence", False),
        ("no longer exists", True),
        ("the url you are looking for", True),
        ("the page you're looking for", True),
        ("the page you’re looking for", True),
        ("the content you were looking for", True),
        ("the page you 're looking for", False),
        ("the url you are looking\tfor", False),  # the literal "looking for" must occur
    ],
)
def test_not_found_patterns_keep_their_boundaries(text: str, expected: bool) -> None:
    assert has_not_found_phrase(text) is expected


def reference_sketch(text: str) -> tuple[int, ...]:
    """The sketch computed one shingle at a time, as the docstring of `sketch_of` defines it."""
    mask = 2**64 - 1
    poly = 0x100000001B3
    words = text.split(" ")
    span = min(SHINGLE_WORDS, len(words))
    lowest: dict[int, int] = {}
    for start in range(len(words) - span + 1):
        value = 0
        for power, byte in enumerate(" ".join(words[start : start + span]).encode()):
            value = (value + (byte + 1) * pow(poly, power, 2**64)) & mask
        value ^= value >> 30
        value = (value * 0xBF58476D1CE4E5B9) & mask
        value ^= value >> 27
        value = (value * 0x94D049BB133111EB) & mask
        value ^= value >> 31
        index = value >> 57
        lowest[index] = min(lowest.get(index, mask), value)
    sketch = []
    for index in range(SKETCH_BINS):
        offset = next(step for step in range(SKETCH_BINS) if (index + step) % SKETCH_BINS in lowest)
        donor = lowest[(index + offset) % SKETCH_BINS]
        sketch.append(((donor >> 25) & 0xFFFFFFFF) + offset * (1 << 32))
    return tuple(sketch)


@pytest.mark.parametrize(
    "text",
    [
        "a",
        "a b c",
        "the quick brown fox jumps over the lazy dog",
        "café crème brûlée à la carte for two please",
        "double  space and trailing ",
        " ".join(f"w{i * 7919 % 1009}" for i in range(400)),
    ],
)
def test_sketch_of_matches_its_one_shingle_at_a_time_definition(text: str) -> None:
    assert sketch_of(text) == reference_sketch(text)


DOCUMENTS = [
    "<p>plain</p>",
    "<head><title>t</title><style>h{}</style></head><body><p>one <script>x()</script>two</p></body>",
    "<body><noscript>ns <script>s</script> in</noscript><template><p>tpl</p></template><p>kept</p></body>",
    "<body><svg><title>tip</title><script>s</script><style>v</style><text>drawn</text></svg></body>",
    "<p>before</p><style>x</style><frameset><frame src=a></frameset>",
    "<!--c--><html><!--d--><head></head><body><p>a<!--e-->b</p></body></html><!--f-->",
    "<table><td>cell<style>x</style></td></table><p>after<?pi?></p>",
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_visible_text_and_element_count_match_whole_document_passes(document: str) -> None:
    reference = LexborHTMLParser(document)
    elements = len(reference.root.css("*")) if reference.root is not None else 0
    reference.strip_tags(["script", "style", "noscript", "template", "title"])
    body = reference.body
    words = (body.text(separator=" ") if body is not None else "").split()
    f = extract_html_facts(document.encode(), url=PAGE, content_type_header="text/html", origin=ORIGIN)
    assert f.dom_nodes == elements
    assert f.word_count == len(words)
    assert f.text_chars == len(" ".join(words))


@pytest.mark.parametrize(
    "text",
    [
        "Plain ASCII Text",
        "caf\u00e9 \u00b6 \u2019quoted\u2019 TEXT",  # non-ASCII characters without case
        "P\u00e1gina N\u00c3O ENCONTRADA",  # upper-case non-ASCII: "não encontrad" is a not-found phrase
        "\u03a3\u039f\u03a6\u0399\u0391\u03a3 \u03a3",  # capital sigmas, final and not
        "\u0130stanbul STRASSE \u1e9e \u01c5",  # lower cases of another length, titlecase letters
    ],
)
def test_the_lower_cased_text_is_str_lower_of_the_visible_text(text: str) -> None:
    f = extract_html_facts(
        f"<p>{text}</p>".encode(), url=PAGE, content_type_header="text/html", origin=ORIGIN
    )
    lowered = text.lower()
    assert f.fingerprint == hashlib.blake2b(lowered.encode(), digest_size=16).hexdigest()
    assert f.sketch == sketch_of(lowered)
    assert f.not_found_phrase == has_not_found_phrase(lowered)


@pytest.mark.parametrize(
    "body",
    [
        "<p>caf\u00e9 \u00b6</p>".encode(),
        codecs.BOM_UTF8 + "<p>caf\u00e9</p>".encode(),
        b"<p>broken \xff\xfe bytes</p>",
        "<p>a real \ufffd replacement</p>".encode(),
        '<meta charset="windows-1251"><p>\u041f\u0440\u0438\u0432\u0435\u0442</p>'.encode("windows-1251"),
        "<p itemscope>\u00e9</p>".encode("utf-16"),
    ],
)
def test_parsing_the_body_bytes_directly_gives_the_facts_of_the_decoded_text(body: bytes) -> None:
    _encoding, text = html_to_unicode(None, body)
    expected = facts_from_tree(LexborHTMLParser(text), url=PAGE, origin=ORIGIN, source=text)
    assert extract_html_facts(body, url=PAGE, content_type_header=None, origin=ORIGIN) == expected
