# Over 500 lines: every page-scope check of docs/checks.md, one short rule each, in the catalogue's order.
"""Page checks: everything judged from one URL's own response and HTML facts (docs/checks.md, scope `page`).

`check_page` runs at crawl time for every fetched URL and again for rechecks of single URLs. Checks
that need other URLs' answers, the link graph or cross-page comparisons live in `site.py`.
"""

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from attrs import frozen

from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.checks import language, url
from siteaudit.domain.checks.render import render_issues
from siteaudit.domain.facts import FetchError, HtmlFacts, Link, LinkKind, PageFacts
from siteaudit.domain.issue import Issue, Severity
from siteaudit.domain.thresholds import Thresholds

# At most this many examples (URLs, anchors, sources) in one issue's details: they illustrate, the
# report links to the page for the rest.
DETAIL_SAMPLE = 10

_TEMPORARY_REDIRECTS = frozenset({302, 303, 307})
_LOOP_ERRORS = frozenset({FetchError.REDIRECT_LOOP, FetchError.TOO_MANY_REDIRECTS})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Robots directive tokens that carry a value after a colon; anything else before a colon in an
# X-Robots-Tag value is a user agent prefix.
_VALUED_DIRECTIVES = frozenset({"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"})
# X-Robots-Tag values for other crawlers do not concern us; googlebot matches `<meta name=googlebot>`,
# which the extractor already includes.
_OUR_AGENTS = frozenset({"googlebot", "*"})
_OPEN_GRAPH_REQUIRED = ("og:title", "og:description", "og:image")


@frozen
class PageContext:
    """What a page check needs to know beyond the page itself.

    - `start_url`: the audit's start URL (its origin defines internal URLs and whether the site is
      served over HTTPS).
    - `referenced`: the URL is known to be linked internally or listed in a sitemap. At crawl time leave
      it False: the site checks decide `http_4xx`, `redirect_temporary` and the raised `noindex` from the
      whole link graph. Rechecks of a reported URL pass True.
    - `not_found_titles`: titles and H1s of the site's own 404 template (normalised with
      `normalise_text`), for `soft_404`.
    - `site_https`: whether the site answers over HTTPS; None derives it from the start URL's scheme.
    """

    start_url: str
    referenced: bool = False
    not_found_titles: frozenset[str] = frozenset()
    site_https: bool | None = None

    @property
    def host(self) -> str:
        return url.host(self.start_url)

    @property
    def https(self) -> bool:
        return self.site_https if self.site_https is not None else url.scheme(self.start_url) == "https"


def issue(code: str, page_url: str, severity: Severity | None = None, /, **details: Any) -> Issue:
    """An issue at the catalogue's default severity unless told otherwise."""
    return Issue(
        check_code=code,
        severity=severity or CATALOGUE[code].severity,
        url=page_url,
        details=details,
    )


def sampled_issue(code: str, page_url: str, name: str, found: Sequence[Any]) -> Issue:
    """An issue naming the first DETAIL_SAMPLE of what was found as `name`, and their `count`."""
    return issue(code, page_url, **{name: list(found[:DETAIL_SAMPLE]), "count": len(found)})


def plain(reason: FetchError | None) -> str | None:
    """An enum member as its plain string value: issue details stay JSON values without our types."""
    return None if reason is None else reason.value


