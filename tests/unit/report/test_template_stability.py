"""Templates that hold still (docs/templates.md): what shapes them, what they name, and the promise that
error URLs, resources and single pages added or removed never rename the other pages' templates."""

from hypothesis import given, settings
from hypothesis import strategies as st

from siteaudit.domain.template import SiteTemplates, UrlRole, infer_site_templates, url_role

SITE = "http://127.0.0.1:8000"
PAGE, RESOURCE, OTHER = UrlRole.PAGE, UrlRole.RESOURCE, UrlRole.OTHER
ONE_OFFS = [f"one-off-{n}" for n in range(25)]

Crawled = list[tuple[str, UrlRole, str]]


def templates_of(crawled: Crawled) -> dict[str, str]:
    site: SiteTemplates = infer_site_templates(crawled)
    return {url: site.template_of(url, role) for url, role, _ in crawled}


def shop(products: int, *, gone: int) -> Crawled:
    crawled: Crawled = [
        (f"{SITE}/", PAGE, "home"),
        (f"{SITE}/about", PAGE, "text"),
        (f"{SITE}/contact", PAGE, "form"),
    ]
    crawled += [(f"{SITE}/products/clock-{n}", PAGE, "product") for n in range(products)]
    crawled += [(f"{SITE}/products/gone-{n}", OTHER, "") for n in range(gone)]
    return crawled


def test_a_small_catalogue_of_one_layout_is_one_template_with_or_without_its_broken_links() -> None:
    with_broken = templates_of(shop(3, gone=3))
    without = templates_of(shop(3, gone=0))

    products = {url: t for url, t in without.items() if "/clock-" in url}
    assert set(products.values()) == {"/products/[slug]"}
    assert {url: with_broken[url] for url in without} == without
    # The broken URLs take the template they point into: one task for the three of them.
    assert {t for url, t in with_broken.items() if "/gone-" in url} == {"/products/[slug]"}
    assert (without[f"{SITE}/about"], without[f"{SITE}/contact"], without[f"{SITE}/"]) == (
        "/about",
        "/contact",
        "/",
    )


def test_siblings_of_different_layouts_stay_apart_below_the_threshold() -> None:
    crawled: Crawled = [
        (f"{SITE}/products/clock-1", PAGE, "product"),
        (f"{SITE}/products/clock-2", PAGE, "product"),
        (f"{SITE}/products/sale", PAGE, "listing"),
        (f"{SITE}/products/gift-card", PAGE, "voucher"),
    ]

    assert templates_of(crawled) == {
        f"{SITE}/products/clock-1": "/products/[slug]",
        f"{SITE}/products/clock-2": "/products/[slug]",
        f"{SITE}/products/sale": "/products/sale",
        f"{SITE}/products/gift-card": "/products/gift-card",
    }


def test_error_redirect_and_resource_urls_do_not_shape_page_templates() -> None:
    # Three products and three 404s under one parent made six siblings, over the threshold of five; with
    # the 404s gone, the product pages split into one template each. Only the pages vote now.
    crawled: Crawled = [(f"{SITE}/products/clock-{n}", PAGE, "") for n in range(3)]
    crawled += [(f"{SITE}/products/gone-{n}", OTHER, "") for n in range(3)]

    assert {t for url, t in templates_of(crawled).items() if "clock" in url} == {
        f"/products/clock-{n}" for n in range(3)
    }


def test_images_have_their_own_templates_and_constants_stay_literal() -> None:
    crawled: Crawled = [(f"{SITE}/", PAGE, "home")]
    crawled += [(f"{SITE}/{page}", PAGE, "text") for page in ONE_OFFS]
    crawled += [(f"{SITE}/static/img/products/clock-{n}.png", RESOURCE, "") for n in range(8)]
    crawled += [(f"{SITE}/static/site.css", RESOURCE, "")]

    found = templates_of(crawled)

    assert {t for url, t in found.items() if url.endswith(".png")} == {"/static/img/products/[slug]"}
    assert found[f"{SITE}/static/site.css"] == "/static/site.css"
    assert {t for url, t in found.items() if "one-off" in url} == {"/[slug]"}


def test_small_sections_at_a_crowded_root_are_not_lumped_into_a_catch_all() -> None:
    crawled: Crawled = [(f"{SITE}/{page}", PAGE, "text") for page in ONE_OFFS]
    crawled += [(f"{SITE}/legal/{page}", PAGE, "legal") for page in ("terms", "privacy", "cookies")]
    crawled += [(f"{SITE}/about", PAGE, "about"), (f"{SITE}/about/team", PAGE, "team")]
    crawled += [(f"{SITE}/tips/{tip}", PAGE, f"tip-{tip}") for tip in ("winding", "oiling")]
    crawled += [(f"{SITE}/press/kit", PAGE, "kit")]

    found = templates_of(crawled)

    assert {t for url, t in found.items() if "/legal/" in url} == {"/legal/[slug]"}
    assert found[f"{SITE}/about"] == "/[slug]"  # a one-off page at the root, as its neighbours
    assert found[f"{SITE}/about/team"] == "/about/team"
    assert (found[f"{SITE}/tips/winding"], found[f"{SITE}/tips/oiling"]) == ("/tips/winding", "/tips/oiling")
    assert found[f"{SITE}/press/kit"] == "/press/kit"
    assert not any("[slug2]" in t for t in found.values())


