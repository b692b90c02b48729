// Exclusive prefix sum of an int array, in place: v[i] = v[0] + ... + v[i - 1]. The array is
// cut into `chunks` contiguous chunks of `chunk` entries, one per work-item.
#include "common.cl"

// sums[t] = the sum of chunk t
__kernel void chunk_sums(const int size, const int chunk, const int chunks, __global const int* v,
                         __global int* sums)
{
    const int t = get_global_id(0);
    if (t < chunks) {
        const int begin = t * chunk;
        const int end = min(size, begin + chunk);
        int sum = 0;
        for (int i = begin; i < end; ++i) sum += v[i];
        sums[t] = sum;
    }
}

// One work-group: sums becomes its exclusive prefix sum. Each work-item takes a contiguous
// stretch of the sums; the stretches' totals are scanned in local memory (Hillis-Steele).
__kernel void scan_sums(const int count, __global int* sums, __local int* tmp)
{
    const int lid = get_local_id(0);
    const int width = get_local_size(0);
    const int per = (count + width - 1) / width;
    const int begin = min(count, lid * per);
    const int end = min(count, begin + per);
    int own = 0;
    for (int i = begin; i < end; ++i) own += sums[i];
    tmp[lid] = own;
    local_scan_int(tmp, lid, width);
    int offset = tmp[lid] - own;
    for (int i = begin; i < end; ++i) {
        const int c = sums[i];
        sums[i] = offset;
        offset += c;
    }
}

// each chunk rescanned from its offset sums[t]
__kernel void scan_chunks(const int size, const int chunk, const int chunks, __global int* v,
                          __global const int* sums)
{
    const int t = get_global_id(0);
    if (t < chunks) {
        const int begin = t * chunk;
        const int end = min(size, begin + chunk);
        int offset = sums[t];
        for (int i = begin; i < end; ++i) {
            const int c = v[i];
            v[i] = offset;
            offset += c;
        }
    }
}
