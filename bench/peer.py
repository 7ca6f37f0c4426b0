#!/usr/bin/python3
"""The benchmark's training step written by hand with numpy and MPI: the
peer bench/runtime.py measures dist against. Not part of dist.

  mpirun.openmpi -n 2 /usr/bin/python3 bench/peer.py ROWS HIDDEN FFN
      [--steps N] [--overlap]

Debian's python3-mpi4py is built on Open MPI (not the MPICH dist runs on),
so this runs under mpirun.openmpi; numpy computes through Debian's OpenBLAS
(libblas.so.3), on one thread as dist does (OPENBLAS_NUM_THREADS=1, set
here before numpy loads it).

The step is the one bench/runtime.py lowers: the MLP of a GPT block with
tensor parallelism over 2 processes, forward and backward. Each process
holds a column block of W1 and a row block of W2:

  h  = x W1           o  = allreduce(h W2)
  dh = dout W2^T      dW2 = h^T dout
  dX = allreduce(dh W1^T)                dW1 = x^T dh

With --overlap, dX's allreduce is an Iallreduce that runs while dW1 is
computed (what dist's --dist-auto-parallel does); without, every allreduce
blocks, as a first hand-written version would.

Each process times each step (after a barrier) and the time it spends in
MPI calls (Allreduce, or Iallreduce and Wait); rank 0 prints one JSON
object: per step, the slowest process's step and that process's MPI time,
and rank 0's dX[0, :4] to check the arithmetic against dist's.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402


def step(comm, x, w1, w2, dout, overlap):
    """One forward and backward step; returns (dX, dW1, dW2, mpi seconds)."""
    mpi = 0.0
    h = x @ w1
    partial = h @ w2
    o = np.empty_like(partial)
    t = MPI.Wtime()
    comm.Allreduce(partial, o, op=MPI.SUM)
    mpi += MPI.Wtime() - t
    dh = dout @ w2.T
    dw2 = h.T @ dout
    dx_partial = dh @ w1.T
    dx = np.empty_like(dx_partial)
    t = MPI.Wtime()
    if overlap:
        request = comm.Iallreduce(dx_partial, dx, op=MPI.SUM)
        mpi += MPI.Wtime() - t
        dw1 = x.T @ dh
        t = MPI.Wtime()
        request.Wait()
    else:
        comm.Allreduce(dx_partial, dx, op=MPI.SUM)
        mpi += MPI.Wtime() - t
        dw1 = x.T @ dh
        t = MPI.Wtime()
    mpi += MPI.Wtime() - t
    return dx, dw1, dw2, o, mpi


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("rows", type=int)
    parser.add_argument("hidden", type=int)
    parser.add_argument("ffn", type=int, help="the global FFN width (split over the processes)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--overlap", action="store_true")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    procs = comm.Get_size()
    if args.ffn % procs:
        sys.exit(f"peer.py: ffn {args.ffn} is not divisible by {procs} processes")
    f = args.ffn // procs
    # The inputs bench/runtime.py's program builds: constants.
    x = np.full((args.rows, args.hidden), 0.5, dtype=np.float32)
    w1 = np.full((args.hidden, f), 0.25, dtype=np.float32)
    w2 = np.full((f, args.hidden), 0.125, dtype=np.float32)
    steps = []
    for _ in range(args.steps):
        comm.Barrier()
        begin = MPI.Wtime()
        dx, _, _, _, mpi = step(comm, x, w1, w2, x, args.overlap)
        seconds = MPI.Wtime() - begin
        slowest = comm.allreduce((seconds, mpi), op=MPI.MAX)
        steps.append({"step_us": slowest[0] * 1e6, "mpi_us": slowest[1] * 1e6})
    if comm.Get_rank() == 0:
        print(
            json.dumps(
                {
                    "procs": procs,
                    "overlap": args.overlap,
                    "blas_threads": os.environ["OPENBLAS_NUM_THREADS"],
                    "steps": steps,
                    "dx_row0": [float(v) for v in dx[0, :4]],
                }
            )
        )


if __name__ == "__main__":
    main()