def normalise_text(text: str) -> str:
    """Comparison form of titles, descriptions and headings: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


# --- derived page properties, shared with the site checks -------------------------------------------


@frozen
class Directives:
    """Robots directives of a page, per source, with the union rules of docs/checks.md "Conventions"
    applied."""

    meta: tuple[frozenset[str], ...]
    header: tuple[frozenset[str], ...]

    @property
    def tokens(self) -> frozenset[str]:
        merged: frozenset[str] = frozenset()
        for source in (*self.meta, *self.header):
            merged |= source
        return merged

    @property
    def noindex(self) -> bool:
        return _says_noindex(self.tokens)

    @property
    def nofollow(self) -> bool:
        return "nofollow" in self.tokens or "none" in self.tokens


def _says_noindex(tokens: frozenset[str]) -> bool:
    return "noindex" in tokens or "none" in tokens


def _says_index(tokens: frozenset[str]) -> bool:
    return "index" in tokens or "all" in tokens


def _says_nofollow(tokens: frozenset[str]) -> bool:
    return "nofollow" in tokens or "none" in tokens


def _says_follow(tokens: frozenset[str]) -> bool:
    return "follow" in tokens or "all" in tokens


def _tokens(value: str) -> frozenset[str]:
    return frozenset(" ".join(token.split()).lower() for token in value.split(",") if token.strip())


def _header_tokens(value: str) -> frozenset[str] | None:
    """Tokens of one X-Robots-Tag value; None when it is addressed to another crawler."""
    head, sep, rest = value.partition(":")
    agent = head.strip().lower()
    if sep and agent and "," not in agent and agent not in _VALUED_DIRECTIVES:
        if agent not in _OUR_AGENTS:
            return None
        value = rest
    return _tokens(value)


def directives(page: PageFacts) -> Directives:
    meta = tuple(_tokens(value) for value in page.html.meta_robots) if page.html else ()
    header = tuple(tokens for value in page.x_robots_tag if (tokens := _header_tokens(value)) is not None)
    return Directives(meta=meta, header=header)


def own_url(page: PageFacts) -> str:
    """The URL the page's content lives at: the final URL after redirects, normalised."""
    return url.normalise(page.final_url or page.url)


def base_url(page: PageFacts) -> str:
    """What relative references resolve against: `<base href>` (itself resolved) or the final URL."""
    final = page.final_url or page.url
    if page.html is not None and page.html.base_href:
        resolved = url.resolve(page.html.base_href, final)
        if resolved is not None:
            return resolved
    return final


def html_canonicals(page: PageFacts) -> tuple[str, ...]:
    """Distinct resolved canonical URLs declared in the head, in order; unparseable ones left out."""
    if page.html is None:
        return ()
    base = base_url(page)
    seen: dict[str, None] = {}
    for href in page.html.canonicals:
        resolved = url.resolve(href, base)
        if resolved is not None:
            seen.setdefault(resolved, None)
    return tuple(seen)


def header_canonicals(page: PageFacts) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for href in page.link_canonicals:
        resolved = url.resolve(href, page.final_url or page.url)
        if resolved is not None:
            seen.setdefault(resolved, None)
    return tuple(seen)


def effective_canonical(page: PageFacts) -> str | None:
    """The canonical search engines would take: the one HTML canonical, else the one header canonical;
    None when absent or ambiguous (several distinct ones are ignored)."""
    in_html = html_canonicals(page)
    if len(in_html) == 1:
        return in_html[0]
    if in_html:
        return None
    in_header = header_canonicals(page)
    return in_header[0] if len(in_header) == 1 else None


def canonical_elsewhere(page: PageFacts) -> str | None:
    """The effective canonical when it names another URL than the page's own, else None."""
    canonical = effective_canonical(page)
    return canonical if canonical is not None and canonical != own_url(page) else None


def is_html(page: PageFacts) -> bool:
    if page.html is None:
        return False
    return page.content_type is None or page.content_type in _HTML_TYPES


def is_content_page(page: PageFacts) -> bool:
    """An HTML page that answered 2xx and was not challenged: the pages content checks apply to."""
    return (
        is_html(page)
        and page.blocked_by is None
        and page.status_code is not None
        and 200 <= page.status_code < 300
    )


def is_indexable(page: PageFacts) -> bool:
    """docs/checks.md "Conventions": HTML, final status 200, no noindex, canonical absent or self, not
    disallowed."""
    return indexable_given(page, noindex=directives(page).noindex, elsewhere=canonical_elsewhere(page))


def indexable_given(page: PageFacts, *, noindex: bool, elsewhere: str | None) -> bool:
    """`is_indexable` with the two costly parts already derived by the caller."""
    return (
        is_html(page)
        and page.blocked_by is None
        and page.status_code == 200
        and not page.disallowed
        and not noindex
        and elsewhere is None
    )


def first_status(page: PageFacts) -> int | None:
    """The status the URL itself answered with: its first redirect's, or the final one."""
    return page.redirects[0].status if page.redirects else page.status_code


