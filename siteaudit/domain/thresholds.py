"""The numeric settings the checks apply (docs/checks.md gives the defaults), reported in the report's
stats."""

from typing import Any

from attrs import asdict, field, frozen, validators

from siteaudit.domain.judgement import ROBOTS_TXT_READ_BYTES

_non_negative = validators.ge(0)


@frozen
class Thresholds:
    """Every threshold of the check catalogue, with its defaults (docs/checks.md)."""

    title_min_chars: int = field(default=10, validator=_non_negative)
    title_max_chars: int = field(default=60, validator=_non_negative)
    description_min_chars: int = field(default=70, validator=_non_negative)
    description_max_chars: int = field(default=160, validator=_non_negative)
    thin_content_words: int = field(default=150, validator=_non_negative)
    slow_response_ms: int = field(default=800, validator=_non_negative)
    html_max_bytes: int = field(default=2 * 1024 * 1024, validator=_non_negative)
    deep_page_depth: int = field(default=5, validator=_non_negative)
    max_links_per_page: int = field(default=100, validator=_non_negative)
    dom_max_nodes: int = field(default=1500, validator=_non_negative)
    near_duplicate_similarity: float = field(default=0.9, validator=[validators.ge(0.0), validators.le(1.0)])
    soft_404_max_chars: int = field(default=800, validator=_non_negative)
    max_redirect_hops: int = field(default=10, validator=_non_negative)
    redirect_chain_min_hops: int = field(default=2, validator=_non_negative)
    image_max_bytes: int = field(default=500 * 1024, validator=_non_negative)
    robots_txt_max_bytes: int = field(default=ROBOTS_TXT_READ_BYTES, validator=_non_negative)
    # MinHash LSH banding: rows per band. With 128-value sketches, 32 bands of 4 rows finds pairs at
    # similarity 0.9 with near certainty while keeping unrelated pages out of shared buckets.
    near_duplicate_band_rows: int = field(default=4, validator=validators.ge(1))

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain JSON values, for the report's stats."""
        return asdict(self)
