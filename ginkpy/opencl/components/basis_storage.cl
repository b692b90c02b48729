// The storage type of a Krylov basis (CbGmres keeps it in a lower precision than the value type;
// core/solver/cb_gmres.py): STORAGE 0 the value type itself, 1 float (float2 for complex values)
// under double values, 2 half (pairs of halves for complex values) through vload_half /
// vstore_half, which every OpenCL device has (half is then only a storage format: no half
// arithmetic). load_basis(p, i) gives entry i as a value_type; store_basis(p, i, v) rounds v to
// the nearest representable entry (ties to even), as numpy's astype does. Include after common.cl.
#if STORAGE == 0
typedef value_type storage_type;
#define load_basis(p, i) ((p)[i])
#define store_basis(p, i, v) ((p)[i] = (v))
#elif STORAGE == 1
#if VALUE_COMPLEX
typedef float2 storage_type;
#define load_basis(p, i) convert_double2((p)[i])
#define store_basis(p, i, v) ((p)[i] = convert_float2_rte(v))
#else
typedef float storage_type;
#define load_basis(p, i) ((double)(p)[i])
#define store_basis(p, i, v) ((p)[i] = convert_float_rte(v))
#endif
#elif STORAGE == 2
typedef half storage_type;
#if VALUE_COMPLEX
inline value_type load_basis(__global const half* p, const int i)
{
    const float2 h = vload_half2(i, p);
    return (value_type)(h.x, h.y);
}
#define store_basis(p, i, v) vstore_half2_rte((v), (i), (p))
#else
#define load_basis(p, i) ((value_type)vload_half((i), (p)))
#define store_basis(p, i, v) vstore_half_rte((v), (i), (p))
#endif
#else
#error "STORAGE must be 0 (the value type), 1 (float) or 2 (half)"
#endif
