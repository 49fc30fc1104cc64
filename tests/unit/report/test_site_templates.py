"""The URL templates of whole sites, written down before the algorithm was changed (issue 12).

Two real sites are checked in as URL lists under `sites/` (the paths a crawl of the Debian documentation
packages `python3.11-doc` and `postgresql-doc-15` served over HTTP finds: every HTML page, the images,
and `/`), so these tests run without the packages; when a package is installed, its files are listed
again and must give the same templates. The synthetic sites are the shapes a demanding user expects to
see named: shops, blogs, calendars, multilingual documentation, and a root crowded with one-off pages.
"""

from collections import Counter
from pathlib import Path

import pytest

from siteaudit.domain.template import infer_templates

SITE = "https://retro-clock.example"
SITES = Path(__file__).parent / "sites"


def counted(urls: list[str]) -> dict[str, int]:
    """How many of `urls` each template has."""
    mapping = infer_templates(urls)
    return dict(Counter(mapping.template_of(url) for url in urls))


def listed(name: str) -> list[str]:
    return [line.strip() for line in (SITES / name).read_text().splitlines() if line.strip()]


def served(root: Path, suffixes: tuple[str, ...]) -> list[str]:
    """The paths a crawl of an installed documentation tree finds, as the fixtures were made."""
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix in suffixes]
    images = [p for p in root.glob("_images/*") if p.is_file()]
    return ["/", *sorted({"/" + p.relative_to(root).as_posix() for p in files + images})]


# ---- real sites -----------------------------------------------------------------------------------------

PYTHON_DOCS = {
    # Each section of the documentation tree keeps its name, although the root has 40 pages of its own.
    "/library/[slug]": 317,
    "/c-api/[slug]": 64,
    "/whatsnew/[slug]": 21,
    "/howto/[slug]": 20,
    "/tutorial/[slug]": 17,
    "/distutils/[slug]": 13,
    "/reference/[slug]": 11,
    "/faq/[slug]": 9,
    "/extending/[slug]": 7,
    "/using/[slug]": 7,
    "/_images/[slug]": 6,
    # The pages that live at the root (about, glossary, genindex-A ... genindex-Z, ...) share one.
    "/[slug]": 40,
    # One-page directories (install/, installing/, distributing/, includes/) form no template: each page
    # stays under its own path (they were `/[slug]/index.html` and `/[slug]/wasm-notavail.html`, catch-alls
    # that read like templates).
    "/install/index.html": 1,
    "/installing/index.html": 1,
    "/distributing/index.html": 1,
    "/includes/wasm-notavail.html": 1,
    "/": 1,
}

POSTGRESQL_DOCS = {
    # A flat tree: every page lives at the root and they are pages of one kind.
    "/[slug]": 1172,
    "/": 1,
}


def test_the_python_documentation() -> None:
    assert counted(listed("python-3.11-docs.txt")) == PYTHON_DOCS


def test_the_postgresql_documentation() -> None:
    assert counted(listed("postgresql-15-docs.txt")) == POSTGRESQL_DOCS


@pytest.mark.parametrize(
    ("root", "suffixes", "fixture"),
    [
        (Path("/usr/share/doc/python3.11/html"), (".html",), "python-3.11-docs.txt"),
        (Path("/usr/share/doc/postgresql-doc-15/html"), (".html", ".svg"), "postgresql-15-docs.txt"),
    ],
)
def test_an_installed_documentation_package_matches_its_checked_in_list(
    root: Path, suffixes: tuple[str, ...], fixture: str
) -> None:
    if not root.is_dir():
        pytest.skip(f"{root} is not installed (the checked-in list is tested above)")
    assert counted(served(root, suffixes)) == counted(listed(fixture))


# ---- synthetic sites ------------------------------------------------------------------------------------

ONE_OFF_PAGES = [
    "about", "contact", "pricing", "terms", "privacy", "careers", "press", "help", "faq", "imprint",
    "team", "history", "workshop", "repairs", "gift-cards", "shipping", "returns", "warranty",
    "newsletter", "sitemap", "accessibility", "cookies",
]  # fmt: skip


def test_a_shop_with_a_numeric_catalogue_beside_many_one_off_pages() -> None:
    urls = (
        [f"{SITE}/"]
        + [f"{SITE}/{page}" for page in ONE_OFF_PAGES]
        + [f"{SITE}/products/{n}" for n in range(1, 41)]
        + [f"{SITE}/products/{n}/reviews" for n in range(1, 6)]
        + [
            f"{SITE}/category/{c}"
            for c in ("wall-clocks", "pocket-watches", "alarm-clocks", "cuckoo", "parts")
        ]
        + [f"{SITE}/cart", f"{SITE}/checkout"]
    )

    assert counted(urls) == {
        "/": 1,
        "/[slug]": len(ONE_OFF_PAGES) + 2,  # cart and checkout live at the root too
        "/products/[id]": 40,
        "/products/[id]/reviews": 5,
        "/category/[slug]": 5,
    }


def test_a_small_catalogue_is_a_section_from_its_first_product() -> None:
    urls = [f"{SITE}/{page}" for page in ONE_OFF_PAGES] + [f"{SITE}/products/{n}" for n in (3, 17)]

    assert counted(urls) == {"/[slug]": len(ONE_OFF_PAGES), "/products/[id]": 2}


