"""Launch helpers of the Krylov basis kernels (components/krylov_basis.cl) that Gmres, CbGmres and
Gcr share: the storage code of a basis in its storage type, DOTS, the layout of the dot products
with all basis vectors and their local scratch."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import ReductionShape, ceil_div, local_buffer, reduction_shape

# the dot products a GPU work-item adds up at once (in registers), real and complex values, and
# the work-groups of a pass of dot products per compute unit: measured on an H200 (fewer for
# complex values, whose local memory for the sums limits the work-groups a compute unit holds);
# again on an H100 (2026-12-07, GMRES(30), 2D Poisson 1e6, real values: 8 / 4 197.6 us an inner
# iteration, 16 / 4 238.6, 4 / 4 203.2, 8 / 2 214.8, 8 / 8 197.2)
DOTS = {False: 8, True: 4}
DOT_GROUPS_PER_UNIT = {False: 4, True: 2}
# rows per turn of a GPU work-item's loop in basis_dots (more loads in flight); 1 and 4 lost to 2
# on an H100 (2026-12-07, Gmres' multi_dot: 75.0 and 86.2 us against 76.0 with 2, the whole inner
# iteration 194 and 206 us against 189; see device_choices.UPDATE_ROWS)
DOT_ROWS = 2
DOT_ROWS_PER_ITEM = 8  # rows a GPU work-item of a pass of dot products adds at least


def defines(value_dtype, basis, shape: ReductionShape) -> dict:
    """The defines of a kernel including krylov_basis.cl: STORAGE for a basis array in its
    storage type (None: the value type), DOTS, DOT_ROWS, and CPU_LAYOUT where a work-group is one
    work-item."""
    storage = np.dtype(value_dtype if basis is None else basis.dtype)
    code = 2 if storage == np.float16 else 0 if storage == np.dtype(value_dtype) else 1
    return {"STORAGE": code, "DOTS": DOTS[np.dtype(value_dtype).kind == "c"], "DOT_ROWS": DOT_ROWS,
            "CPU_LAYOUT": int(shape.local_size[0] == 1)}


def dot_shape(info, n: int, k: int, dtype) -> ReductionShape:
    """The layout of a pass of dot products with the basis: the reduction layout with
    DOT_GROUPS_PER_UNIT work-groups per compute unit on a GPU (each work-item adding at least
    DOT_ROWS_PER_ITEM rows), so that the partial sums that every work-group of the next kernel
    adds up stay few."""
    shape = reduction_shape(info, n, k)
    if info.is_cpu:
        return shape
    per_unit = DOT_GROUPS_PER_UNIT[np.dtype(dtype).kind == "c"]
    groups = max(1, min(per_unit * info.compute_units, ceil_div(n, shape.lanes * DOT_ROWS_PER_ITEM)))
    return ReductionShape(groups, shape.width, shape.lanes, ceil_div(n, groups))


def dot_scratch(dtype, size: int):
    """The local scratch of basis_dots: DOTS values per work-item of a work-group of ``size``."""
    return local_buffer(DOTS[np.dtype(dtype).kind == "c"] * size, dtype)