def is_redirect_loop(page: PageFacts, thresholds: Thresholds) -> bool:
    if page.fetch_error in _LOOP_ERRORS:
        return True
    visited = [url.normalise(hop.url) for hop in page.redirects]
    if len(visited) != len(set(visited)) or len(page.redirects) > thresholds.max_redirect_hops:
        return True
    return bool(page.redirects) and page.final_url is not None and url.normalise(page.final_url) in visited


def is_failed(page: PageFacts) -> bool:
    """No usable final answer: a fetch error or a final status >= 400 (a challenge is not a failure)."""
    if page.blocked_by is not None:
        return False
    return page.fetch_error is not None or (page.status_code is not None and page.status_code >= 400)


def is_rate_limited(page: PageFacts) -> bool:
    return page.status_code == 429 or (page.status_code == 503 and page.header("retry-after") is not None)


def declared_size(page: PageFacts) -> int:
    """Body size: bytes read, or the Content-Length header when larger (HEAD requests read nothing)."""
    length = page.header("content-length")
    declared = int(length) if length is not None and length.strip().isdigit() else 0
    return max(page.bytes, declared)


# --- the page checks ---------------------------------------------------------------------------------


_DEFAULT_THRESHOLDS = Thresholds()


def check_page(page: PageFacts, *, thresholds: Thresholds | None = None, context: PageContext) -> list[Issue]:
    """Every page-scope check of one fetched URL. A challenged page gets `bot_challenge` only."""
    limits = thresholds if thresholds is not None else _DEFAULT_THRESHOLDS
    if page.blocked_by is not None:
        return [issue("bot_challenge", page.url, provider=page.blocked_by, status=page.status_code)]
    issues = list(_fetch_issues(page, limits, context))
    issues.extend(_directive_issues(page, context))
    html = page.html
    if html is not None and is_content_page(page):
        indexable = is_indexable(page)
        issues.extend(_canonical_issues(page, indexable))
        issues.extend(_title_issues(page, html, limits, indexable))
        issues.extend(_content_issues(page, html, limits, indexable))
        issues.extend(_link_issues(page, html, context, limits, indexable))
        issues.extend(_hreflang_issues(page, html))
        issues.extend(_image_and_markup_issues(page, html, indexable))
        issues.extend(_url_issues(page))
        issues.extend(render_issues(page, html))
    return issues


def _fetch_issues(page: PageFacts, limits: Thresholds, context: PageContext) -> Iterator[Issue]:
    hops = [{"url": hop.url, "status": hop.status} for hop in page.redirects]
    if is_redirect_loop(page, limits):
        yield issue(
            "redirect_loop", page.url, hops=hops, reason=plain(page.fetch_error) or "revisit_or_too_long"
        )
        return
    if page.redirects and is_failed(page):
        yield issue(
            "redirect_to_error",
            page.url,
            hops=hops,
            final_url=page.final_url,
            status=page.status_code,
            reason=plain(page.fetch_error),
        )
    elif page.fetch_error is not None:
        yield issue("fetch_failed", page.url, reason=plain(page.fetch_error), detail=page.fetch_error_detail)
    elif is_rate_limited(page):
        yield issue("rate_limited", page.url, status=page.status_code, retry_after=page.header("retry-after"))
    elif page.status_code is not None and not page.redirects:
        if page.status_code >= 500:
            yield issue("http_5xx", page.url, status=page.status_code)
        elif page.status_code >= 400 and context.referenced:
            yield issue("http_4xx", page.url, status=page.status_code)
    if len(page.redirects) >= limits.redirect_chain_min_hops:
        yield issue("redirect_chain", page.url, hops=hops, final_url=page.final_url, count=len(hops))
    if context.referenced and first_status(page) in _TEMPORARY_REDIRECTS and page.redirects:
        yield issue(
            "redirect_temporary",
            page.url,
            status=page.redirects[0].status,
            location=page.redirects[0].location,
        )
    if (
        url.scheme(page.url) == "http"
        and url.host(page.url) == context.host
        and context.https
        and page.status_code == 200
        and not page.redirects
        and url.scheme(page.final_url or page.url) == "http"
    ):
        yield issue("http_not_redirected_to_https", page.url, status=page.status_code)
    refresh = _refresh_target(page)
    if refresh is not None:
        yield issue("meta_refresh_redirect", page.url, refresh=refresh[0], source=refresh[1])
    if is_html(page) and page.ttfb_ms is not None and page.ttfb_ms > limits.slow_response_ms:
        yield issue("slow_response", page.url, ttfb_ms=page.ttfb_ms, limit_ms=limits.slow_response_ms)
    if is_html(page) and (
        page.bytes > limits.html_max_bytes or (page.truncated and page.bytes >= limits.html_max_bytes)
    ):
        yield issue(
            "html_too_large",
            page.url,
            bytes=page.bytes,
            truncated=page.truncated,
            limit_bytes=limits.html_max_bytes,
        )
    if page.html is not None and is_content_page(page):
        yield from _soft_404(page, page.html, limits, context)


