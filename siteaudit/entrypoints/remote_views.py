# Over 500 lines: one declaration per remote command (its lines, tables and next step), so none is forgotten.
"""What each remote command prints for people: a few lines, tables of its rows (the important columns),
the total and the command of the next page, and the next step as a `siteaudit ...` command to run.

The answer is the tool's answer (the REST JSON, as `--json` prints it); `--csv` prints the rows of `View.rows`
flattened (`siteaudit.adapters.text.csv_records`). A test runs every command and checks that no agent tool
name is left in what people read (tests/unit/remote/test_remote_tables.py).
"""

import shlex
from collections.abc import Callable, Mapping
from typing import Any, Final

from attrs import frozen

from siteaudit.adapters.text import LIST_SEPARATOR, flatten

Answer = dict[str, Any]
Rows = Callable[[Answer], list[dict[str, Any]]]
Column = tuple[str, str | Callable[[dict[str, Any]], Any]]  # header, and a dotted path or a function


@frozen
class Invocation:
    """The command as it was run: its name and arguments, to name the next page or the next step."""

    command: str
    positional: tuple[str, ...]  # the names of its positional arguments, in order
    given: Mapping[str, Any]  # the arguments given (None left out)

    def again(self, **changed: Any) -> str:
        """This command with `changed` arguments (the next page, say), as a command to run."""
        args = {**self.given, **changed}
        words = [str(_word(args[name])) for name in self.positional if name in args]
        for name, value in args.items():
            if name in self.positional or value is None:
                continue
            flag = "--" + name.replace("_", "-")
            if isinstance(value, bool):
                words.append(flag if value else f"--no-{name.replace('_', '-')}")
            elif isinstance(value, list | tuple):
                words.extend(f"{flag} {_word(v)}" for v in value)
            else:
                words.append(f"{flag} {_word(value)}")
        return run(self.command, *words)


def _word(value: Any) -> str:
    """A shell word: quoted when it holds anything but plain URL and name characters."""
    return shlex.quote(str(value))


def run(command: str, *words: Any) -> str:
    """`siteaudit command words...` as a command to run, between backticks."""
    return "`" + " ".join(["siteaudit", command.replace("_", "-"), *(str(w) for w in words)]) + "`"


@frozen
class Table:
    title: str
    rows: Rows
    columns: tuple[Column, ...]


@frozen
class View:
    """How a command's answer is shown: `lines` first, then `tables` (an empty one is left out), then the
    next page of a paginated answer, then `next` (the commands to run next). `rows` is what `--csv`
    prints (the first table's rows unless given; the answer as one row when it has no table)."""

    lines: Callable[[Answer, Invocation], str]
    tables: tuple[Table, ...] = ()
    next: Callable[[Answer, Invocation], str] | None = None
    rows: Rows | None = None
    also: str = ""  # a tool whose answer (for the answer's site `id`) is shown too when not yet verified

    def csv_rows(self, answer: Answer) -> list[dict[str, Any]]:
        if self.rows is not None:
            return self.rows(answer)
        if self.tables:
            return self.tables[0].rows(answer)
        return [answer]


def shown(value: Any) -> str:
    """A value as a table cell: nothing for None, yes/no, a number without needless decimals, a list or
    an object as text (never JSON)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={shown(v)}" for k, v in flatten(value).items() if v not in (None, ""))
    if isinstance(value, list | tuple):
        return LIST_SEPARATOR.join(shown(v) for v in value)
    return str(value)


def cell(row: Mapping[str, Any], column: Column) -> str:
    source = column[1]
    if callable(source):
        return shown(source(dict(row)))
    value: Any = row
    for part in source.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return shown(value)


def rows_at(path: str) -> Rows:
    """The list at a dotted `path` of the answer (none when it is null)."""

    def rows(answer: Answer) -> list[dict[str, Any]]:
        value: Any = answer
        for part in path.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        return list(value or [])

    return rows


def paging(noun: str) -> Callable[[Answer, Invocation], str]:
    """`N of TOTAL noun (page P of L)`, from a list answer's `meta`."""

    def lines(answer: Answer, invocation: Invocation) -> str:
        meta = answer["meta"]
        return (
            f"{len(answer['data'])} of {meta['total']} {noun} (page {meta['current_page']} of "
            f"{meta['last_page']})."
        )

    return lines


