"""The fix prompt keeps its word: every template and URL it refers to is listed under the label it names,
the counts it states are those of what is listed, "sample URLs" always has samples, quoted values keep
their case, and it shows every fix compact before it leaves any out."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.issue import Severity
from siteaudit.domain.prompt import MAX_PROMPT_CHARS, FixItem, compose_fix_prompt

SITE = "https://retro-clock.example"
E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTICE

_NOT_FIT = re.compile(r"^(\d+) more fix\(es\) did not fit in this prompt", re.M)
_SECTION = re.compile(r"^## (\d+)\. .*\(`([a-z0-9_]+)`, (error|warning|notice)\)$", re.M)
_ENTRY_PAGES = re.compile(r"\((?:all )?(\d+)(?: of \d+)? pages?\)$")

# The claims a section's "Where" makes: (pattern, templates it names, listed under the label or not).
_CLAIMS = (
    (re.compile(r"^every page of template (D\d+) \((\d+) pages?\)$"), None, True),
    (
        re.compile(
            r"^every page of (\d+) templates listed under (D\d+) \((\d+) pages? in all\): "
            r"one change in the layout they share$"
        ),
        "m",
        True,
    ),
    (re.compile(r"^all (\d+) pages? of template (D\d+)$"), None, True),
    (re.compile(r"^(\d+) of the \d+ pages of template (D\d+)$"), None, True),
    (re.compile(r"^(\d+) pages? of template (D\d+)$"), None, True),
    (re.compile(r"^(\d+) pages? in (\d+) templates listed under (D\d+)$"), "m", True),
    (re.compile(r"^(\d+) pages? in (\d+) more templates, not listed here \(see the report\)$"), "m", False),
)


def prompt_for(items: list[FixItem]) -> str:
    return compose_fix_prompt(site_url=SITE, health_score=64, items=items, catalogue=CATALOGUE)


def parts(prompt: str) -> tuple[str, list[str]]:
    """The instructions (everything before the data block) and the data block's lines."""
    before, _, block = prompt.partition("\n## Data from the audited site\n")
    lines = block.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("```") and line.endswith("text"))
    end = next(i for i in range(len(lines) - 1, start, -1) if lines[i].startswith("```"))
    return before, lines[start + 1 : end]


def sections(instructions: str) -> dict[str, tuple[str, str]]:
    """Per label: the section's check code and its text."""
    found = list(_SECTION.finditer(instructions))
    out = {}
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(instructions)
        out[f"D{match.group(1)}"] = (match.group(2), instructions[match.start() : end])
    return out


def where_claims(text: str, label: str) -> tuple[int, int, int]:
    """(templates named as listed, their pages, pages said not listed) of one section's "Where"."""
    found = re.search(r"Where: (.*?)\.(?: Change:|\n)", text)
    assert found is not None, text
    templates = pages = unlisted = 0
    for claim in found.group(1).split("; also "):
        for pattern, counted, listed in _CLAIMS:
            match = pattern.match(claim)
            if match is None:
                continue
            numbers = [int(g) for g in match.groups() if g.isdigit()]
            labels = [g for g in match.groups() if g.startswith("D")]
            assert labels in ([label], []), (claim, label)
            if not listed:
                unlisted += numbers[0]
            elif counted == "m":
                # "M templates listed under Dn (P pages in all)" or "P pages in M templates listed"
                m, p = (numbers[0], numbers[1]) if claim.startswith("every") else (numbers[1], numbers[0])
                templates, pages = templates + m, pages + p
            else:
                templates, pages = templates + 1, pages + numbers[0]
            break
        else:
            raise AssertionError(f"a claim the test does not know: {claim!r}")
    return templates, pages, unlisted


def listed_templates(data: list[str], label: str) -> list[int]:
    """The pages of each template entry listed under `label` (one per line, or several on one line)."""
    entries: list[str] = []
    for line in data:
        if line.startswith(f"{label} template: "):
            entries.append(line.removeprefix(f"{label} template: "))
        elif line.startswith(f"{label} templates: "):
            entries += line.removeprefix(f"{label} templates: ").split("; ")
    pages = []
    for entry in entries:
        match = _ENTRY_PAGES.search(entry)
        assert match is not None, entry
        pages.append(int(match.group(1)))
    return pages


def keeps_its_word(items: list[FixItem], prompt: str, *, site: str = SITE) -> None:
    assert len(prompt) <= MAX_PROMPT_CHARS
    instructions, data = parts(prompt)
    shown = sections(instructions)
    by_code: dict[str, list[FixItem]] = {}
    for item in items:
        by_code.setdefault(item.check_code, []).append(item)
    # Every label the instructions name has lines in the data block.
    for label in set(re.findall(r"\bD\d+\b", instructions)):
        assert any(line.startswith(f"{label} ") for line in data), label
    for label, (code, text) in shown.items():
        # The counts stated are those of the templates listed under the label.
        templates, pages, unlisted = where_claims(text, label)
        entries = listed_templates(data, label)
        assert (templates, pages) == (len(entries), sum(entries)), (label, text, entries)
        assert pages + unlisted == sum(i.pages for i in by_code[code])
        # "sample URLs" only with samples, and those are the fix's own.
        # A sample URL on the site is listed as its path (the `site` line says where).
        urls = [line.removeprefix(f"{label} url: ") for line in data if line.startswith(f"{label} url: ")]
        urls = [site + url if url.startswith("/") else url for url in urls]
        if "sample URLs" in text:
            assert urls, (label, text)
        assert set(urls) <= {u for i in by_code[code] for u in i.sample_urls}
        # Quoted values keep their case: each is one of the fix's own, as written.
        own = (f"{label} template: ", f"{label} templates: ", f"{label} url: ")
        values = [
            line.split(": ", 1)[1]
            for line in data
            if line.startswith(f"{label} ") and not line.startswith(own)
        ]
        # The prompt quotes a value cleaned (`clean_text` in domain/prompt.py: whitespace runs made one
        # space), so a value is compared the same way.
        assert set(values) <= {" ".join(e.split()) for i in by_code[code] for e in i.examples}, values
    # Whatever is left out is counted.
    left = _NOT_FIT.search(instructions)
    assert len(shown) + (int(left.group(1)) if left else 0) == len(by_code)