def _refresh_target(page: PageFacts) -> tuple[str, str] | None:
    """The refresh instruction when it sends the visitor to a URL (a bare reload is no redirect)."""
    candidates = [(page.html.meta_refresh, "meta")] if page.html is not None else []
    candidates.append((page.header("refresh"), "header"))
    for content, source in candidates:
        if content is None:
            continue
        _delay, sep, target = content.replace(",", ";", 1).partition(";")
        if sep and target.strip():
            return content, source
    return None


def _soft_404(page: PageFacts, html: HtmlFacts, limits: Thresholds, context: PageContext) -> Iterator[Issue]:
    if html.not_found_phrase and html.text_chars < limits.soft_404_max_chars:
        yield issue("soft_404", page.url, reason="not_found_phrase", text_chars=html.text_chars)
        return
    if not context.not_found_titles:
        return
    for kind, texts in (("title", html.titles[:1]), ("h1", html.h1s[:1])):
        for text in texts:
            if text.strip() and normalise_text(text) in context.not_found_titles:
                yield issue("soft_404", page.url, reason=f"{kind}_matches_404_template", text=text)
                return


def _directive_issues(page: PageFacts, context: PageContext) -> Iterator[Issue]:
    if page.blocked_by is not None or (page.html is None and not page.x_robots_tag):
        return
    if page.status_code is None or not 200 <= page.status_code < 300:
        return  # directives of an error or redirect response do not concern a page
    found = directives(page)
    tokens = found.tokens
    if found.noindex:
        raised = page.in_sitemap or context.referenced
        yield issue(
            "noindex",
            page.url,
            Severity.WARNING if raised else None,
            directives=sorted(tokens),
            in_sitemap=page.in_sitemap,
            referenced=context.referenced,
        )
    if found.nofollow:
        yield issue("nofollow_page", page.url, directives=sorted(tokens))
    conflict = _conflict(found)
    if conflict is not None:
        yield issue(
            "robots_directive_conflict",
            page.url,
            about=conflict,
            meta=[sorted(source) for source in found.meta],
            header=[sorted(source) for source in found.header],
        )
    restricted = sorted(
        token
        for token in tokens
        if token in ("nosnippet", "noimageindex") or token.replace(" ", "") == "max-snippet:0"
    )
    if restricted:
        yield issue("nosnippet_or_noimageindex", page.url, directives=restricted)


def _conflict(found: Directives) -> str | None:
    """`noindex` when sources disagree about indexing, `nofollow` when robots metas disagree about
    following; None when they agree."""
    sources = (*found.meta, *found.header)
    if any(_says_noindex(s) for s in sources) and any(_says_index(s) for s in sources):
        return "noindex"
    meta_noindex = any(_says_noindex(s) for s in found.meta)
    header_noindex = any(_says_noindex(s) for s in found.header)
    if found.meta and found.header and meta_noindex != header_noindex:
        return "noindex"
    if any(_says_nofollow(s) for s in found.meta) and any(_says_follow(s) for s in found.meta):
        return "nofollow"
    return None