def test_a_shop_with_uuid_items_and_few_top_pages() -> None:
    ids = [f"{n:08x}-e29b-41d4-a716-446655440000" for n in range(12)]
    urls = [f"{SITE}/item/{i}" for i in ids] + [f"{SITE}/{page}" for page in ONE_OFF_PAGES[:6]]

    assert counted(urls) == {"/item/[uuid]": 12, **{f"/{page}": 1 for page in ONE_OFF_PAGES[:6]}}


def test_a_blog_with_slugs_a_category_hub_and_pagination() -> None:
    posts = [f"winding-{n}" for n in range(30)]
    urls = (
        [f"{SITE}/blog/{post}" for post in posts]
        + [f"{SITE}/blog/category/{c}" for c in ("news", "tips", "repairs", "history", "events")]
        + [f"{SITE}/blog/page/{n}" for n in range(2, 7)]
        + [f"{SITE}/about", f"{SITE}/contact"]
    )

    assert counted(urls) == {
        "/blog/[slug]": 30,
        "/blog/category/[slug]": 5,
        "/blog/page/[page]": 5,
        "/about": 1,
        "/contact": 1,
    }


def test_a_dated_blog_names_year_and_month() -> None:
    urls = [
        f"{SITE}/{year}/{month:02d}/{slug}-{year}-{month}"
        for year in (2023, 2024)
        for month in (1, 5, 11)
        for slug in ("first-light", "brass-and-steel")
    ]

    assert counted(urls) == {"/[year]/[month]/[slug]": 12}
    # The calendar is read from its shape (zero-padded months below), so the first post already names it.
    assert counted([f"{SITE}/2024/05/first-light"]) == {"/[year]/[month]/first-light": 1}


def test_multilingual_documentation_under_a_docs_section_and_at_the_root() -> None:
    guide = ["install", "setup", "faq", "upgrade", "uninstall", "backup"]
    under_docs = [f"{SITE}/docs/{lang}/guide/{page}" for lang in ("en", "de", "fr") for page in guide]
    at_root = [f"{SITE}/{lang}/guide/{page}" for lang in ("en", "de") for page in guide]
    one_offs = [f"{SITE}/{page}" for page in ONE_OFF_PAGES]

    assert counted(under_docs + one_offs) == {"/docs/[lang]/guide/[slug]": 18, "/[slug]": len(ONE_OFF_PAGES)}
    assert counted(at_root + one_offs) == {"/[lang]/guide/[slug]": 12, "/[slug]": len(ONE_OFF_PAGES)}


def test_a_crowded_root_does_not_swallow_its_sections() -> None:
    # The case of issue 12: about 20 free-text pages at the root, and sections of one shape each.
    recipes = [f"{dish}-{n}" for dish in ("soup", "stew", "tart") for n in range(4)]
    urls = (
        [f"{SITE}/"]
        + [f"{SITE}/{page}" for page in ONE_OFF_PAGES]
        + [f"{SITE}/products/{n}" for n in range(100, 130)]
        + [
            f"{SITE}/docs/{lang}/{page}"
            for lang in ("en", "de")
            for page in ("install", "setup", "faq", "tips", "api")
        ]
        + [f"{SITE}/recipes/{recipe}" for recipe in recipes]
        # one-off pages below one-off pages: not a template of their own kind
        + [f"{SITE}/about/team", f"{SITE}/help/contact-form", f"{SITE}/press/kit", f"{SITE}/team/jobs"]
        + [f"{SITE}/careers/apply"]
    )

    assert counted(urls) == {
        "/": 1,
        "/[slug]": len(ONE_OFF_PAGES),
        "/products/[id]": 30,
        "/docs/[lang]/[slug]": 10,
        "/recipes/[slug]": 12,
        # One-off pages below one-off pages form no template: each stays under its own path.
        "/about/team": 1,
        "/help/contact-form": 1,
        "/press/kit": 1,
        "/team/jobs": 1,
        "/careers/apply": 1,
    }


def test_a_root_of_many_category_sections_shares_one_template() -> None:
    # Twenty-five categories of five products each: one layout, not twenty-five sections.
    urls = [f"{SITE}/category-{c}/clock-{c}-{p}" for c in range(25) for p in range(5)]

    assert counted(urls) == {"/[slug]/[slug2]": 125}


# ---- names that do not flip ---------------------------------------------------------------------------


def test_a_numeric_parameter_keeps_its_name_as_siblings_arrive() -> None:
    lone = infer_templates([f"{SITE}/products/1900"])
    with_sibling = infer_templates([f"{SITE}/products/1900", f"{SITE}/products/1"])

    assert lone.template_of(f"{SITE}/products/1900") == "/products/[id]"
    assert with_sibling.template_of(f"{SITE}/products/1900") == "/products/[id]"
    few_years = [f"{SITE}/archive/{year}" for year in (2019, 2020, 2021)]
    assert set(counted(few_years)) == {"/archive/[id]"}
    assert set(counted([*few_years, f"{SITE}/archive/7"])) == {"/archive/[id]"}


def test_many_years_are_named_year() -> None:
    years = [f"{SITE}/archive/{year}" for year in range(2015, 2026)]

    assert set(counted(years)) == {"/archive/[year]"}
    assert set(counted([*years, f"{SITE}/archive/7"])) == {"/archive/[year]"}
