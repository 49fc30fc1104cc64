"""What an audit covers (docs/audits.md): the pattern grammar, query handling, the rules' faults and the
request rules of list and sitemap audits, with properties over generated URLs."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.domain.account import plan_named
from siteaudit.domain.audit import AuditRequest, decide_audit_settings, listed_urls
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.scope import (
    MAX_LISTED_URLS,
    AuditScope,
    QueryParams,
    ScopeMode,
    ScopeRules,
    pattern_matches,
    with_query,
)
from siteaudit.domain.site import PlanLimitMaxPages, SiteNotVerified

ORIGIN = "https://shop.example"
segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=8)
paths = st.lists(segment, min_size=0, max_size=4).map(lambda parts: "/" + "/".join(parts))
names = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)
values = st.text(alphabet="abc123%+", min_size=0, max_size=5)
queries = st.lists(st.tuples(names, values), max_size=5)


def url_of(path: str, pairs: list[tuple[str, str]]) -> str:
    query = "&".join(f"{name}={value}" for name, value in pairs)
    return f"{ORIGIN}{path}" + (f"?{query}" if query else "")


@given(paths, queries)
def test_keep_leaves_every_url_as_it_is(path: str, pairs: list[tuple[str, str]]) -> None:
    url = url_of(path, pairs)
    assert with_query(url, QueryParams.KEEP) == url


@given(paths, queries)
def test_drop_removes_the_query_and_nothing_else(path: str, pairs: list[tuple[str, str]]) -> None:
    assert with_query(url_of(path, pairs), QueryParams.DROP) == f"{ORIGIN}{path}"


@given(paths, queries, st.lists(names, min_size=1, max_size=3))
def test_keep_listed_keeps_exactly_the_listed_parameters_in_their_order(
    path: str, pairs: list[tuple[str, str]], keep: list[str]
) -> None:
    kept = with_query(url_of(path, pairs), QueryParams.KEEP_LISTED, keep)
    assert kept == url_of(path, [(n, v) for n, v in pairs if n in keep])
    # Treating a treated URL again changes nothing.
    assert with_query(kept, QueryParams.KEEP_LISTED, keep) == kept


@given(paths, queries)
def test_a_prefix_pattern_keeps_what_starts_with_it(path: str, pairs: list[tuple[str, str]]) -> None:
    url = url_of(path, pairs)
    assert ScopeRules(include=(path,)).admits(url)
    assert not ScopeRules(exclude=(path,)).admits(url)
    assert ScopeRules(include=("/",)).admits(url)


@given(paths, segment)
def test_a_glob_matches_whole_path_and_query(path: str, suffix: str) -> None:
    url = f"{ORIGIN}{path}/{suffix}.pdf"
    assert pattern_matches("*.pdf", f"{path}/{suffix}.pdf")
    assert not ScopeRules(exclude=("*.pdf",)).admits(url)
    assert ScopeRules(exclude=("*.pdf",)).admits(url + "x")  # anchored at its end
    assert ScopeRules(include=("*.pdf",)).admits(url)


@given(paths, queries, st.lists(paths, max_size=3), st.lists(paths, max_size=3))
def test_an_exclude_always_wins_and_includes_narrow(
    path: str, pairs: list[tuple[str, str]], include: list[str], exclude: list[str]
) -> None:
    url = url_of(path, pairs)
    rules = ScopeRules(include=tuple(include), exclude=tuple(exclude))
    excluded = any(url[len(ORIGIN) :].startswith(p) for p in exclude)
    included = not include or any(url[len(ORIGIN) :].startswith(p) for p in include)
    assert rules.admits(url) is (included and not excluded)


def test_question_marks_and_brackets_in_a_glob_are_themselves() -> None:
    assert pattern_matches("/search?q=*", "/search?q=clocks")
    assert not pattern_matches("/search?q=*", "/searchXq=clocks")
    assert pattern_matches("/a[1]*", "/a[1]/b")


def test_the_patterns_judge_the_url_once_its_query_was_treated() -> None:
    rules = ScopeRules(exclude=("*?sort=*",), query_params=QueryParams.DROP)
    assert rules.applied(f"{ORIGIN}/shop?sort=price") == f"{ORIGIN}/shop"
    assert ScopeRules(exclude=("*?sort=*",)).applied(f"{ORIGIN}/shop?sort=price") is None


def test_faults_name_each_bad_input() -> None:
    rules = ScopeRules(
        include=("blog", "/ok", "/has space"),
        exclude=tuple(f"/{i}" for i in range(21)),
        query_params=QueryParams.DROP,
        keep_params=("id",),
    )
    assert set(rules.faults()) == {"include[0]", "include[2]", "exclude", "keep_params"}
    assert ScopeRules(query_params=QueryParams.KEEP_LISTED).faults() == {
        "keep_params": "query_params keep_listed needs the names of the parameters to keep"
    }
    assert set(ScopeRules(query_params=QueryParams.KEEP_LISTED, keep_params=("ok", "b@d")).faults()) == {
        "keep_params[1]"
    }


@given(st.lists(paths, max_size=3), st.sampled_from(list(QueryParams)), st.booleans())
def test_the_stored_form_reads_back(include: list[str], mode: QueryParams, sitemap_only: bool) -> None:
    keep = ("id",) if mode is QueryParams.KEEP_LISTED else ()
    scope = AuditScope(
        sitemap_only=sitemap_only,
        rules=ScopeRules(include=tuple(include), query_params=mode, keep_params=keep),
    )
    assert AuditScope.from_json(scope.as_json()) == scope
    assert AuditScope.from_json(AuditScope(urls=(f"{ORIGIN}/a",)).as_json()).mode is ScopeMode.LIST
    assert AuditScope().as_json() is None


@given(st.lists(paths, min_size=1, max_size=30))
def test_a_list_keeps_each_url_once_in_its_first_place(listed: list[str]) -> None:
    urls, bad = listed_urls([f"{ORIGIN}{p}#frag" for p in listed])
    assert bad == {}
    assert urls == tuple(dict.fromkeys(f"{ORIGIN}{p}" for p in listed))


def test_a_list_names_each_url_off_its_origin_and_each_bad_one() -> None:
    _, bad = listed_urls([f"{ORIGIN}/", "http://shop.example/a", "ftp://x/", f"{ORIGIN}/b"])
    assert set(bad) == {"urls[1]", "urls[2]"}
    _, bad = listed_urls([f"{ORIGIN}/"], origin="https://other.example")
    assert set(bad) == {"urls[0]"}
    assert listed_urls([]) == ((), {"urls": "must list at least one URL"})
    assert set(listed_urls([f"{ORIGIN}/{i}" for i in range(MAX_LISTED_URLS + 1)])[1]) == {"urls"}


def decide(request: AuditRequest, plan: str = "scale", verified: bool = False) -> int:
    settings = decide_audit_settings(request, plan=plan_named(plan), site=None, origin_verified=verified)
    return settings.max_pages


def test_a_list_reserves_a_page_a_distinct_url_within_max_pages_and_the_plan() -> None:
    urls = tuple(f"{ORIGIN}/p/{i % 40}" for i in range(50))
    assert decide(AuditRequest(urls=urls)) == 40
    assert decide(AuditRequest(urls=urls, max_pages=100)) == 40
    with pytest.raises(ValidationFailed) as refused:
        decide(AuditRequest(urls=urls, max_pages=10))
    assert set(refused.value.fields) == {"urls"}
    many = tuple(f"{ORIGIN}/p/{i}" for i in range(MAX_LISTED_URLS))
    with pytest.raises(PlanLimitMaxPages):
        decide(AuditRequest(urls=many), plan="free")
    with pytest.raises(SiteNotVerified):
        decide(AuditRequest(urls=many))
    assert decide(AuditRequest(urls=many), verified=True) == MAX_LISTED_URLS


@pytest.mark.parametrize(
    ("request_", "fields"),
    [
        (AuditRequest(url=f"{ORIGIN}/", urls=(f"{ORIGIN}/a",)), {"url"}),
        (AuditRequest(urls=(f"{ORIGIN}/a",), sitemap_only=True), {"sitemap_only"}),
        (
            AuditRequest(urls=(f"{ORIGIN}/a",), include=("/a",), query_params=QueryParams.DROP),
            {"include", "query_params"},
        ),
        (AuditRequest(url=f"{ORIGIN}/", keep_params=("id",)), {"keep_params"}),
        (AuditRequest(url=f"{ORIGIN}/", exclude=("nope",)), {"exclude[0]"}),
    ],
)
def test_what_a_scope_refuses_is_named(request_: AuditRequest, fields: set[str]) -> None:
    with pytest.raises(ValidationFailed) as refused:
        decide(request_)
    assert set(refused.value.fields) == fields
