"""The near-duplicate sketches of a finalisation in a temporary file, not in memory (docs/operations.md,
"Sizing").

A sketch is 128 MinHash values: kept in memory they were a third of what finalising a large audit holds
at its peak. The site checks read them back one band at a time, sequentially, then the values of the
candidate pairs only, so a file costs a sequential read per band and a `pread` per candidate.
"""

import os
import tempfile
from array import array
from collections.abc import Iterator, Sequence

# Bytes read at a time in a band's pass over the file.
_CHUNK = 1 << 20


class SpilledSketches:
    """A `SketchStore` (`domain/checks/site.py`) in an anonymous temporary file: each sketch's values as
    64-bit little-endian unsigned integers, one after the other, and its end offset in memory (8 bytes a
    sketch). Band keys are those bytes, equal exactly when the values are. A sketch with a value beyond 64
    bits (none an extractor makes) stays in memory as a tuple, equal to no packed key."""

    def __init__(self) -> None:
        # Open for the store's life, until `close` (the site checks call it when they end).
        self._file = tempfile.TemporaryFile()  # noqa: SIM115
        self._ends = array("Q")
        self._wide: dict[int, tuple[int, ...]] = {}
        self._size: int | None = None  # every packed sketch's length in bytes while they all share one
        self._mixed = False

    def __len__(self) -> int:
        return len(self._ends)

    def _end(self) -> int:
        return self._ends[-1] if self._ends else 0

    def append(self, sketch: tuple[int, ...]) -> None:
        try:
            packed = array("Q", sketch).tobytes()
        except OverflowError:
            self._wide[len(self._ends)] = sketch
            self._ends.append(self._end())
            return
        self._file.write(packed)
        self._ends.append(self._end() + len(packed))
        if self._size is None and not self._mixed:
            self._size = len(packed)
        elif self._size != len(packed):
            self._size, self._mixed = None, True

    def band(self, first: int, last: int) -> Iterator[tuple[int, bytes | tuple[int, ...]]]:
        file, wide = self._file, self._wide
        file.flush()
        file.seek(0)
        low, high = first * 8, last * 8
        size = self._size
        if size is not None and not wide:  # sketches of one length (what an extractor makes): fixed strides
            if size >= high:
                index = 0
                while chunk := file.read(max(1, _CHUNK // size) * size):
                    for at in range(0, len(chunk), size):
                        yield index, chunk[at + low : at + high]
                        index += 1
            return
        buffer, start = b"", 0  # the bytes read and not yet passed, from file offset `start`
        begin = 0
        for index, end in enumerate(self._ends):
            if wide and index in wide:
                sketch = wide[index]
                if len(sketch) >= last:
                    yield index, sketch[first:last]
                continue
            if end - begin >= high:
                read = start + len(buffer)  # the file's position
                if end > read:
                    if begin >= read:  # past short sketches never read
                        file.seek(begin)
                        buffer = file.read(max(_CHUNK, end - begin))
                    else:
                        buffer = buffer[begin - start :] + file.read(max(_CHUNK, end - begin))
                    start = begin
                offset = begin - start
                yield index, buffer[offset + low : offset + high]
            begin = end

    def values(self, index: int) -> Sequence[int]:
        sketch = self._wide.get(index)
        if sketch is not None:
            return sketch
        self._file.flush()
        begin = self._ends[index - 1] if index else 0
        return memoryview(os.pread(self._file.fileno(), self._ends[index] - begin, begin)).cast("Q")

    def close(self) -> None:
        self._file.close()
        self._ends = array("Q")
        self._wide = {}
