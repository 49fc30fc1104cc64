# Over 500 lines: data, one entry per check code with its texts; a table, not logic.
"""The check catalogue (docs/checks.md lists it): one entry per check code with its severity, scope and fix
texts."""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from siteaudit.domain.error import NotFound
from siteaudit.domain.issue import CheckScope, CheckSpec, Severity

_E = Severity.ERROR
_W = Severity.WARNING
_N = Severity.NOTICE

_PAGE = CheckScope.PAGE
_TARGETS = CheckScope.PAGE_TARGETS
_GRAPH = CheckScope.LINK_GRAPH
_SITEMAP = CheckScope.SITEMAP
_SITE = CheckScope.SITE_WIDE

# (code, severity, scope, group, title, why it matters, how to fix); one row per check, kept compact.
# fmt: off
_ROWS: Final[tuple[tuple[str, Severity, CheckScope, str, str, str, str], ...]] = (
    # HTTP / fetch
    (
        "http_4xx", _E, _PAGE, "http",
        "Linked or listed URL answers 4xx",
        "Visitors and crawlers following a link or a sitemap entry land on an error page; the URL "
        "drops out of the index and the links pointing to it waste their value.",
        "Restore the page, or 301-redirect the URL to its closest live replacement, and update the "
        "links and sitemap entries that still point to it.",
    ),
    (
        "http_5xx", _E, _PAGE, "http",
        "Server error (5xx)",
        "A server error means nobody gets the content; repeated 5xx answers make search engines crawl "
        "less and eventually drop the URL.",
        "Check the server and application logs for this URL, fix the failing code or capacity "
        "problem, and make sure the page answers 200.",
    ),
    (
        "fetch_failed", _E, _PAGE, "http",
        "URL could not be fetched",
        "With no HTTP response at all (DNS, connection, TLS or timeout failure) the page is unreachable "
        "for crawlers and visitors alike.",
        "Look at the recorded sub-reason: fix DNS records, the TLS certificate chain, the firewall, or "
        "the server's response time so the URL answers reliably.",
    ),
    (
        "bot_challenge", _E, _PAGE, "http",
        "Page answered with a bot challenge",
        "A firewall challenged the auditor, so the page could not be audited; the same rule may also be "
        "slowing down or blocking legitimate crawlers.",
        "Allow-list the auditor in the firewall (by its user agent or verify-token header) and check "
        "that verified search-engine crawlers are allowed through.",
    ),
    (
        "rate_limited", _W, _PAGE, "http",
        "Server rate-limited the crawler",
        "A 429 (or 503 with Retry-After) after backing off means crawlers are being throttled; search "
        "engines slow down and pages are refreshed less often.",
        "Raise the rate limit for well-behaved crawlers, or allow-list the auditor, and make sure the "
        "server can serve a modest crawl rate.",
    ),
    (
        "redirect_chain", _W, _PAGE, "http",
        "Redirect chain of two or more hops",
        "Each extra hop costs a round trip for visitors and crawl budget for search engines, and long "
        "chains may not be followed to the end.",
        "Point the first URL (and every link to it) straight at the final destination with a single "
        "301 redirect.",
    ),
    (
        "redirect_loop", _E, _PAGE, "http",
        "Redirect loop or too many redirects",
        "The redirects never reach a page, so browsers show an error and crawlers give up.",
        "Trace the Location headers and break the cycle so the URL reaches a 200 page in one hop.",
    ),
    (
        "redirect_to_error", _E, _PAGE, "http",
        "Redirect ends in an error",
        "The redirect sends users and crawlers to a page that fails, so the original URL is effectively "
        "broken.",
        "Redirect to a live page instead, or fix the destination so it answers 200.",
    ),
    (
        "redirect_temporary", _N, _PAGE, "http",
        "Internally linked URL uses a temporary redirect",
        "302, 303 and 307 tell search engines the move is temporary, so the old URL may stay indexed "
        "and signals are consolidated more slowly.",
        "Use a 301 or 308 for permanent moves, and link the final URL directly.",
    ),
    (
        "meta_refresh_redirect", _W, _PAGE, "http",
        "Meta refresh redirect",
        "Meta refresh redirects are slow, confuse assistive technology and are treated as weaker "
        "signals than HTTP redirects.",
        "Replace the meta refresh (or Refresh header) with a server-side 301 redirect.",
    ),
    (
        "http_not_redirected_to_https", _W, _PAGE, "security",
        "HTTP URL not redirected to HTTPS",
        "Serving the same page on http:// and https:// splits signals between two URLs and exposes "
        "visitors to an unencrypted version.",
        "Redirect every http:// URL with a 301 (or 308) to its https:// twin.",
    ),
    (
        "slow_response", _W, _PAGE, "performance",
        "Slow server response",
        "A slow time to first byte delays everything the visitor sees and reduces how many pages "
        "crawlers fetch per visit.",
        "Cache the page or its expensive parts, profile slow queries, and serve from a CDN or a closer "
        "region.",
    ),
    (
        "html_too_large", _W, _PAGE, "performance",
        "HTML document too large",
        "Very large HTML is slow to download and parse, and search engines may stop reading before the "
        "end of the document.",
        "Remove inlined data, paginate long lists, and move scripts and styles into cached files.",
    ),
    (
        "soft_404", _W, _PAGE, "http",
        "Soft 404: error page answering 200",
        "A 'not found' page that answers 200 looks like real content, so search engines keep crawling "
        "and may index it.",
        "Return a real 404 or 410 status for missing content, or redirect to a relevant live page.",
    ),
    # Indexability & directives
    (
        "noindex", _N, _PAGE, "indexability",
        "Page is noindex",
        "A noindex directive keeps the page out of search results; that is a problem when the page is "
        "linked or listed as if it should rank.",
        "Remove noindex from pages meant to be found; for pages meant to stay hidden, drop them from the "
        "sitemap and internal links.",
    ),
    (
        "nofollow_page", _N, _PAGE, "indexability",
        "Page-level nofollow",
        "A page-level nofollow tells search engines to ignore every link on the page, which cuts the "
        "pages it links to off from discovery.",
        "Remove nofollow from the robots meta or X-Robots-Tag unless the page's links must really be "
        "ignored.",
    ),
    (
        "robots_directive_conflict", _W, _PAGE, "indexability",
        "Conflicting robots directives",
        "When meta robots tags and the X-Robots-Tag header disagree, search engines apply the most "
        "restrictive one, which may not be what you intended.",
        "Declare indexing directives in one place, and make the header and meta tags agree.",
    ),
    (
        "blocked_by_robots_txt", _W, _SITE, "robots",
        "URL blocked by robots.txt",
        "Crawlers cannot read a disallowed page, so its content and directives are never seen, even "
        "though it is linked or listed.",
        "Allow the URL in robots.txt if it should be crawled, or stop linking and listing it.",
    ),
    (
        "robots_txt_unreachable", _E, _SITE, "robots",
        "robots.txt unreachable",
        "When robots.txt answers 5xx or times out, search engines treat the whole site as disallowed "
        "until it recovers.",
        "Make /robots.txt answer quickly with 200 (or 404 if you have none).",
    ),
    (
        "robots_txt_missing", _N, _SITE, "robots",
        "No robots.txt",
        "Without robots.txt crawlers assume everything is allowed and find no sitemap reference there.",
        "Publish a /robots.txt, even a minimal one, that lists your sitemap.",
    ),
    (
        "robots_txt_disallow_all", _E, _SITE, "robots",
        "robots.txt disallows the whole site",
        "Disallow: / for all crawlers or Googlebot stops search engines from crawling any page.",
        "Remove the site-wide Disallow rule, or add Allow rules for what should be crawled.",
    ),
    (
        "robots_txt_invalid", _W, _SITE, "robots",
        "robots.txt has invalid content",
        "Lines crawlers cannot parse are ignored, and only the first 500 KiB are read, so rules may not "
        "apply as written.",
        "Fix or remove the unrecognised lines and keep the file well under 500 KiB.",
    ),
    (
        "nosnippet_or_noimageindex", _N, _PAGE, "indexability",
        "Snippet or image indexing restricted",
        "nosnippet, max-snippet:0 or noimageindex limit how the page appears in results, usually lowering "
        "click-through.",
        "Remove these directives unless hiding snippets or images is deliberate.",
    ),
    # Canonical
    (
        "canonical_missing", _N, _PAGE, "canonical",
        "Canonical missing",
        "Without a canonical, search engines guess which of several similar URLs to index, and may pick "
        "one with tracking parameters.",
        "Add <link rel=\"canonical\" href=\"…\"> with the page's absolute preferred URL to the head.",
    ),
    (
        "canonical_multiple", _W, _PAGE, "canonical",
        "Several canonicals declared",
        "Conflicting canonical declarations are ignored, so the page loses its canonical signal.",
        "Keep exactly one canonical link in the head.",
    ),
    (
        "canonical_relative", _N, _PAGE, "canonical",
        "Relative canonical URL",
        "Relative canonicals are easy to break (wrong base, staging hosts) and resolve differently than "
        "intended.",
        "Use an absolute URL with scheme and host in the canonical link.",
    ),
    (
        "canonical_invalid", _W, _PAGE, "canonical",
        "Invalid canonical URL",
        "An empty or unparseable canonical is ignored, so the page has no canonical signal.",
        "Set the canonical href to a valid absolute URL.",
    ),
    (
        "canonical_header_mismatch", _W, _PAGE, "canonical",
        "HTML and HTTP canonicals differ",
        "When the Link header and the HTML canonical disagree, search engines may ignore both.",
        "Declare the same canonical in both places, or only in one.",
    ),
    (
        "canonical_not_self", _N, _PAGE, "canonical",
        "Page canonicalised to another URL",
        "The page asks search engines to index a different URL instead; fine for duplicates, harmful "
        "for pages meant to rank.",
        "Make the canonical point to the page itself unless it really is a duplicate.",
    ),
    (
        "canonical_to_root", _W, _PAGE, "canonical",
        "Canonical points to the home page",
        "A deep page canonicalised to the home page is usually a template mistake and removes the page "
        "from search.",
        "Give each page a canonical pointing to its own URL.",
    ),
    (
        "canonical_target_error", _E, _TARGETS, "canonical",
        "Canonical target is broken",
        "The canonical points to a URL that fails, so search engines ignore it and may drop both pages.",
        "Point the canonical to a live 200 page, normally the page itself.",
    ),
    (
        "canonical_target_redirect", _W, _TARGETS, "canonical",
        "Canonical target redirects",
        "A canonical pointing to a redirect sends mixed signals about which URL to index.",
        "Point the canonical to the final URL of the redirect.",
    ),
    (
        "canonical_target_noindex", _W, _TARGETS, "canonical",
        "Canonical target is noindex or blocked",
        "The page points to a URL that may not be indexed, so neither URL ends up in search results.",
        "Canonicalise to an indexable page, or lift the noindex or robots.txt block on the target.",
    ),
    (
        "canonical_chain", _W, _TARGETS, "canonical",
        "Canonical chain",
        "The canonical target declares yet another canonical; search engines may not follow the chain.",
        "Point every page's canonical straight at the final canonical URL.",
    ),
    # Title & meta description
    (
        "title_missing", _E, _PAGE, "titles",
        "Title missing",
        "The title is the main headline in search results and browser tabs; without one, search engines "
        "make one up.",
        "Add a unique, descriptive <title> to the page's head.",
    ),
    (
        "title_multiple", _W, _PAGE, "titles",
        "Several title elements",
        "With more than one title, which one is used is unpredictable.",
        "Keep a single <title> element in the head.",
    ),
    (
        "title_too_long", _N, _PAGE, "titles",
        "Title too long",
        "Long titles are cut off in search results, hiding the words that would earn the click.",
        "Shorten the title, putting the most important words first.",
    ),
    (
        "title_too_short", _N, _PAGE, "titles",
        "Title too short",
        "A very short title says little about the page and misses relevant search terms.",
        "Write a more descriptive title that names the page's topic.",
    ),
    (
        "title_duplicate", _W, _SITE, "titles",
        "Duplicate title",
        "Pages sharing a title compete with each other and are hard to tell apart in search results.",
        "Give each indexable page a unique title describing its own content.",
    ),
    (
        "meta_description_missing", _W, _PAGE, "titles",
        "Meta description missing",
        "Without a description, search engines build a snippet from page text, which often reads badly.",
        "Add a <meta name=\"description\"> that summarises the page in a sentence or two.",
    ),
    (
        "meta_description_too_long", _N, _PAGE, "titles",
        "Meta description too long",
        "Long descriptions are truncated in search results.",
        "Keep the description concise, with the key message first.",
    ),
    (
        "meta_description_too_short", _N, _PAGE, "titles",
        "Meta description too short",
        "A very short description gives searchers little reason to click and is often replaced.",
        "Expand the description into a useful summary of the page.",
    ),
    (
        "meta_description_duplicate", _W, _SITE, "titles",
        "Duplicate meta description",
        "Identical descriptions make different pages look the same in search results.",
        "Write a unique description for each indexable page.",
    ),
    (
        "meta_description_multiple", _W, _PAGE, "titles",
        "Several meta descriptions",
        "With more than one description meta, which one is used is unpredictable.",
        "Keep a single description meta in the head.",
    ),
    # Headings & content
    (
        "h1_missing", _W, _PAGE, "content",
        "H1 heading missing",
        "The main heading tells visitors and search engines what the page is about.",
        "Add one <h1> that states the page's topic.",
    ),
    (
        "h1_multiple", _N, _PAGE, "content",
        "Several H1 headings",
        "Several H1s blur the page's main topic and its outline for screen-reader users.",
        "Keep one H1 and demote the others to H2 or below.",
    ),
    (
        "h1_duplicate", _N, _SITE, "content",
        "Duplicate H1",
        "Pages with the same main heading look interchangeable to visitors and search engines.",
        "Give each indexable page its own H1.",
    ),
    (
        "heading_order_skip", _N, _PAGE, "content",
        "Heading level skipped",
        "Skipping levels (H2 to H4) breaks the document outline that assistive technology and search "
        "engines use.",
        "Nest headings one level at a time; style them with CSS instead of picking levels for looks.",
    ),
    (
        "thin_content", _W, _PAGE, "content",
        "Thin content",
        "Pages with very little text rarely answer a searcher's question and can be judged low quality.",
        "Add substantial, useful content, or merge the page into a richer one and redirect it.",
    ),
    (
        "duplicate_content_exact", _W, _SITE, "content",
        "Exact duplicate content",
        "Identical pages split links and rankings, and search engines pick one version on their own.",
        "Keep one version: redirect or canonicalise the copies to it.",
    ),
    (
        "duplicate_content_near", _N, _SITE, "content",
        "Near-duplicate content",
        "Pages that are almost the same compete with each other and add little value on their own.",
        "Differentiate the pages' content, or consolidate them with a canonical or redirect.",
    ),
    (
        "html_lang_missing", _N, _PAGE, "content",
        "Language not declared",
        "Without <html lang>, screen readers and search engines have to guess the page's language.",
        "Add a lang attribute to the html element, e.g. <html lang=\"en\">.",
    ),
    (
        "html_lang_invalid", _N, _PAGE, "content",
        "Invalid language code",
        "A malformed lang value is ignored by browsers, screen readers and search engines.",
        "Use a valid BCP 47 tag such as en, en-GB or pt-BR.",
    ),
    (
        "viewport_missing", _W, _PAGE, "content",
        "Mobile viewport missing",
        "Without width=device-width the page renders as a zoomed-out desktop page on phones and fails "
        "mobile-friendliness.",
        "Add <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">.",
    ),
    (
        "charset_or_doctype_missing", _N, _PAGE, "content",
        "Doctype or charset missing",
        "Without a doctype browsers use quirks mode; without a declared charset text may be garbled.",
        "Start the document with <!DOCTYPE html> and declare <meta charset=\"utf-8\"> (or a "
        "Content-Type charset).",
    ),
    # Links
    (
        "broken_internal_link", _E, _TARGETS, "links",
        "Broken internal link",
        "Links to failing pages frustrate visitors and waste crawl budget and link value.",
        "Update the link to a live URL, or restore or redirect the target.",
    ),
    (
        "internal_link_to_redirect", _N, _TARGETS, "links",
        "Internal link to a redirect",
        "Linking a redirecting URL adds a hop for every visitor and crawler.",
        "Change the link to point directly at the redirect's final URL.",
    ),
    (
        "broken_external_link", _N, _TARGETS, "links",
        "Broken external link",
        "Links to dead external pages hurt the visitor's experience and the page's perceived quality.",
        "Update the link to a working URL or remove it.",
    ),
    (
        "internal_nofollow_link", _N, _PAGE, "links",
        "Nofollow on an internal link",
        "Nofollow on your own links stops search engines from following them to your pages.",
        "Remove rel=\"nofollow\" from internal links.",
    ),
    (
        "orphan_page", _W, _GRAPH, "links",
        "Orphan page",
        "A page listed in the sitemap that no crawled page links to is hard to discover and gets no "
        "internal link value.",
        "Link to the page from relevant pages or navigation, or drop it from the sitemap if obsolete.",
    ),
    (
        "deep_page", _N, _GRAPH, "links",
        "Page deep in the site",
        "Pages many clicks from the start page are crawled less often and are seen as less important.",
        "Link the page from higher-level pages, categories or hubs to shorten its click path.",
    ),
    (
        "dead_end_page", _N, _PAGE, "links",
        "Page has no outgoing links",
        "A page with no links is a dead end for visitors and passes no link value on.",
        "Add links to related pages or to the main navigation.",
    ),
    (
        "links_to_http", _N, _PAGE, "security",
        "HTTPS page links to HTTP URLs",
        "Links to http:// URLs send visitors to unencrypted pages or through an extra redirect.",
        "Change the links to https:// where the target supports it.",
    ),
    (
        "non_descriptive_anchor", _N, _PAGE, "links",
        "Non-descriptive link text",
        "Anchor text like 'click here' or empty anchors tell neither users nor search engines where the "
        "link goes.",
        "Use link text that describes the target page.",
    ),
    (
        "uncrawlable_link", _N, _PAGE, "links",
        "Uncrawlable link",
        "Anchors that act as links (a script handler, role=\"link\", a router attribute) without an href, "
        "or with javascript: or a bare # as href, cannot be followed by crawlers. Anchors without an "
        "href that only name a place on the page (id, name) are jump targets, not links.",
        "Use real <a href> URLs for navigation; keep buttons for actions.",
    ),
    (
        "localhost_link", _W, _PAGE, "links",
        "Link to a local or private host",
        "Links to localhost or private addresses are broken for everyone outside your network and leak "
        "development setups.",
        "Replace them with the public URLs.",
    ),
    # HTTPS / security
    (
        "mixed_content", _W, _PAGE, "security",
        "Mixed content",
        "Subresources loaded over http:// on an https:// page are blocked or flagged by browsers and "
        "weaken the page's security.",
        "Load every script, style, image and font over https://.",
    ),
    # Sitemaps
    (
        "sitemap_url_noindex", _W, _SITEMAP, "sitemaps",
        "Sitemap lists a noindex URL",
        "Listing pages you ask not to index sends contradictory signals and wastes crawl budget.",
        "Remove noindex pages from the sitemap, or lift the noindex.",
    ),
    (
        "sitemap_url_non_200", _W, _SITEMAP, "sitemaps",
        "Sitemap lists a non-200 URL",
        "Sitemaps should list only final, live URLs; redirects and errors make search engines trust the "
        "sitemap less.",
        "List the final 200 URL instead, and remove URLs that no longer exist.",
    ),
    (
        "sitemap_url_non_canonical", _W, _SITEMAP, "sitemaps",
        "Sitemap lists a non-canonical URL",
        "A listed URL that canonicalises elsewhere contradicts the sitemap's claim that it should be "
        "indexed.",
        "List the canonical URL instead.",
    ),
    (
        "sitemap_url_blocked", _W, _SITEMAP, "sitemaps",
        "Sitemap lists a robots.txt-blocked URL",
        "Search engines cannot crawl a listed URL that robots.txt disallows.",
        "Remove the URL from the sitemap or allow it in robots.txt.",
    ),
    (
        "sitemap_missing", _N, _SITE, "sitemaps",
        "No sitemap found",
        "A sitemap helps search engines discover every page and notice updates quickly.",
        "Publish /sitemap.xml listing your indexable URLs and reference it from robots.txt.",
    ),
    (
        "sitemap_invalid", _E, _SITEMAP, "sitemaps",
        "Invalid sitemap",
        "A sitemap that cannot be parsed, or breaks the size limits, is ignored in whole or in part.",
        "Serve valid sitemap XML with a urlset or sitemapindex root; split files over 50,000 URLs or "
        "50 MB.",
    ),
    # hreflang
    (
        "hreflang_invalid_code", _W, _PAGE, "hreflang",
        "Invalid hreflang code",
        "Search engines ignore hreflang annotations with malformed language or region codes.",
        "Use an ISO 639-1 language with an optional ISO 3166-1 region (en, en-GB), or x-default.",
    ),
    (
        "hreflang_missing_return", _W, _TARGETS, "hreflang",
        "hreflang without a return link",
        "hreflang pairs are only trusted when both pages reference each other.",
        "Add the reciprocal hreflang annotation on the alternate page.",
    ),
    (
        "hreflang_missing_self", _N, _PAGE, "hreflang",
        "hreflang set does not include the page",
        "Each page in an hreflang set should list itself too, or the set may be ignored.",
        "Add an hreflang entry pointing to the page's own URL.",
    ),
    (
        "hreflang_missing_x_default", _N, _PAGE, "hreflang",
        "hreflang x-default missing",
        "Without x-default, searchers whose language matches none of the versions get an arbitrary one.",
        "Add an hreflang=\"x-default\" entry for the fallback page.",
    ),
    (
        "hreflang_target_invalid", _W, _TARGETS, "hreflang",
        "hreflang target not indexable",
        "Alternates that redirect, fail, are noindex or canonicalise elsewhere break the hreflang set.",
        "Point hreflang entries at the indexable, canonical 200 URL of each version.",
    ),
    # Images, structured data, social
    (
        "img_alt_missing", _W, _PAGE, "images",
        "Image without alt attribute",
        "Screen-reader users get no description and search engines lose context for the image.",
        "Add a descriptive alt text, or alt=\"\" for purely decorative images.",
    ),
    (
        "img_broken", _W, _TARGETS, "images",
        "Broken image",
        "A failing image shows a broken icon to visitors and cannot appear in image search.",
        "Fix the image URL or restore the file.",
    ),
    (
        "structured_data_invalid", _E, _PAGE, "structured_data",
        "Invalid structured data",
        "JSON-LD that does not parse, or lacks @context or @type, is ignored, so rich results are lost.",
        "Validate the JSON-LD and add @context and @type.",
    ),
    (
        "structured_data_missing", _N, _PAGE, "structured_data",
        "No structured data",
        "Structured data helps search engines understand the page and makes it eligible for rich "
        "results.",
        "Add JSON-LD for the page's type (Article, Product, Organization, BreadcrumbList…).",
    ),
    (
        "open_graph_missing", _N, _PAGE, "social",
        "Open Graph tags missing",
        "Without og:title, og:description and og:image, shared links show a poor or empty preview.",
        "Add the missing og:title, og:description and og:image meta properties.",
    ),
    # Extended
    (
        "url_uppercase", _N, _PAGE, "url",
        "URL contains uppercase letters",
        "URL paths are case-sensitive; mixed case invites duplicate URLs and broken hand-typed links.",
        "Use lowercase URLs and 301-redirect the mixed-case variants.",
    ),
    (
        "url_underscores", _N, _PAGE, "url",
        "URL contains underscores",
        "Search engines treat hyphens, not underscores, as word separators.",
        "Use hyphens between words in new URLs; redirect old ones if you change them.",
    ),
    (
        "url_whitespace", _N, _PAGE, "url",
        "URL contains whitespace",
        "Encoded spaces make URLs fragile to copy, share and link.",
        "Replace spaces with hyphens and redirect the old URL.",
    ),
    (
        "url_double_slash", _N, _PAGE, "url",
        "URL path contains a double slash",
        "A // in the path usually comes from a template bug and creates duplicate URLs.",
        "Fix the link-building code so paths contain single slashes, and redirect the variants.",
    ),
    (
        "url_non_ascii", _N, _PAGE, "url",
        "URL contains non-ASCII characters",
        "Non-ASCII characters get percent-encoded inconsistently, producing long and duplicate URLs.",
        "Prefer ASCII slugs, or always link the same percent-encoded form.",
    ),
    (
        "url_repeated_segment", _N, _PAGE, "url",
        "URL repeats a path segment",
        "Repeated segments (/blog/blog/) usually come from relative-link bugs that spawn endless URL "
        "spaces.",
        "Fix the relative links that produce the repetition and redirect the bad URLs.",
    ),
    (
        "too_many_links", _N, _PAGE, "links",
        "Too many links on the page",
        "Very many links dilute the value each one passes and make the page hard to use.",
        "Trim navigation and footer links to what visitors actually need.",
    ),
    (
        "img_too_large", _W, _TARGETS, "images",
        "Image file too large",
        "Heavy images slow the page down, especially on mobile connections.",
        "Compress the image, serve modern formats (WebP, AVIF) and size it for its display.",
    ),
    (
        "img_missing_dimensions", _N, _PAGE, "images",
        "Image without width and height",
        "Without dimensions the browser cannot reserve space, so the layout shifts as images load.",
        "Set width and height attributes (or a CSS aspect ratio) on the image.",
    ),
    (
        "hsts_missing", _N, _PAGE, "security",
        "HSTS header missing",
        "Without Strict-Transport-Security, a visitor's first request can be downgraded to plain HTTP.",
        "Send Strict-Transport-Security: max-age=31536000 (with includeSubDomains when ready) on HTTPS "
        "responses.",
    ),
    (
        "insecure_form", _W, _PAGE, "security",
        "Form posts over HTTP",
        "Data submitted to an http:// action travels unencrypted and browsers warn users.",
        "Point the form action at an https:// URL.",
    ),
    (
        "hreflang_relative_url", _N, _PAGE, "hreflang",
        "Relative hreflang URL",
        "hreflang alternates must be absolute URLs; relative ones may be ignored.",
        "Use absolute URLs with scheme and host in hreflang annotations.",
    ),
    (
        "hreflang_lang_mismatch", _N, _PAGE, "hreflang",
        "hreflang language differs from the page language",
        "The self-referencing hreflang declares one language while <html lang> says another, which "
        "confuses language targeting.",
        "Make the page's own hreflang entry and its lang attribute name the same language.",
    ),
    (
        "metas_in_body", _W, _PAGE, "indexability",
        "Head elements in the body",
        "Search engines stop reading the head at the first invalid element, so meta, link and title "
        "elements that end up in the body may be ignored.",
        "Move these elements into the head and remove invalid elements from the head that push them "
        "out.",
    ),
    (
        "dom_too_large", _N, _PAGE, "performance",
        "DOM too large",
        "A very large DOM uses more memory and makes rendering and interaction slower.",
        "Simplify the markup, paginate or lazy-render long lists, and remove hidden duplicates.",
    ),
    (
        "ai_crawler_blocked", _N, _SITE, "robots",
        "AI crawlers blocked",
        "robots.txt blocks well-known AI crawlers, so the site will not appear in AI assistants' answers "
        "that rely on them.",
        "Allow the AI crawlers you want to be visible to, if blocking them is not deliberate.",
    ),
    (
        "llms_txt_missing", _N, _SITE, "robots",
        "llms.txt missing",
        "An /llms.txt file gives AI tools a concise map of the site's most useful content.",
        "Publish /llms.txt summarising the site and linking its key pages in Markdown.",
    ),
    # Rendering (audits with `render`: docs/rendering.md): the raw page against its rendered DOM
    (
        "js_changed_title", _W, _PAGE, "rendering",
        "Title changed by JavaScript",
        "The raw HTML and the rendered page show different titles, so crawlers that do not render, and "
        "search engines before they render, see another title than visitors.",
        "Put the final title in the server's HTML, or render it on the server.",
    ),
    (
        "js_changed_meta_description", _N, _PAGE, "rendering",
        "Meta description changed by JavaScript",
        "The description in the raw HTML is not the one the rendered page ends with; snippets may use "
        "either.",
        "Serve the final meta description in the raw HTML.",
    ),
    (
        "js_changed_canonical", _W, _PAGE, "rendering",
        "Canonical changed by JavaScript",
        "A canonical rewritten by a script sends two signals: search engines may keep the raw one and "
        "ignore the rendered one.",
        "Declare one canonical in the raw HTML and stop scripts from adding or rewriting it.",
    ),
    (
        "js_changed_robots", _E, _PAGE, "rendering",
        "Robots directives changed by JavaScript",
        "A noindex or nofollow added or removed by a script is seen by some crawlers and not by others; a "
        "raw noindex keeps the page out of the index even when a script removes it.",
        "Serve the final robots meta tag in the raw HTML (or an X-Robots-Tag header), never from a script.",
    ),
    (
        "js_changed_hreflang", _W, _PAGE, "rendering",
        "Hreflang changed by JavaScript",
        "Language alternates that differ between the raw and the rendered page are read inconsistently "
        "by search engines.",
        "Declare the hreflang alternates in the raw HTML, a Link header or the sitemap.",
    ),
    (
        "js_changed_h1", _N, _PAGE, "rendering",
        "H1 changed by JavaScript",
        "The main heading in the raw HTML differs from the rendered one, so non-rendering crawlers read "
        "another topic for the page.",
        "Serve the final H1 in the raw HTML.",
    ),
    (
        "links_only_after_render", _W, _PAGE, "rendering",
        "Links only present after rendering",
        "Internal links that exist only in the rendered DOM are invisible to crawlers that do not run "
        "scripts and are found later by those that do.",
        "Render the navigation and content links as <a href> elements in the server's HTML.",
    ),
    (
        "content_only_after_render", _W, _PAGE, "rendering",
        "Main content only present after rendering",
        "Most of the page's text appears only once scripts ran; crawlers that do not render see a nearly "
        "empty page.",
        "Render the main content on the server (server-side rendering or pre-rendering).",
    ),
    (
        "render_failed", _E, _PAGE, "rendering",
        "Page could not be rendered",
        "The browser crashed or could not load the page, so what visitors see could not be audited.",
        "Open the page in a browser with its console open and fix what stops it from loading.",
    ),
    (
        "render_incomplete", _W, _PAGE, "rendering",
        "Rendering did not finish within its budget",
        "The page was still loading when its time, request or byte budget ran out; search engines stop "
        "rendering too, and may index an unfinished page.",
        "Make the page settle quickly: fewer and smaller requests, no endless polling or loading loops.",
    ),
    (
        "render_console_errors", _W, _PAGE, "rendering",
        "JavaScript errors while rendering",
        "Script errors can leave parts of the page unrendered for visitors and crawlers alike.",
        "Fix the errors the browser console shows for this page.",
    ),
    (
        "render_failed_requests", _W, _PAGE, "rendering",
        "Resources failed while rendering",
        "Scripts, styles or data the page needs answered with an error or not at all, so the rendered "
        "page may be incomplete.",
        "Fix or remove the failing resources listed.",
    ),
    (
        "render_requests_refused", _N, _PAGE, "rendering",
        "Requests refused while rendering",
        "The auditor did not make some requests the page asked for (third-party hosts, private addresses, "
        "paths robots.txt disallows), so the rendered page may lack what they would have brought.",
        "Check the listed requests: serve what the page needs from its own host and let robots.txt "
        "allow the resources rendering needs.",
    ),
)
# fmt: on

CATALOGUE: Final[Mapping[str, CheckSpec]] = MappingProxyType(
    {
        code: CheckSpec(code=code, severity=severity, scope=scope, title=title, why=why, fix=fix, group=group)
        for code, severity, scope, group, title, why, fix in _ROWS
    }
)


def spec(code: str) -> CheckSpec:
    """The catalogue entry of a check code. Raises NotFound for an unknown code."""
    try:
        return CATALOGUE[code]
    except KeyError:
        raise NotFound("check", code) from None
