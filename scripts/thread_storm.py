"""A thread storm: many threads solving at once on one OpenCL executor, run in fresh processes.

Each run is a fresh Python process (``--child``) in which ``--threads`` threads start together
and each solves, for ``--rounds`` rounds, its own small 2D systems with a mix of solver kinds:
Jacobi-CG and AMG-CG through ``ginkpy.linalg`` (a batch of one, the multigrid loop), BiCGStab,
ILU-GMRES and CGS through ``ginkpy.linalg``, and a builder Jacobi-GMRES with two right-hand sides
(its iterations captured and replayed). Every answer is checked (info 0 and the true residual).
``--daemons N`` adds N daemon threads that are still solving when the process exits. The
parent counts, over ``--runs`` processes, those that answered right and exited with status
0, and how long each took to exit after its last line (the exit must take at most
``--exit-limit`` seconds); a process that crashes, hangs (``--timeout``) or answers wrong fails
the run. Where ``py-spy`` is installed, a hung process's native stacks are printed before it
is killed; a crash prints every thread's Python stack (faulthandler).

    python scripts/thread_storm.py                       # 16 threads, 4 runs, caches as they are
    python scripts/thread_storm.py --threads 24 --runs 10 --cold
    python scripts/thread_storm.py --threads 2 --runs 20 --cold --kinds cg gmres_captured
    python scripts/thread_storm.py --threads 8 --daemons 4 --runs 10
    python scripts/thread_storm.py --runs 20 --parallel 4     # four fresh processes at a time

``--cold`` turns pyopencl's, PoCL's and NVIDIA's program caches and ginkpy's program record
off in the children, so that every program is compiled while the other threads solve (warm,
a solver's generate builds what its apply will use, from the record of earlier processes). The last line is one summary:
``storm: 16 threads x 2 rounds, 4/4 runs right and exited (cold), exit <= 0.31 s``; the exit
status is 0 only when every run passed.
"""
from __future__ import annotations

import argparse
import os
from concurrent.futures import ThreadPoolExecutor
import shutil
import signal
import subprocess
import sys
import tempfile
import time

COLD = {"PYOPENCL_NO_CACHE": "1", "POCL_KERNEL_CACHE": "0", "CUDA_CACHE_DISABLE": "1",
        "GINKPY_PROGRAM_RECORD": "0"}  # and no program record: the applies build, beside the other threads
KINDS = ("cg", "amg", "bicgstab", "gmres_ilu", "cgs", "gmres_captured")
DONE = "storm-child-done"