def _canonical_issues(page: PageFacts, indexable: bool) -> Iterator[Issue]:
    html = page.html
    if html is None:
        return
    base = base_url(page)
    in_html = html_canonicals(page)
    in_header = header_canonicals(page)
    if not html.canonicals and not page.link_canonicals and indexable:
        yield issue("canonical_missing", page.url)
    if len(in_html) > 1:
        yield issue("canonical_multiple", page.url, canonicals=list(in_html))
    invalid = [href for href in html.canonicals if url.resolve(href, base) is None]
    if invalid:
        yield issue("canonical_invalid", page.url, hrefs=invalid)
    relative = [
        href for href in html.canonicals if href.strip() and href not in invalid and not url.is_absolute(href)
    ]
    if relative:
        yield issue("canonical_relative", page.url, hrefs=relative)
    if in_html and in_header and set(in_html) != set(in_header):
        yield issue("canonical_header_mismatch", page.url, html=list(in_html), header=list(in_header))
    elsewhere = canonical_elsewhere(page)
    if elsewhere is not None:
        yield issue("canonical_not_self", page.url, canonical=elsewhere, page_url=own_url(page))
        if (
            url.origin(elsewhere) == url.origin(own_url(page))
            and url.path(elsewhere) == "/"
            and not url.query(elsewhere)
            and url.path(own_url(page)) != "/"
        ):
            yield issue("canonical_to_root", page.url, canonical=elsewhere)


def _title_issues(page: PageFacts, html: HtmlFacts, limits: Thresholds, indexable: bool) -> Iterator[Issue]:
    title = html.titles[0].strip() if html.titles else ""
    if not title:
        yield issue("title_missing", page.url, titles=len(html.titles))
    else:
        length = len(title)
        if length > limits.title_max_chars:
            yield issue("title_too_long", page.url, title=title, length=length, limit=limits.title_max_chars)
        if length < limits.title_min_chars:
            yield issue("title_too_short", page.url, title=title, length=length, limit=limits.title_min_chars)
    if len(html.titles) > 1:
        yield sampled_issue("title_multiple", page.url, "titles", html.titles)
    description = html.meta_descriptions[0].strip() if html.meta_descriptions else ""
    if not description:
        if indexable:
            yield issue("meta_description_missing", page.url, descriptions=len(html.meta_descriptions))
    else:
        length = len(description)
        if length > limits.description_max_chars:
            yield issue(
                "meta_description_too_long",
                page.url,
                description=description,
                length=length,
                limit=limits.description_max_chars,
            )
        if length < limits.description_min_chars:
            yield issue(
                "meta_description_too_short",
                page.url,
                description=description,
                length=length,
                limit=limits.description_min_chars,
            )
    if len(html.meta_descriptions) > 1:
        yield sampled_issue("meta_description_multiple", page.url, "descriptions", html.meta_descriptions)


def _content_issues(page: PageFacts, html: HtmlFacts, limits: Thresholds, indexable: bool) -> Iterator[Issue]:
    if indexable and not any(h1.strip() for h1 in html.h1s):
        yield issue("h1_missing", page.url)
    if len(html.h1s) > 1:
        yield sampled_issue("h1_multiple", page.url, "h1s", html.h1s)
    skips = [
        f"h{before}->h{after}"
        for before, after in zip(html.heading_levels, html.heading_levels[1:], strict=False)
        if after > before + 1
    ]
    if skips:
        yield issue("heading_order_skip", page.url, skips=skips[:DETAIL_SAMPLE])
    if indexable and html.word_count < limits.thin_content_words:
        yield issue("thin_content", page.url, words=html.word_count, limit=limits.thin_content_words)
    lang = (html.lang or "").strip()
    if not lang:
        yield issue("html_lang_missing", page.url)
    elif not language.is_valid_bcp47(lang):
        yield issue("html_lang_invalid", page.url, lang=lang)
    viewport = "".join((html.viewport or "").split()).lower()
    if "width=device-width" not in viewport:
        yield issue("viewport_missing", page.url, viewport=html.viewport)
    if not html.has_doctype or not (html.meta_charset or page.charset):
        yield issue(
            "charset_or_doctype_missing",
            page.url,
            doctype=html.has_doctype,
            charset=html.meta_charset or page.charset,
        )
    if html.dom_nodes > limits.dom_max_nodes:
        yield issue("dom_too_large", page.url, nodes=html.dom_nodes, limit=limits.dom_max_nodes)
    in_body = html.metas_in_body + html.titles_in_body
    if in_body:
        yield issue("metas_in_body", page.url, elements=in_body)


