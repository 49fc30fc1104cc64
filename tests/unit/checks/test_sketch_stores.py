"""The near-duplicate sketches kept in a temporary file (what finalisation uses) give the same band keys,
values and findings as kept in memory."""

import pytest
from attrs import evolve
from check_cases import CUCKOO, ORIGIN, WALL, _distinct, home, site, sketch

from siteaudit.domain.checks import check_site
from siteaudit.domain.checks.site import PackedSketches, SketchStore
from siteaudit.domain.issue import Issue
from siteaudit.domain.thresholds import Thresholds
from siteaudit.services import sketch_file
from siteaudit.services.sketch_file import SpilledSketches

# Full sketches, a short one (fewer bands), one too wide for 64 bits, values of one byte and of eight.
SKETCHES = (
    sketch(1),
    tuple(range(10)),
    sketch(2, differ_from=1, positions=6),
    (2**70, *range(127)),
    tuple(range(128)),
    tuple(2**56 + v if v % 21 == 0 else v for v in range(128)),
    sketch(3),
)


# What an extractor makes: 128 values each, all within 64 bits (read back in fixed strides).
UNIFORM = tuple(values for values in SKETCHES if len(values) == 128 and max(values) < 2**64)


def filled(store: SketchStore, sketches: tuple[tuple[int, ...], ...]) -> SketchStore:
    for values in sketches:
        store.append(values)
    return store


@pytest.fixture(autouse=True)
def small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sketch_file, "_CHUNK", 100)  # refills mid-sketch and past skipped sketches


@pytest.mark.parametrize("sketches", [SKETCHES, UNIFORM], ids=["mixed", "uniform"])
@pytest.mark.parametrize("rows", [1, 4, 5])
def test_a_spilled_sketch_has_the_band_keys_and_values_it_has_in_memory(
    rows: int, sketches: tuple[tuple[int, ...], ...]
) -> None:
    memory, spilled = filled(PackedSketches(), sketches), filled(SpilledSketches(), sketches)
    assert len(spilled) == len(memory) == len(sketches)
    for band in range(128 // rows + 1):
        first, last = band * rows, (band + 1) * rows
        kept, read = list(memory.band(first, last)), list(spilled.band(first, last))
        assert [index for index, _ in read] == [index for index, _ in kept]
        # Keys compare alike: equal exactly where the values are (packed widths differ).
        assert [[a == b for _, b in read] for _, a in read] == [[a == b for _, b in kept] for _, a in kept]
        for (_, key), (_, values) in zip(read, kept, strict=True):
            assert key == values if isinstance(values, tuple) else isinstance(key, bytes)
    for index, values in enumerate(sketches):
        assert tuple(spilled.values(index)) == tuple(memory.values(index)) == values
    spilled.close()


def test_near_duplicates_are_the_same_with_the_sketches_spilled() -> None:
    pages = (
        home(),
        *(_distinct(f"{ORIGIN}/p/{n}", sketch=values) for n, values in enumerate(SKETCHES)),
        _distinct(WALL, sketch=sketch(1, differ_from=3, positions=3)),
        _distinct(CUCKOO, sketch=sketch(4, differ_from=2, positions=2)),
    )

    def run(store: SketchStore | None) -> list[Issue]:
        return check_site(evolve(site(*pages), sketch_store=store), thresholds=Thresholds())

    class Watched(SpilledSketches):
        appended = 0

        def append(self, sketch: tuple[int, ...]) -> None:
            self.appended += 1
            super().append(sketch)

    found = run(None)
    assert len([i for i in found if i.check_code == "duplicate_content_near"]) >= 4
    store = Watched()  # empty, so falsy: used all the same
    assert run(store) == found
    assert store.appended == len(pages) - 1  # every page but the home page has a sketch