def _child(args: argparse.Namespace) -> None:
    """The storm inside one process: prints DONE (and the time) as its last line."""
    import faulthandler
    import threading

    import numpy as np

    import ginkpy as gk
    from ginkpy.problems import poisson_2d

    faulthandler.enable(all_threads=True)
    exec = gk.executor(args.executor)
    errors: list = []
    start = threading.Barrier(args.threads)

    def solve(kind: str, n: int) -> None:
        S = poisson_2d(n).tocsr()
        x_true = np.linspace(1.0, 2.0, S.shape[0])
        b = S @ x_true
        if kind == "gmres_captured":  # the builder's loop, two columns, iterations captured
            B = np.stack([b, 2.0 * b], axis=1)
            A = gk.matrix.Csr.from_scipy(exec, S)
            solver = (gk.solver.Gmres.build()
                      .with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                      .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-10),
                                     gk.stop.Iteration.build().with_max_iters(2000)).on(exec).generate(A))
            x = gk.matrix.Dense.zeros(exec, B.shape)
            solver.apply(gk.matrix.Dense.from_numpy(exec, B), x)
            X = x.to_numpy()
            residual = np.linalg.norm(S @ X - B) / np.linalg.norm(B)
            info = 0
        else:
            name, M = {"cg": ("cg", "jacobi"), "amg": ("cg", "amg"), "bicgstab": ("bicgstab", "jacobi"),
                       "gmres_ilu": ("gmres", "ilu"), "cgs": ("cgs", "jacobi")}[kind]
            x, info = getattr(gk.linalg, name)(S, b, rtol=1e-10, M=M, executor=exec)
            residual = np.linalg.norm(S @ x - b) / np.linalg.norm(b)
        if info != 0 or not residual < 1e-8:
            errors.append(f"{kind} on {n}^2: info {info}, relative residual {residual:.2e}")

    def work(t: int) -> None:
        try:
            start.wait()
            for r in range(args.rounds):
                for k, kind in enumerate(args.kinds):
                    # each thread its own grids (20^2 to 26^2): ginkpy.linalg keeps a solver per matrix
                    solve(kind, 20 + (t + k + r) % 7)
        except BaseException as err:  # noqa: BLE001 - reported by the main thread
            errors.append(f"thread {t}: {err!r}")

    def forever(t: int) -> None:  # a daemon thread: still solving when the process exits
        while True:
            solve(args.kinds[t % len(args.kinds)], 20 + t % 7)

    for d in range(args.daemons):
        threading.Thread(target=forever, args=(d,), daemon=True).start()
    threads = [threading.Thread(target=work, args=(t,)) for t in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        print("\n".join(errors[:20]), flush=True)
        sys.exit(3)
    print(f"{DONE} {time.time():.6f}", flush=True)


def _native_stacks(pid: int) -> str:
    """py-spy's dump of a hung process, where py-spy is installed (else a note)."""
    spy = shutil.which("py-spy")
    if spy is None:
        return "(py-spy not installed: no native stacks)"
    try:
        return subprocess.run([spy, "dump", "--native", "--pid", str(pid)], capture_output=True, text=True,
                              timeout=60).stdout
    except (subprocess.SubprocessError, OSError) as err:
        return f"(py-spy failed: {err})"


def _output(out) -> str:
    """What the child wrote to ``out`` so far, read without moving the file's offset: the child
    writes through the same open file, so a seek here would move its writes (they overwrote the
    start of its own lines: a "torm-child-done" line, a run wrongly judged wrong)."""
    fd = out.fileno()
    return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")


def run_once(args: argparse.Namespace, env: dict) -> tuple[str, float | None, str]:
    """One child process: ('ok' | 'crash (SIG...)' | 'hang' | 'hang at exit' | 'wrong' | 'slow
    exit', seconds from its last line to its exit, its output and, for a hang, its stacks)."""
    command = [sys.executable, os.path.abspath(__file__), "--child", "--threads", str(args.threads),
               "--daemons", str(args.daemons),
               "--rounds", str(args.rounds), "--executor", args.executor, "--kinds", *args.kinds]
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True, env=env,
                                 start_new_session=True)
        started, done_at, verdict = time.time(), None, None
        while child.poll() is None:
            time.sleep(0.05)
            now = time.time()
            if done_at is None and DONE in _output(out):
                done_at = now
            if done_at is not None and now - done_at > args.exit_limit + 10:
                verdict = "hang at exit"
            elif now - started > args.timeout:
                verdict = "hang"
            if verdict:
                stacks = _native_stacks(child.pid)
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                return verdict, None, _output(out)[-4000:] + "\n" + stacks
        ended = time.time()
        text = _output(out)
    done = [line for line in text.splitlines() if line.startswith(DONE)]
    if child.returncode < 0:
        return f"crash ({signal.Signals(-child.returncode).name})", None, text[-8000:]
    if child.returncode != 0 or not done:
        return "wrong", None, text[-4000:]
    seconds = ended - float(done[-1].split()[1])
    return ("ok" if seconds <= args.exit_limit else "slow exit"), seconds, text[-2000:]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--rounds", type=int, default=2, help="rounds of every kind in each thread")
    p.add_argument("--runs", type=int, default=4, help="fresh processes")
    p.add_argument("--parallel", type=int, default=1,
                   help="runs at once (separate processes, each its own storm; default one after the other)")
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    p.add_argument("--cold", action="store_true", help="program caches and the program record off in the children")
    p.add_argument("--daemons", type=int, default=0,
                   help="daemon threads that keep solving until the process exits (its exit is timed all the same)")
    p.add_argument("--executor", default="opencl")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds before a run counts as hung")
    p.add_argument("--exit-limit", type=float, default=2.0, help="seconds a run may take to exit")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _child(args)
        return
    env = dict(os.environ, **(COLD if args.cold else {}))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    passed, exits = 0, []

    def one(i: int) -> tuple[int, str, float | None, str, float]:
        t0 = time.perf_counter()
        return (i, *run_once(args, env), time.perf_counter() - t0)

    with ThreadPoolExecutor(max(1, args.parallel)) as pool:
        for i, verdict, exit_seconds, output, seconds in pool.map(one, range(args.runs)):
            exit_text = "" if exit_seconds is None else f", exit {exit_seconds:.2f} s"
            print(f"run {i + 1}/{args.runs}: {verdict} in {seconds:.1f} s{exit_text}", flush=True)
            if exit_seconds is not None:
                exits.append(exit_seconds)
            if verdict == "ok":
                passed += 1
            else:
                print(output, flush=True)
    worst = f", exit <= {max(exits):.2f} s" if exits else ""
    print(f"storm: {args.threads} threads x {args.rounds} rounds, {passed}/{args.runs} runs right and exited "
          f"({'cold' if args.cold else 'warm'}){worst}", flush=True)
    sys.exit(0 if passed == args.runs else 1)


if __name__ == "__main__":
    main()
