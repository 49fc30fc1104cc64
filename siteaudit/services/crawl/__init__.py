"""The crawl engine: an audit is crawled in bounded slices, one message each, one slice at a time.

A slice (`slice`) claims the audit's lease (`lease`), reads robots.txt and the sitemaps on its first run
(`host_files`), fetches the frontier politely (`politeness`: host turns, Crawl-delay, back-off, redirects;
`hostgate`: each target host's rate shared by every audit and worker)
through a sliding window (`window`) of visits (`visit`; an audit with `render` has each page rendered in a
browser whose every request goes through `render`'s guard), records finished visits in batches (`record`),
checkpoints, and hands over to the next slice or to finalisation (`handover`). Its dependencies travel
as one `CrawlDeps` (`deps`). Every policy decision (scope, what is followed, pacing, stops, the
checkpoint) is the domain's: `siteaudit.domain.crawl`.
"""

from siteaudit.services.crawl.deps import CrawlDeps, FetcherFactory
from siteaudit.services.crawl.slice import SliceOutcome, arun_crawl_slice, run_crawl_slice

__all__ = ["CrawlDeps", "FetcherFactory", "SliceOutcome", "arun_crawl_slice", "run_crawl_slice"]