_template = st.from_regex(r"/[a-z]{1,12}(/\[slug\])?", fullmatch=True)
_path = st.from_regex(r"/[a-z0-9-]{1,40}", fullmatch=True)
_value = st.from_regex(r"[A-Za-z][A-Za-z0-9 ]{0,60}[A-Za-z]", fullmatch=True)


@st.composite
def report_items(draw: st.DrawFn) -> list[FixItem]:
    codes = draw(st.lists(st.sampled_from(sorted(CATALOGUE)), min_size=1, max_size=30, unique=True))
    items = []
    for code in codes:
        templates = draw(st.lists(_template, min_size=1, max_size=7, unique=True))
        for template in templates:
            template_pages = draw(st.integers(0, 400))
            pages = draw(st.integers(1, max(1, template_pages or 400)))
            items.append(
                FixItem(
                    code,
                    CATALOGUE[code].severity,
                    template,
                    pages=pages,
                    template_pages=template_pages,
                    template_wide=draw(st.booleans()) and template_pages > 0 and pages == template_pages,
                    sample_urls=tuple(SITE + p for p in draw(st.lists(_path, max_size=4, unique=True))),
                    examples=tuple(draw(st.lists(_value, max_size=3, unique=True))),
                )
            )
    return items


@settings(max_examples=150, deadline=None)
@given(items=report_items())
def test_every_reference_is_listed_and_every_count_matches_what_is_listed(items: list[FixItem]) -> None:
    keeps_its_word(items, prompt_for(items))


def test_a_fix_over_several_templates_names_as_many_as_its_label_lists() -> None:
    """A fix in four templates said "4 pages in 4 templates listed under D1" and listed one there."""
    items = [
        FixItem("title_too_long", W, f"/part-{n}/[slug]", pages=1, template_pages=5,
                sample_urls=(f"{SITE}/part-{n}/a",), examples=(f"A Long Title {n}",))
        for n in range(4)
    ] + [
        FixItem(code, CATALOGUE[code].severity, "/x", pages=50 - n, template_pages=50,
                sample_urls=(f"{SITE}/x/{n}-{'y' * 60}",), examples=("z" * 100,))
        for n, code in enumerate(sorted(c for c in CATALOGUE if CATALOGUE[c].severity is E)[:12])
    ]  # fmt: skip
    prompt = prompt_for(items)
    keeps_its_word(items, prompt)
    instructions, data = parts(prompt)
    label = next(label for label, (code, _) in sections(instructions).items() if code == "title_too_long")
    assert f"4 pages in 4 templates listed under {label}" in instructions
    assert len(listed_templates(data, label)) == 4


def test_a_fix_without_sample_urls_is_never_verified_by_fetching_them() -> None:
    prompt = prompt_for([FixItem("title_missing", E, "/blog/[slug]", pages=4, template_pages=9)])
    assert "sample URLs" not in prompt.split("## Data from")[0].split("## 1.")[1]
    assert "start a new audit of the site" in prompt


def test_a_quoted_title_keeps_its_case() -> None:
    items = [FixItem("title_duplicate", W, "/clocks/[slug]", pages=2, template_pages=2, template_wide=True,
                     sample_urls=(f"{SITE}/clocks/a",), examples=("Brass Mantel Clock | Retro Clock",))]  # fmt: skip
    _, data = parts(prompt_for(items))
    assert "D1 title: Brass Mantel Clock | Retro Clock" in data


def test_every_fix_of_a_small_site_fits_compact_before_any_is_left_out() -> None:
    """A 14-page site with fourteen fixes left some out for size; compact, every one fits."""
    site = "https://www.retro-clock-workshop.example"
    pages = [f"{site}/{path}" for path in ("", "about-us", "contact", "shop", "blog")] + [
        f"{site}/shop/antique-clock-{n}" for n in range(5)
    ] + [f"{site}/blog/clock-care-post-{n}" for n in range(4)]  # fmt: skip
    templates = ("/", "/about-us", "/contact", "/shop", "/blog", "/shop/[slug]", "/blog/[slug]")
    codes = sorted(CATALOGUE, key=lambda c: (CATALOGUE[c].severity.rank, c))[::7][:14]
    items = [
        FixItem(code, CATALOGUE[code].severity, templates[(n + k) % len(templates)], pages=1 + (n + k) % 5,
                template_pages=5, sample_urls=tuple(pages[(n * 3 + k + j) % len(pages)] for j in range(3)),
                examples=(f"Retro Clock Example Value {n}-{k}", "Another Quoted Value From The Page"))
        for n, code in enumerate(codes)
        for k in range(1 + n % 4)
    ]  # fmt: skip
    prompt = compose_fix_prompt(site_url=site, health_score=50, items=items, catalogue=CATALOGUE)
    keeps_its_word(items, prompt, site=site)
    assert "did not fit" not in prompt
    assert len(sections(parts(prompt)[0])) == 14