def _anchors(html: HtmlFacts) -> list[Link]:
    return [link for link in html.links if link.kind is LinkKind.A]


def _link_issues(
    page: PageFacts, html: HtmlFacts, context: PageContext, limits: Thresholds, indexable: bool
) -> Iterator[Issue]:
    anchors = _anchors(html)
    nofollowed = _distinct(link.target for link in anchors if link.internal and link.nofollow)
    if nofollowed:
        yield sampled_issue("internal_nofollow_link", page.url, "targets", nofollowed)
    if not anchors and indexable:
        yield issue("dead_end_page", page.url)
    if url.scheme(page.final_url or page.url) == "https":
        # Most targets start with "https:", which no parse can read as scheme "http".
        plain = _distinct(
            link.target
            for link in anchors
            if not link.target.startswith("https:") and url.scheme(link.target) == "http"
        )
        if plain:
            yield sampled_issue("links_to_http", page.url, "targets", plain)
        if html.mixed_content:
            yield sampled_issue("mixed_content", page.url, "resources", html.mixed_content)
        if page.header("strict-transport-security") is None:
            yield issue("hsts_missing", page.url)
    if html.anchors_generic:
        yield sampled_issue("non_descriptive_anchor", page.url, "anchors", html.anchors_generic)
    if html.uncrawlable_anchors:
        yield sampled_issue("uncrawlable_link", page.url, "hrefs", html.uncrawlable_anchors)
    site_host = context.host
    # Links to the site's own host are the most, and the cheapest to tell (see `_PLAIN_AUTHORITY`).
    own = (f"https://{site_host}/", f"http://{site_host}/") if _PLAIN_HOST.fullmatch(site_host) else ()
    local = _distinct(
        link.target
        for link in html.links
        if link.kind in _LOCAL_LINK_KINDS
        and not link.target.startswith(own)
        and _is_foreign_local(link.target, site_host)
    )
    if local:
        yield sampled_issue("localhost_link", page.url, "targets", local)
    # Every <a href> counts, repeats too (docs/checks.md "Conventions"); facts stored before that was recorded
    # give the distinct targets only, a lower bound.
    links = max(html.anchor_links, len(anchors))
    if links > limits.max_links_per_page:
        yield issue(
            "too_many_links",
            page.url,
            links=links,
            distinct_targets=len({link.target for link in anchors}),
            limit=limits.max_links_per_page,
        )
    if html.insecure_forms:
        yield issue("insecure_form", page.url, actions=list(html.insecure_forms[:DETAIL_SAMPLE]))


_LOCAL_LINK_KINDS = frozenset({LinkKind.A, LinkKind.IMG, LinkKind.LINK, LinkKind.SCRIPT})
# `scheme://host` followed by the end, a path, a query or a fragment, the host in plain lower-case
# letters, digits, dots and hyphens: nothing (userinfo, port, IPv6 literal, escapes) left to interpret.
_PLAIN_AUTHORITY = re.compile(r"https?://([a-z0-9.-]+)(?:[/?#]|\Z)")
# The site's host as `url.host` gives it: a port there is never the scheme's default, so a target that
# starts with `scheme://` + that host + "/" is on the site's host, whichever the scheme.
_PLAIN_HOST = re.compile(r"[a-z0-9.-]+(?::[0-9]+)?")


def _is_foreign_local(target: str, site_host: str) -> bool:
    """Whether a link target is on another host than the site's, and that host is not public.

    Both depend on the host alone, which for most targets a pattern reads off directly (it is then
    the name `urlsplit` reads), so no URL is parsed and the answer is kept per name.
    """
    plain = _PLAIN_AUTHORITY.match(target)
    if plain is None:
        return url.host(target) != site_host and url.is_non_public_host(target)
    host = plain.group(1)
    return host != site_host and url.is_non_public_name(host)