def next_page(answer: Answer, invocation: Invocation) -> str:
    """The command of the next page of a paginated answer (`meta` of REST lists, or `page`, `per_page`,
    `total` of the lists inside an answer), or nothing on the last page."""
    meta = answer.get("meta")
    if isinstance(meta, Mapping):
        page, last = int(meta["current_page"]), int(meta["last_page"])
    else:
        page = int(answer["page"])
        last = max(1, -(-int(answer["total"]) // int(answer["per_page"])))
    return f"Next page: {invocation.again(page=page + 1)}" if page < last else ""


def _demo(answer: Answer) -> str:
    return (
        " DEMO DATA (no console connected: generated locally, not the engine's figures)."
        if answer.get("demo")
        else ""
    )


# --- account and audits ------------------------------------------------------------------------------


def _audit_state(a: Answer, inv: Invocation) -> str:
    status, crawl_id = a["status"], a["crawl_id"]
    where = f" of {a['site_url']}" if a.get("site_url") else ""
    progress = f"{a['pages_crawled']} of at most {a['max_pages']} pages"
    rate = f", {a['pages_per_minute']:g} pages/min" if a.get("pages_per_minute") else ""
    if status in ("failed", "cancelled"):
        return f"Audit {crawl_id}{where} ended {status}: {a['failure_reason']} ({progress})."
    if status == "done":
        return f"Audit {crawl_id}{where} is done: {a['pages_crawled']} pages in {a['duration_s']:g} s."
    return f"Audit {crawl_id}{where} is {status}: {progress}{rate}."


def _audit_next(a: Answer, inv: Invocation) -> str:
    crawl_id = a["crawl_id"]
    if a["status"] == "done":
        return f"Next: {run('get-report', crawl_id)} for its findings, {run('get-fix-prompt', crawl_id)} for fixes."
    if a["status"] in ("failed", "cancelled"):
        return f"Next: {run('list-audits')} for the team's audits."
    return f"Next: {run('wait-for-audit', crawl_id)} waits until it ends."


def _started(a: Answer, inv: Invocation) -> str:
    return (
        f"Audit {a['crawl_id']} queued; {a['estimated_credits']:g} credits reserved (the unused part is "
        f"refunded), {a['max_rps']:g} requests/s."
    )


def _started_next(a: Answer, inv: Invocation) -> str:
    return (
        f"Next: {run('wait-for-audit', a['crawl_id'])} waits for it, then {run('get-report', a['crawl_id'])}."
    )


AUDIT_COLUMNS: Final[tuple[Column, ...]] = (
    ("crawl_id", "crawl_id"),
    ("site", "site_url"),
    ("status", "status"),
    ("health", "health_score"),
    ("pages", lambda r: f"{r['pages_crawled']}/{r['max_pages']}"),
    ("trigger", "trigger"),
    ("created", "created_at"),
    ("finished", "finished_at"),
)


def _list_audits_next(a: Answer, inv: Invocation) -> str:
    if not a["data"]:
        return f"Next: {run('audit', 'URL')} audits a site."
    return f"Next: {run('get-report', a['data'][0]['crawl_id'])} (any crawl_id) for an audit's findings."


def _report_lines(a: Answer, inv: Invocation) -> str:
    counts, totals = a["issue_counts"], a["totals"]
    score = "none (no HTML page was audited)" if a["health_score"] is None else f"{a['health_score']}/100"
    return (
        f"Audit {a['crawl_id']}: health score {score}{' (partial)' if a['partial'] else ''}; "
        f"{totals['pages']} pages: {totals['ok']} ok, {totals['redirects']} redirects, {totals['broken']} "
        f"broken, {totals['fetch_errors']} fetch errors, {totals['blocked']} blocked.\n"
        f"Issues: {counts['error']} errors, {counts['warning']} warnings, {counts['notice']} notices."
    )


def _report_next(a: Answer, inv: Invocation) -> str:
    crawl_id = a["crawl_id"]
    example = a["issues"][0]["check_code"] if a["issues"] else "CHECK"
    return (
        f"Next: {run('list-issues', crawl_id, '--check', example)} lists a check's URLs; "
        f"{run('get-fix-prompt', crawl_id)} writes the fixes for a coding agent."
    )


def _template_issues(a: Answer) -> list[dict[str, Any]]:
    return [
        {"template": group["template"], "template_pages": group["pages"], **issue}
        for group in a["templates"]
        for issue in group["issues"]
    ]


def _diff_lines(a: Answer, inv: Invocation) -> str:
    diff = a["diff"]
    if diff is None:
        return f"Audit {a['crawl_id']} is the site's first audit: nothing to compare."
    delta = "unknown" if diff["health_delta"] is None else f"{diff['health_delta']:+d}"
    return (
        f"Audit {a['crawl_id']} against audit {diff['previous_crawl_id']}: health {delta}; {diff['new']} new "
        f"issues ({diff['new_errors']} errors), {diff['fixed']} fixed ({diff['fixed_errors']} errors)."
    )


def _crawl_next(command: str, what: str) -> Callable[[Answer, Invocation], str]:
    def next_step(a: Answer, inv: Invocation) -> str:
        return f"Next: {run(command, inv.given['crawl_id'])} {what}."

    return next_step


# --- sites -------------------------------------------------------------------------------------------


def _site_line(site: Answer) -> str:
    state = "verified" if site["verified"] else "not verified"
    return f"Site {site['id']} {site['url']} ({state}, monitoring {site['monitoring']})"


def _site_next(a: Answer, inv: Invocation) -> str:
    site_id = a["id"]
    if not a["verified"]:
        return (
            f"Next: publish one of the proofs above, then run {run('verify-site', site_id)}; "
            f"{run('start-site-audit', site_id)} audits it (500 pages at most until it is verified)."
        )
    return f"Next: {run('start-site-audit', site_id)} audits it; {run('list-site-tasks', site_id)} lists its fix tasks."


def _site_detail(a: Answer, inv: Invocation) -> str:
    latest = a["latest_crawl"]
    audit = (
        "no audit yet"
        if latest is None
        else f"latest audit {latest['crawl_id']} {latest['status']}, health {shown(latest['health_score'])}"
    )
    trend = ", ".join(shown(x) for x in a["trend"]) or "none yet"
    return (
        f"{_site_line(a)}: {audit}; health trend {trend}.\n"
        f"Audits: {a['max_pages']} pages at most, {a['max_rps']:g} requests/s; alert mail "
        f"{'on' if a['alert_email'] else 'off'}; next scheduled audit {shown(a['next_crawl_at']) or 'none'}."
    )


def _registered(a: Answer, inv: Invocation) -> str:
    return f"Registered {_site_line(a)}.\nIts ownership token: {a['verify_token']}"


def _methods(a: Answer) -> list[dict[str, Any]]:
    """The ownership proofs to publish, one row each: the method (for `verify-site --method`), where and
    what to publish."""
    m = a["methods"]
    rows = [
        {
            "method": "dns",
            "publish": "a DNS TXT record",
            "where": m["dns"]["name"],
            "value": m["dns"]["value"],
        },
        {
            "method": "meta",
            "publish": "a tag in <head> of",
            "where": m["meta"]["url"],
            "value": m["meta"]["tag"],
        },
        {
            "method": "file",
            "publish": "a text/plain file",
            "where": m["file"]["url"],
            "value": m["file"]["body"].strip(),
        },
    ]
    console, cdn = m["gsc"], m["cloudflare"]
    rows.append(
        {
            "method": "gsc",
            "publish": "a search console property",
            "where": console["property"] or "none connected (the app connects one)",
            "value": "",
        }
    )
    rows.append(
        {
            "method": "cloudflare",
            "publish": "a Cloudflare zone",
            "where": cdn["zone"] or "none connected (the app connects one)",
            "value": "",
        }
    )
    return rows


METHOD_COLUMNS: Final[tuple[Column, ...]] = (
    ("method", "method"),
    ("publish", "publish"),
    ("where", "where"),
    ("value", "value"),
)
METHODS: Final = Table("Ownership proofs: publish one", _methods, METHOD_COLUMNS)


def _verification(a: Answer, inv: Invocation) -> str:
    if a["verified"]:
        return f"Site {inv.given['site_id']} is verified (via {shown(a['via']) or 'support'})."
    lost = f" (its proof was lost {a['lost_at']})" if a["lost_at"] else ""
    return f"Site {inv.given['site_id']} is not verified{lost}."


def _verification_next(a: Answer, inv: Invocation) -> str:
    site_id = inv.given["site_id"]
    if a["verified"]:
        return f"Next: {run('start-site-audit', site_id)} audits it."
    return (
        f"Next: once one is published, {run('verify-site', site_id)} checks it (or "
        f"{run('verify-site', site_id, '--method', 'dns')} for one method)."
    )


# --- search console, IndexNow, billing ------------------------------------------------------------------


def _console_summary(a: Answer, inv: Invocation) -> str:
    h, f = a["headline"], a["funnel"]
    return (
        f"Site {a['site_id']}: {h['clicks_28d']} clicks and {h['impressions_28d']} impressions in 28 days; "
        f"{f['indexed']} of {f['inspected']} inspected pages indexed ({f['found']} found, "
        f"{f['in_sitemap']} in sitemaps); sync {a['sync']['status']}.{_demo(a)}"
    )


def _site_arg(inv: Invocation) -> Any:
    return inv.given["site_id"]


def _not_indexed(a: Answer, inv: Invocation) -> str:
    if a["urls"] is not None:
        return f"{len(a['urls'])} of {a['total']} URLs of this group (page {a['page']}).{_demo(a)}"
    return f"{len(a['groups'])} groups of pages not indexed, by reason and URL template.{_demo(a)}"


def _not_indexed_next(a: Answer, inv: Invocation) -> str:
    site_id = _site_arg(inv)
    if a["urls"] is not None:
        page = next_page(a, inv)
        return "\n".join(
            x for x in (page, f"Next: {run('get-console-url', site_id, 'URL')} for one URL.") if x
        )
    if not a["groups"]:
        return ""
    g = a["groups"][0]
    return f"Next: {inv.again(reason=g['reason'], template=g['template'])} lists a group's URLs."


def _console_url(a: Answer, inv: Invocation) -> str:
    console, crawl, search = a["gsc"], a["crawl"], a["search"]
    state = "not inspected yet" if console is None else f"{console['coverage_state']} ({console['verdict']})"
    seen = (
        "not in the latest audit"
        if crawl is None
        else f"status {shown(crawl['status_code'])}, template {crawl['template']}, title {shown(crawl['title'])!r}"
    )
    clicks = (
        ""
        if search is None
        else f"; {search['clicks_28d']} clicks, {search['impressions_28d']} impressions in 28 days"
    )
    return f"{a['url']}: {state}; audit: {seen}{clicks}.{_demo(a)}"


def _indexnow(a: Answer, inv: Invocation) -> str:
    key = "verified" if a["key_verified"] else "not verified"
    lines = [
        f"IndexNow key {a['key']} ({a['key_source']}), {key}; auto-submit {'on' if a['auto'] else 'off'}; "
        f"{a['today']['used']} of {a['today']['limit']} URLs submitted today.",
    ]
    if not a["key_verified"]:
        lines.append(f"Publish {a['key_file_url']} (text/plain) containing exactly: {a['key_file_content']}")
    detection = a.get("detection")
    if detection is not None and detection["status"] == "found":
        lines.append(f"An existing key is served at {detection['key_file_url']}: {detection['key']}.")
    elif detection is not None and detection["status"] == "managed":
        lines.append(f"The site's platform ({detection['platform']}) submits to IndexNow for it.")
    if "result" in a:
        reason = "" if a["result"] == "verified" else f" ({a['reason']}: {shown(a.get('detail'))})"
        lines.append(f"Key file check: {a['result']}{reason}.")
    return "\n".join(lines)


def _indexnow_next(a: Answer, inv: Invocation) -> str:
    site_id = _site_arg(inv)
    detection = a.get("detection")
    if detection is not None and detection["status"] == "found":
        return f"Next: {run('set-indexnow-key', site_id, detection['key'])} uses the existing key."
    if a["key_verified"]:
        return f"Next: {run('submit-to-indexnow', site_id, 'URL...')} notifies the engines of changed pages."
    return f"Next: once the key file is published, {run('check-indexnow-key', site_id)}."


def _link(a: Answer, inv: Invocation) -> str:
    return f"Open this link in a browser (nothing is charged until you pay there): {a['url']}"


# --- fix tasks, rechecks, fix impact ---------------------------------------------------------------------

TASK_COLUMNS: Final[tuple[Column, ...]] = (
    ("task_key", "id"),
    ("task", "title"),
    ("template", "template"),
    ("severity", "severity"),
    ("pages", "pages"),
    ("clicks 28d", "clicks_28d"),
    ("impact", "impact"),
    ("status", "status"),
)


def _site_tasks(a: Answer, inv: Invocation) -> str:
    if a["crawl_id"] is None:
        return f"Site {a['site_id']} has no full audit yet."
    return f"Site {a['site_id']}: {a['open_total']} open of {a['total']} tasks from audit {a['crawl_id']}, by impact."


def _site_tasks_next(a: Answer, inv: Invocation) -> str:
    site_id = a["site_id"]
    if a["crawl_id"] is None:
        return f"Next: {run('start-site-audit', site_id)}, then {run('list-site-tasks', site_id)}."
    if not a["tasks"]:
        return ""
    key = a["tasks"][0]["id"]
    return (
        f"Next: {run('get-task', site_id, key)} (any task_key) for its fix and URLs; after deploying the fix, "
        f"{run('request-recheck', site_id, '--task-key', key)}."
    )


def _team_tasks_next(a: Answer, inv: Invocation) -> str:
    if not a["tasks"]:
        return f"Next: {run('list-sites')}, then {run('start-site-audit', 'SITE_ID')}."
    t = a["tasks"][0]
    return f"Next: {run('get-task', t['site_id'], t['id'])} (a row's site and task_key) for its fix and URLs."


def _task(a: Answer, inv: Invocation) -> str:
    t, urls = a["task"], a["urls"]
    return (
        f"{t['title']} ({t['code']}, {t['severity']}, {t['status']}): {t['pages']} pages of template "
        f"{t['template'] or '(none)'}; impact {t['impact']}.\nWhy: {t['why']}\nFix: {t['fix']}\n"
        f"Done when: {t['acceptance']['text']}\n"
        f"{len(urls['data'])} of {urls['total']} URLs (page {urls['page']})."
    )


def _task_next(a: Answer, inv: Invocation) -> str:
    page = next_page(a["urls"], inv)
    t = a["task"]
    step = (
        f"Next: after deploying the fix, {run('request-recheck', inv.given['site_id'], '--task-key', t['id'])}."
        if t["recheckable"]
        else f"This check is not rechecked by URL: the next {run('start-site-audit', inv.given['site_id'])} decides it."
    )
    return "\n".join(x for x in (page, step) if x)


def _recheck_started(a: Answer, inv: Invocation) -> str:
    return (
        f"Recheck {a['recheck_id']} {a['status']}: {a['urls_total']} URLs, {a['estimated_credits']:g} "
        f"credits reserved{' (a sample of the task URLs)' if a['sampled'] else ''}; "
        f"{len(a['tasks'])} tasks verifying."
    )


RECHECK_ENDED: Final = ("done", "failed", "cancelled")


def _recheck(a: Answer, inv: Invocation) -> str:
    status = a["status"]
    fetched = f"{a['pages_crawled']} of {a['urls_total']} URLs fetched"
    if status not in RECHECK_ENDED:
        return f"Recheck {a['recheck_id']} is {status}: {fetched}."
    failure = f" ({a['failure_reason']})" if a["failure_reason"] else ""
    return f"Recheck {a['recheck_id']} ended {status}{failure}: {fetched}."


def _recheck_next(a: Answer, inv: Invocation) -> str:
    if a["status"] not in RECHECK_ENDED:
        return f"Next: {run('wait-for-recheck', a['recheck_id'])} waits until it ends."
    return f"Next: {run('list-site-tasks', a['site_id'])} shows the tasks' new status."


def _impact(whose: Callable[[Answer], str]) -> Callable[[Answer, Invocation], str]:
    def lines(a: Answer, inv: Invocation) -> str:
        return (
            f"{whose(a)}: {a['measured_events']} measured fixes, total delta_28d {a['total_delta_28d']:+d} "
            f"clicks.{_demo(a)} Figures are estimates, not adjusted for season."
        )

    return lines


IMPACT_COLUMNS: Final[tuple[Column, ...]] = (
    ("site", "site_id"),
    ("check", "code"),
    ("template", "template"),
    ("status", "status"),
    ("verified", "verified_at"),
    ("baseline", "baseline_clicks_28d"),
    ("d7", "d7"),
    ("d14", "d14"),
    ("d28", "d28"),
    ("delta 28d", "delta_28d"),
)


def _fixed_events(a: Answer) -> list[dict[str, Any]]:
    return list(a["events"])


# --- the declarations --------------------------------------------------------------------------------


def _access(a: Answer) -> str:
    if not a["kinds"]:
        return f"Site {a['site_id']}: no staging access set; audits reach {a['sent_to']} without credentials."
    return (
        f"Site {a['site_id']}: staging access set ({', '.join(a['kinds'])}; {a['headers']} headers, "
        f"{a['cookies']} cookies) at {a['updated_at']}, sent only to {a['sent_to']}. The values are never "
        f"shown: replace or remove them with PUT or DELETE /v1/sites/{a['site_id']}/access."
    )


VIEWS: Final[Mapping[str, View]] = {
    "ping": View(
        lambda a, inv: f"The key works (user {a['user_id']}).",
        next=lambda a, inv: f"Next: {run('get-account')} shows your credits.",
    ),
    "get_account": View(
        lambda a, inv: (
            f"Balance {a['balance']:g} credits (plain-URL audits); the owner of team {a['team_id']} has "
            f"{a['team_credits']:g} (site audits, rechecks); {a['crawls_total']} audits started, "
            f"{a['credits_spent_30d']:g} credits spent in 30 days. Key {a['api_key_prefix']}."
        ),
        next=lambda a, inv: (
            f"Next: {run('audit', 'URL')} audits a site; {run('list-audits')} lists the audits."
        ),
    ),
    "start_audit": View(_started, next=_started_next),
    "list_audits": View(
        paging("audits"),
        tables=(Table("Audits, newest first", rows_at("data"), AUDIT_COLUMNS),),
        next=_list_audits_next,
    ),
    "get_audit": View(_audit_state, next=_audit_next),
    "wait_for_audit": View(_audit_state, next=_audit_next),
    "cancel_audit": View(
        lambda a, inv: (
            f"Audit {inv.given['crawl_id']} is cancelled; the credits of pages not crawled are refunded."
        ),
        next=lambda a, inv: f"Next: {run('list-audits')}.",
    ),
    "get_report": View(
        _report_lines,
        tables=(
            Table(
                "Failing checks",
                rows_at("issues"),
                (("check", "check_code"), ("severity", "severity"), ("issues", "count"), ("pages", "pages")),
            ),
        ),
        next=_report_next,
        rows=rows_at("issues"),
    ),
    "list_issues": View(
        paging("issues"),
        tables=(
            Table(
                "Issues",
                rows_at("data"),
                (
                    ("check", "check_code"),
                    ("severity", "severity"),
                    ("url", "url"),
                    ("template", "template"),
                    ("details", "details"),
                ),
            ),
        ),
        next=_crawl_next("get-fix-prompt", "writes the fixes for a coding agent"),
    ),
    "list_pages": View(
        paging("pages"),
        tables=(
            Table(
                "Pages",
                rows_at("data"),
                (
                    ("url", "url"),
                    ("status", "status_code"),
                    ("title", "title"),
                    ("words", "word_count"),
                    ("depth", "depth"),
                    ("not fetched", lambda r: r["fetch_error"] or r["blocked_by"] or r["excluded_by"]),
                ),
            ),
        ),
        next=_crawl_next("list-issues", "lists the issues found on them"),
    ),
    "get_templates": View(
        lambda a, inv: f"Audit {a['crawl_id']}: {len(a['templates'])} URL templates with issues.",
        tables=(
            Table(
                "Issues by URL template",
                _template_issues,
                (
                    ("template", "template"),
                    ("check", "check_code"),
                    ("severity", "severity"),
                    ("pages", lambda r: f"{r['pages']}/{r['template_pages']}"),
                    ("template-wide", "template_wide"),
                ),
            ),
        ),
        next=lambda a, inv: (
            f"Next: {run('list-issues', a['crawl_id'], '--template', 'TEMPLATE')} lists a template's URLs."
        ),
    ),
    "get_diff": View(
        _diff_lines,
        tables=(
            Table(
                "New issues (first ones)",
                rows_at("diff.new_samples"),
                (("check", "check_code"), ("severity", "severity"), ("url", "url")),
            ),
        ),
        next=_crawl_next("get-report", "shows the whole report"),
    ),
    "get_fix_prompt": View(
        lambda a, inv: (
            f"Fix prompt for audit {a['crawl_id']} ({len(a['prompt'])} characters):\n\n{a['prompt']}"
        ),
    ),
    "list_sites": View(
        lambda a, inv: f"{len(a['data'])} registered sites.",
        tables=(
            Table(
                "Registered sites",
                rows_at("data"),
                (
                    ("id", "id"),
                    ("url", "url"),
                    ("verified", "verified"),
                    ("via", "verified_via"),
                    ("monitoring", "monitoring"),
                    ("next audit", "next_crawl_at"),
                    ("max pages", "max_pages"),
                    ("max rps", "max_rps"),
                ),
            ),
        ),
        next=lambda a, inv: (
            f"Next: {run('get-site', a['data'][0]['id'])} (any id) for a site."
            if a["data"]
            else f"Next: {run('register-site', 'URL')} registers one."
        ),
    ),
    "register_site": View(_registered, next=_site_next, also="get_site_verification"),
    "get_site": View(_site_detail, next=_site_next, also="get_site_verification"),
    "update_site": View(lambda a, inv: f"Updated {_site_line(a)}.", next=_site_next),
    "delete_site": View(
        lambda a, inv: f"Site {a['site_id']} is deleted; its audits are kept.",
        next=lambda a, inv: f"Next: {run('list-sites')}.",
    ),
    "get_site_verification": View(
        _verification,
        tables=(METHODS,),
        next=_verification_next,
    ),
    "verify_site": View(
        lambda a, inv: f"Verified {_site_line(a)} via {shown(a['verified_via'])}.",
        tables=(
            Table(
                "Methods checked",
                rows_at("checked"),
                (("method", "method"), ("result", "result"), ("detail", "detail")),
            ),
        ),
        next=lambda a, inv: f"Next: {run('start-site-audit', a['id'])} audits it.",
        rows=lambda a: [a],
    ),
    "start_site_audit": View(_started, next=_started_next),
    "get_console_summary": View(
        _console_summary,
        tables=(
            Table(
                "By URL template",
                rows_at("templates"),
                (
                    ("template", "template"),
                    ("pages", "pages"),
                    ("inspected", "inspected"),
                    ("indexed", "indexed"),
                    ("not indexed", "not_indexed"),
                    ("clicks 28d", "clicks_28d"),
                    ("impressions 28d", "impressions_28d"),
                ),
            ),
        ),
        next=lambda a, inv: (
            f"Next: {run('list-not-indexed', a['site_id'])} for why pages are not indexed, "
            f"{run('get-index-triage', a['site_id'])} for what to do about them."
        ),
    ),
    "list_not_indexed": View(
        _not_indexed,
        tables=(
            Table(
                "Not indexed, by reason and template",
                rows_at("groups"),
                (
                    ("reason", "reason"),
                    ("template", "template"),
                    ("pages", "pages"),
                    ("diagnosis", "diagnosis"),
                    ("fix", "fix"),
                ),
            ),
            Table("URLs", rows_at("urls"), (("url", "url"), ("coverage", "coverage_state"))),
        ),
        next=_not_indexed_next,
        rows=lambda a: list(a["urls"] if a["urls"] is not None else a["groups"]),
    ),
    "get_console_url": View(
        _console_url,
        tables=(
            Table(
                "Queries (28 days)",
                rows_at("search.queries"),
                (
                    ("query", "query"),
                    ("clicks", "clicks"),
                    ("impressions", "impressions"),
                    ("position", "position"),
                ),
            ),
        ),
        next=lambda a, inv: f"Next: {run('inspect-urls', a['site_id'], a['url'])} inspects it again now.",
        rows=lambda a: [a],
    ),
    "get_console_opportunities": View(
        lambda a, inv: (
            "Search opportunities: " + ", ".join(f"{k} {v}" for k, v in a["counts"].items()) + f".{_demo(a)}"
        ),
        tables=tuple(
            Table(
                title,
                rows_at(kind),
                (
                    ("url", "url"),
                    ("template", "template"),
                    ("clicks 28d", "clicks_28d"),
                    ("impressions 28d", "impressions_28d"),
                    ("ctr", "ctr"),
                    ("position", "position"),
                ),
            )
            for kind, title in (
                ("low_ctr", "Low click-through"),
                ("striking_distance", "Striking distance (just off the first page)"),
                ("canonical_mismatch", "The engine chose another canonical"),
            )
        ),
        rows=lambda a: [
            {"kind": kind, **row}
            for kind in ("low_ctr", "striking_distance", "canonical_mismatch")
            for row in a[kind]
        ],
        next=lambda a, inv: f"Next: {run('get-console-url', a['site_id'], 'URL')} for one URL.",
    ),
    "inspect_urls": View(
        lambda a, inv: (
            f"{len(a['results'])} URLs inspected; {a['budget']['used']} of {a['budget']['limit']} "
            f"inspections used today (resets {a['budget']['resets_at']}).{_demo(a)}"
        ),
        tables=(
            Table(
                "Inspected",
                rows_at("results"),
                (
                    ("url", "url"),
                    ("verdict", "verdict"),
                    ("indexed", "indexed"),
                    ("coverage", "coverage_state"),
                    ("last crawled", "last_crawled"),
                    ("error", "error"),
                ),
            ),
        ),
    ),
    "get_index_triage": View(
        lambda a, inv: (
            f"{a['summary']['not_indexed']} of {a['summary']['crawled']} crawled pages are not indexed, in "
            f"{a['total_groups']} groups; fix the valuable_not_indexed ones first.{_demo(a)}"
        ),
        tables=(
            Table(
                "Not indexed, by URL pattern",
                rows_at("groups"),
                (
                    ("pattern", "pattern"),
                    ("class", "value_class"),
                    ("pages", lambda r: f"{r['count']}/{r['pattern_pages']}"),
                    ("why", "why"),
                    ("action", "action.text"),
                    ("task_key", "action.task_id"),
                ),
            ),
        ),
        next=lambda a, inv: f"Next: {run('list-site-tasks', a['site_id'])} for the fix tasks.",
    ),
    "get_indexnow_status": View(
        _indexnow,
        tables=(
            Table(
                "Recent submissions",
                rows_at("recent"),
                (
                    ("when", "at"),
                    ("trigger", "trigger"),
                    ("urls", "urls"),
                    ("submitted", "submitted"),
                    ("status", "status"),
                ),
            ),
        ),
        next=_indexnow_next,
        rows=lambda a: [a],
    ),
    "check_indexnow_key": View(_indexnow, next=_indexnow_next),
    "detect_indexnow_key": View(_indexnow, next=_indexnow_next),
    "set_indexnow_key": View(_indexnow, next=_indexnow_next),
    "set_indexnow_auto": View(_indexnow, next=_indexnow_next),
    "submit_to_indexnow": View(
        lambda a, inv: (
            f"Submitted {a['submitted']} URLs in {a['requests']} requests ({a['status']}); {a['skipped']} "
            f"skipped (other hosts), {a['capped']} over today's allowance."
        ),
        next=lambda a, inv: (
            f"Next: {run('get-indexnow-status', inv.given['site_id'])} shows recent submissions."
        ),
    ),
    "get_credit_pack_link": View(_link),
    "get_subscription_link": View(_link),
    "get_billing_portal_link": View(_link),
    "list_site_tasks": View(
        _site_tasks,
        tables=(Table("Fix tasks, by impact", rows_at("tasks"), TASK_COLUMNS),),
        next=_site_tasks_next,
    ),
    "list_team_tasks": View(
        lambda a, inv: f"The team's top {len(a['tasks'])} open tasks, by impact.",
        tables=(
            Table(
                "Fix tasks, by impact",
                rows_at("tasks"),
                (("site", "site_id"), ("host", "site_host"), *TASK_COLUMNS),
            ),
        ),
        next=_team_tasks_next,
    ),
    "get_task": View(
        _task,
        tables=(
            Table(
                "URLs",
                rows_at("urls.data"),
                (
                    ("url", "url"),
                    ("clicks 28d", "clicks_28d"),
                    ("impressions 28d", "impressions_28d"),
                    ("seen", "details"),
                ),
            ),
        ),
        next=_task_next,
    ),
    "request_recheck": View(
        _recheck_started,
        tables=(
            Table(
                "Tasks verifying",
                rows_at("tasks"),
                (("task_key", "task_key"), ("check", "code"), ("template", "template"), ("status", "status")),
            ),
        ),
        next=lambda a, inv: f"Next: {run('wait-for-recheck', a['recheck_id'])} waits for the result.",
    ),
    **{
        name: View(
            _recheck,
            tables=(
                Table(
                    "Tasks",
                    rows_at("tasks"),
                    (
                        ("task_key", "task_key"),
                        ("check", "code"),
                        ("template", "template"),
                        ("result", "result"),
                        ("failing", "urls_failing"),
                        ("passing", "urls_passing"),
                        ("status now", "status"),
                    ),
                ),
                Table(
                    "URLs",
                    rows_at("urls"),
                    (
                        ("url", "url"),
                        ("status", "status_code"),
                        ("result", "result"),
                        ("still failing", "issues"),
                        ("new", "new_issues"),
                        ("redirected to", "redirect_to"),
                    ),
                ),
            ),
            next=_recheck_next,
            rows=rows_at("urls"),
        )
        for name in ("get_recheck", "wait_for_recheck", "cancel_recheck")
    },
    "get_site_fix_impact": View(
        _impact(lambda a: f"Site {a['site_id']}"),
        tables=(Table("Fixed tasks", _fixed_events, IMPACT_COLUMNS),),
    ),
    "get_team_fix_impact": View(
        _impact(lambda a: "The team"),
        tables=(Table("Fixed tasks", _fixed_events, (("host", "site_host"), *IMPACT_COLUMNS)),),
        next=lambda a, inv: f"Next: {run('get-site-fix-impact', 'SITE_ID')} for one site.",
    ),
    "get_site_access": View(lambda a, inv: _access(a)),
}


def render(view: View, answer: Answer, invocation: Invocation) -> list[tuple[str, Any]]:
    """What to print, in order: ("text", lines) and ("table", (title, header, rows)) parts."""
    parts: list[tuple[str, Any]] = [("text", view.lines(answer, invocation))]
    for table in view.tables:
        rows = table.rows(answer)
        if rows:
            header = [name for name, _ in table.columns]
            parts.append(
                ("table", (table.title, header, [[cell(r, c) for c in table.columns] for r in rows]))
            )
    if "meta" in answer:
        parts.append(("text", next_page(answer, invocation)))
    if view.next is not None:
        parts.append(("text", view.next(answer, invocation)))
    return [(kind, part) for kind, part in parts if part]