def test_the_role_of_a_url_follows_its_answer() -> None:
    assert url_role(200, is_html=True, redirected=False, failed=False, blocked=False) is PAGE
    assert url_role(200, is_html=False, redirected=False, failed=False, blocked=False) is RESOURCE
    assert url_role(404, is_html=True, redirected=False, failed=False, blocked=False) is OTHER
    assert url_role(200, is_html=True, redirected=True, failed=False, blocked=False) is OTHER
    assert url_role(403, is_html=True, redirected=False, failed=False, blocked=True) is OTHER
    assert url_role(None, is_html=False, redirected=False, failed=True, blocked=False) is OTHER


# ---- properties ----------------------------------------------------------------------------------------

_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8).map(lambda w: w + "-x")
_sections = ["products", "blog", "guides", "legal", "recipes", "help"]


@st.composite
def sites(draw: st.DrawFn) -> Crawled:
    """A site of sections whose pages share their section's layout, a few one-off pages at the root (too
    few for a root template), numeric items, images, and broken links."""
    crawled: Crawled = [(f"{SITE}/", PAGE, "home")]
    for section in draw(st.lists(st.sampled_from(_sections), min_size=1, max_size=4, unique=True)):
        for slug in draw(st.lists(_words, min_size=3, max_size=9, unique=True)):
            crawled.append((f"{SITE}/{section}/{slug}", PAGE, f"layout-{section}"))
    for page in draw(st.lists(st.sampled_from(ONE_OFFS), max_size=12, unique=True)):
        crawled.append((f"{SITE}/{page}", PAGE, f"own-{page}"))
    for item in draw(st.lists(st.integers(1, 10**6), max_size=6, unique=True)):
        crawled.append((f"{SITE}/items/{item}", PAGE, "item"))
    for image in draw(st.lists(_words, max_size=8, unique=True)):
        crawled.append((f"{SITE}/static/img/{image}.png", RESOURCE, ""))
    return crawled


def errors() -> st.SearchStrategy[list[tuple[str, UrlRole, str]]]:
    where = st.sampled_from([*_sections, "items", "static/img", "nowhere"]).map(lambda w: f"/{w}") | st.just(
        ""
    )
    return st.lists(
        st.tuples(where, _words).map(lambda ws: (f"{SITE}{ws[0]}/{ws[1]}", OTHER, "")),
        min_size=1,
        max_size=12,
    )


@settings(max_examples=150)
@given(sites(), errors())
def test_error_urls_added_or_removed_never_rename_a_page_or_resource(site: Crawled, broken: Crawled) -> None:
    without = templates_of(site)
    with_errors = templates_of(site + broken)

    assert {url: with_errors[url] for url in without} == without


@settings(max_examples=150)
@given(sites(), st.data())
def test_one_page_added_to_a_section_never_renames_the_others(site: Crawled, data: st.DataObject) -> None:
    sections = sorted({url.split("/")[3] for url, role, skeleton in site if skeleton.startswith("layout-")})
    section = data.draw(st.sampled_from(sections))
    slug = data.draw(_words.filter(lambda w: f"{SITE}/{section}/{w}" not in {c[0] for c in site}))
    before = templates_of(site)

    after = templates_of([*site, (f"{SITE}/{section}/{slug}", PAGE, f"layout-{section}")])

    assert {url: after[url] for url in before} == before
    assert after[f"{SITE}/{section}/{slug}"] == f"/{section}/[slug]"


@settings(max_examples=150)
@given(sites(), st.data())
def test_one_page_removed_never_renames_the_others_of_a_template_of_three_or_more(
    site: Crawled, data: st.DataObject
) -> None:
    before = templates_of(site)
    members: dict[str, list[str]] = {}
    for url, role, _ in site:
        if role is PAGE:
            members.setdefault(before[url], []).append(url)
    removable = sorted(url for urls in members.values() if len(urls) >= 3 for url in urls)
    if not removable:
        return
    gone = data.draw(st.sampled_from(removable))

    after = templates_of([c for c in site if c[0] != gone])

    assert {url: after[url] for url in before if url != gone} == {
        url: t for url, t in before.items() if url != gone
    }


@settings(max_examples=150)
@given(sites(), st.sampled_from(["new-page", "opening-night"]))
def test_a_new_one_off_page_never_renames_the_others(site: Crawled, name: str) -> None:
    before = templates_of(site)

    after = templates_of([*site, (f"{SITE}/{name}", PAGE, "own-new")])

    assert {url: after[url] for url in before} == before


# ---- the skeleton ------------------------------------------------------------------------------------

LAYOUT = (
    "<!doctype html><html><head><title>{title}</title></head><body><header><nav><ul><li><a href=/>Home</a>"
    "</li></ul></nav></header><main>{main}</main><footer><p>Retro Clock</p></footer></body></html>"
)


def skeleton(title: str, main: str) -> str:
    from siteaudit.adapters.html.extract import extract_html_facts

    html = LAYOUT.format(title=title, main=main).encode()
    facts = extract_html_facts(html, url=f"{SITE}/x", content_type_header="text/html", origin=SITE)
    return facts.skeleton


def test_pages_of_one_layout_share_a_skeleton_whatever_their_text() -> None:
    product = (
        "<article><h1>{name}</h1><p>{text}</p><section><h2>Reviews</h2><ul>{reviews}</ul></section></article>"
    )
    one = skeleton(
        "Brass", product.format(name="Brass", text="A <b>fine</b> clock.", reviews="<li>Good</li>")
    )
    two = skeleton(
        "Oak",
        product.format(
            name="Oak cuckoo", text="Carved <em>by hand</em>.", reviews="<li>A</li><li>B</li>" * 9
        ),
    )
    contact = skeleton("Contact", "<h1>Write to us</h1><form><p><input name=q></p></form>")

    assert one == two != contact
    assert len(one) == 16
