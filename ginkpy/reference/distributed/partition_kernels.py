"""Host kernels of gk.distributed.Partition (setup, vectorized)."""
from __future__ import annotations

import numpy as np


def build_from_mapping(exec, mapping, num_parts):
    # offsets[r] = the first row of rank r, for a map whose ranks never decrease along the rows;
    # returns (offsets, error): error says what is wrong with the map (None when it is fine)
    if mapping.size and (mapping.min() < 0 or mapping.max() >= num_parts):
        return None, f"ranks in the mapping must be in 0 .. {num_parts - 1}, got {mapping.min()} .. {mapping.max()}"
    down = np.flatnonzero(np.diff(mapping) < 0)
    if down.size:
        row = int(down[0]) + 1
        return None, (f"row {row} belongs to rank {mapping[row]} after row {row - 1} of rank {mapping[row - 1]}: "
                      f"each rank's rows must be one contiguous range, in rank order (renumber the rows)")
    offsets = np.searchsorted(mapping, np.arange(num_parts + 1), side="left").astype(np.int64)
    return offsets, None


def find_owners(exec, offsets, rows):
    # owner[i] = the rank r with offsets[r] <= rows[i] < offsets[r + 1]
    return (np.searchsorted(offsets, rows, side="right") - 1).astype(np.int32)