def _distinct(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _hreflang_issues(page: PageFacts, html: HtmlFacts) -> Iterator[Issue]:
    if not html.hreflangs:
        return
    self_url = own_url(page)
    invalid = _distinct(entry.lang for entry in html.hreflangs if not language.is_valid_hreflang(entry.lang))
    if invalid:
        yield issue("hreflang_invalid_code", page.url, codes=invalid)
    own = [
        entry
        for entry in html.hreflangs
        if entry.target is not None and url.normalise(entry.target) == self_url
    ]
    if not own:
        yield issue(
            "hreflang_missing_self", page.url, languages=_distinct(entry.lang for entry in html.hreflangs)
        )
    if not any(entry.lang.strip().lower() == "x-default" for entry in html.hreflangs):
        yield issue("hreflang_missing_x_default", page.url)
    relative = _distinct(entry.href for entry in html.hreflangs if not url.is_absolute(entry.href))
    if relative:
        yield issue("hreflang_relative_url", page.url, hrefs=relative[:DETAIL_SAMPLE])
    page_lang = (html.lang or "").strip()
    declared = {
        language.primary_language(entry.lang) for entry in own if entry.lang.strip().lower() != "x-default"
    }
    if (
        page_lang
        and language.is_valid_bcp47(page_lang)
        and declared
        and language.primary_language(page_lang) not in declared
    ):
        yield issue("hreflang_lang_mismatch", page.url, lang=page_lang, hreflang=sorted(declared))


def _image_and_markup_issues(page: PageFacts, html: HtmlFacts, indexable: bool) -> Iterator[Issue]:
    no_alt = _distinct(image.src for image in html.images if not image.has_alt)
    if no_alt:
        yield sampled_issue("img_alt_missing", page.url, "images", no_alt)
    no_size = _distinct(
        image.src
        for image in html.images
        if not (image.width or "").strip() or not (image.height or "").strip()
    )
    if no_size:
        yield sampled_issue("img_missing_dimensions", page.url, "images", no_size)
    broken = [
        "invalid_json" if not block.valid_json else "missing_context_or_type"
        for block in html.json_ld
        if not (block.valid_json and block.has_context and block.has_type)
    ]
    if broken:
        yield issue("structured_data_invalid", page.url, blocks=broken, count=len(html.json_ld))
    if indexable and not html.json_ld and not html.has_microdata and not html.has_rdfa:
        yield issue("structured_data_missing", page.url)
    missing = [prop for prop in _OPEN_GRAPH_REQUIRED if prop not in html.open_graph]
    if missing:
        yield issue("open_graph_missing", page.url, missing=missing)


_NUMERIC = re.compile(r"^\d+$")
# A whitespace character (`\s` of a str pattern is `str.isspace`) or an escaped space, tab or line break.
_WHITESPACE = re.compile(r"\s|%(?:20|09|0[aAdD])")


def _url_issues(page: PageFacts) -> Iterator[Issue]:
    """URL hygiene of a page answering 200 at its own address (a redirecting URL is already fixed)."""
    if page.redirects or page.status_code != 200:
        return
    parts = url.split(page.url)
    if parts is None:
        return
    raw_path = parts.path
    plain = url.without_escapes(raw_path)
    # An ASCII path has an upper-case letter exactly when lower-casing changes it.
    if plain.lower() != plain if plain.isascii() else any(char.isupper() for char in plain):
        yield issue("url_uppercase", page.url, path=raw_path)
    if "_" in raw_path:
        yield issue("url_underscores", page.url, path=raw_path)
    if _WHITESPACE.search(raw_path):
        yield issue("url_whitespace", page.url, path=raw_path)
    if "//" in raw_path:
        yield issue("url_double_slash", page.url, path=raw_path)
    if not page.url.isascii() or url.high_escapes(raw_path):
        yield issue("url_non_ascii", page.url, path=raw_path)
    segments = [segment for segment in raw_path.split("/") if segment and not _NUMERIC.match(segment)]
    repeated = sorted({segment for segment in segments if segments.count(segment) > 1})
    if repeated:
        yield issue("url_repeated_segment", page.url, path=raw_path, segments=repeated)
