#!/usr/bin/env bash
# The GPU figures the open issues ask for, in one device call after the GPU check: each benchmark
# under `timeout`, the call's time shared out by DEADLINE (seconds from the start, default 570),
# each one's output in $OUT/<name>.txt (or ./device_check_logs) and its last lines printed.
# From the repository root on the machine with the GPU (CuPy beside, as the benchmarks take it):
#
#   source .device/setup.sh && GINKPY_MATRICES=$PWD/.device/matrices scripts/device_benchmarks.sh [NAME ...]
#
# NAME picks some (default: all, in this order): amg sa_setup cb_gmres whole amg_profile batch
# ilu spmv spmv_web gmres_solve tune_split iter_kernels transfer gmres basis_loops cycles passes timeline
# cg_form_p. OLD_TREE (a checkout's root) adds amg_host: the AMG setup's host share of that tree
# against this one (bench_amg_host.py --trees), and runs gmres for that tree too (its ginkpy first
# on PYTHONPATH).
set -u
cd "$(dirname "$0")/../benchmarks"
logs=${OUT:-../device_check_logs}
mkdir -p "$logs"
export PYTHONUNBUFFERED=1
python=${PYTHON:-python3}
left() { echo $(( ${DEADLINE:-570} - SECONDS )); }

run() {  # name, cap in seconds, then the command
    local name=$1 cap=$2 t
    shift 2
    t=$(( $(left) - 5 ))
    [ "$t" -gt "$cap" ] && t=$cap
    if [ "$t" -lt 20 ]; then echo "== $name skipped: no time left"; return; fi
    timeout "$t" "$@" > "$logs/$name.txt" 2>&1
    echo "== $name rc $? (${SECONDS} s)"
    tail -n "${TAIL:-12}" "$logs/$name.txt"
}

bench() {
    case $1 in
        amg) run amg 130 "$python" bench_amg.py --problems poisson_2d poisson_3d --sizes 1000000 \
                 --methods ginkpy-amg ginkpy-amg-sa-default ginkpy-linalg cupy-jacobi --reps 3 ;;
        sa_setup) run sa_setup 90 "$python" bench_sa_setup.py --problems poisson_2d poisson_3d --sizes 1000000 \
                      --one-pass on off --reps 2 ;;
        cb_gmres) run cb_gmres 60 "$python" bench_cb_gmres.py --sizes 1000000 --iters 300 --reps 5 ;;
        whole) run whole 60 "$python" bench_whole.py --problems poisson_3d --sizes 2097152 --reps 3 ;;
        amg_profile) GINKPY_OPENCL_PROFILE=1 run amg_profile 60 "$python" bench_amg.py --profile \
                         --problems poisson_3d --sizes 1000000 ;;
        batch) run batch 60 "$python" bench_batch.py --counts 10000 --sizes 256 --problems stencil --reps 5 \
                   --loop-seconds 1 --methods batched parts cupy-dense ;;
        ilu) run ilu 90 "$python" bench_ilu_default.py --sizes 250000 1000000 --reps 2 ;;
        spmv) run spmv 60 "$python" bench_spmv.py --problems power_law arrow poisson_2d ;;
        spmv_web) run spmv_web 60 "$python" bench_spmv.py --problems webbase_like --sizes 1000000 ;;
        gmres_solve) run gmres_solve 70 "$python" bench_solve.py --cases gmres_convdiff_2d --sizes 1000000 \
                         --no-scipy ;;
        tune_split) run tune_split 110 "$python" bench_amg.py --tune --problems poisson_2d poisson_3d \
                        --sizes 1000000 --cycles v --sweeps 2 --merged 2048 --split-restrict 0 8192 32768 --reps 3 ;;
        iter_kernels) GINKPY_OPENCL_PROFILE=1 run iter_kernels 60 "$python" bench_iteration_kernels.py --dims 2 \
                          --grids 1000 --rows-at-once 1 4 --max-row auto 0 ;;
        amg_host) run amg_host 90 "$python" bench_amg_host.py --trees "$OLD_TREE" .. \
                      --problems poisson_3d:100 poisson_2d:1000 --reps 3 ;;
        transfer) run transfer 60 "$python" bench_transfer.py --threads 1 4 8 1 ;;
        gmres) run gmres 50 "$python" bench_cg.py --solver gmres --restart 30 --iters 300 --sizes 1000000 \
                   --problems poisson_2d --no-scipy --reps 3
               if [ -n "${OLD_TREE:-}" ]; then
                   PYTHONPATH="$OLD_TREE:${PYTHONPATH:-}" run gmres_old 50 "$python" bench_cg.py --solver gmres \
                       --restart 30 --iters 300 --sizes 1000000 --problems poisson_2d --no-scipy --reps 3
               fi ;;
        basis_loops) N=1000000 run basis_loops 40 "$python" bench_basis_loops.py ;;
        cycles) run cycles 150 "$python" bench_amg.py --tune --problems poisson_2d poisson_3d --sizes 1000000 \
                    --cycles v f w --sweeps 2 --merged 2048 --reps 3 ;;
        passes) run passes 150 "$python" bench_amg.py --tune --problems poisson_3d poisson_2d --sizes 1000000 2097152 \
                    --cycles v --sweeps 2 3 --merged 2048 --passes 2 3 --reps 3 ;;
        timeline) GINKPY_OPENCL_PROFILE=1 run timeline 90 "$python" bench_timeline.py --problems poisson_3d poisson_2d \
                      --sizes 2097152 1000000 --solvers jacobi-cg amg-cg gmres --iters 100 --modes loop flush4 ;;
        cg_form_p) for v in 1 0; do  # Cg's iteration that forms p in its SpMV (on) against step_1's (off)
                       GINKPY_CG_FORM_P=$v GINKPY_OPENCL_PROFILE=1 run "cg_form_p_timeline_$v" 50 "$python" \
                           bench_timeline.py --problems poisson_3d poisson_2d --sizes 2097152 1000000 \
                           --solvers jacobi-cg --iters 100 --modes loop
                   done
                   for v in 1 0 1 0; do
                       GINKPY_CG_FORM_P=$v run "cg_form_p_whole_$v" 60 "$python" bench_whole.py \
                           --problems poisson_3d poisson_2d --sizes 2097152 1000000 --reps 3
                   done ;;
        *) echo "unknown benchmark '$1'" >&2; return 2 ;;
    esac
}

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    names=(amg sa_setup cb_gmres whole amg_profile batch ilu spmv spmv_web gmres_solve tune_split iter_kernels transfer gmres
           basis_loops cycles passes timeline cg_form_p)
    [ -n "${OLD_TREE:-}" ] && names+=(amg_host)
fi
for name in "${names[@]}"; do
    bench "$name"
done
