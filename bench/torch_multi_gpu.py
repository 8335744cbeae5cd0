"""The PyTorch / NCCL twin of multi_device_bench.c, run in the same call:

- the host link: pinned host <-> GPU 0 copies (256 MiB, 1 GiB), the
  reference the copies between devices are held to;
- peer copies GPU 0 -> GPU 1 (NVLink where present);
- NCCL all-reduce (f32 sum) of 256 MiB and 1 GiB on N GPUs, bus bandwidth
  as nccl-tests reports it (algbw * 2 (N-1) / N), and small all-reduces of
  8-64 KiB as latency; one process per GPU (torch.multiprocessing).

    python torch_multi_gpu.py [--devices N]

Every result is checked before it is timed. Times: CUDA events or host
clock after a synchronize, medians.
"""

import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

MIB = 1 << 20


def timed(fn, iters, sync):
    out = []
    for _ in range(iters):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out)


def host_link_and_peer(iters):
    dev0 = torch.device("cuda:0")
    for size in (256 * MIB, 1024 * MIB):
        n = size // 4
        gpu = torch.arange(n, dtype=torch.float32, device=dev0)
        pinned = torch.empty(n, dtype=torch.float32, pin_memory=True)
        pinned.copy_(gpu)
        assert torch.equal(pinned[:1000], torch.arange(1000, dtype=torch.float32))
        sync = torch.cuda.synchronize
        down = timed(lambda: pinned.copy_(gpu, non_blocking=True), iters, sync)
        up = timed(lambda: gpu.copy_(pinned, non_blocking=True), iters, sync)
        print(f"torch pinned host link {size // MIB} MiB: GPU->host {down:.2f} ms {size / down / 1e6:.1f} GB/s, "
              f"host->GPU {up:.2f} ms {size / up / 1e6:.1f} GB/s")
        if torch.cuda.device_count() > 1:
            dev1 = torch.device("cuda:1")
            other = torch.empty_like(gpu, device=dev1)
            other.copy_(gpu)
            assert torch.equal(other[-1000:].cpu(), gpu[-1000:].cpu())
            peer = timed(lambda: other.copy_(gpu, non_blocking=True), iters,
                         lambda: (torch.cuda.synchronize(dev0), torch.cuda.synchronize(dev1)))
            print(f"torch peer copy GPU 0 -> 1, {size // MIB} MiB: {peer:.2f} ms {size / peer / 1e6:.1f} GB/s")
        del gpu, pinned


def nccl_worker(rank, world, port, iters):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    dev = torch.device("cuda", rank)
    for size in (256 * MIB, 1024 * MIB, 8 << 10, 16 << 10, 32 << 10, 64 << 10):
        x = torch.full((size // 4,), float(rank + 1), device=dev)
        dist.all_reduce(x)
        torch.cuda.synchronize(dev)
        assert torch.all(x == world * (world + 1) / 2).item()
        n = iters if size >= MIB else 50
        # As multi_device_bench: all ranks start together (a barrier outside
        # the timed region), time the call and the wait for its result.
        times = []
        for _ in range(n):
            torch.cuda.synchronize(dev)
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize(dev)
            times.append((time.perf_counter() - t0) * 1e3)
        ms = statistics.median(times)
        if rank == 0:
            algbw = size / ms / 1e6
            busbw = algbw * 2 * (world - 1) / world
            if size >= MIB:
                print(f"NCCL all_reduce f32 sum, {world} GPUs, {size // MIB} MiB: {ms:.2f} ms, algbw {algbw:.1f} GB/s, "
                      f"busbw {busbw:.1f} GB/s")
            else:
                print(f"NCCL all_reduce f32 sum, {world} GPUs, {size >> 10} KiB: {ms * 1e3:.1f} us latency")
        del x
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--iters", type=int, default=5)
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.device_count()} GPUs: {torch.cuda.get_device_name(0)}")
    host_link_and_peer(args.iters)
    if torch.cuda.device_count() >= args.devices >= 2:
        mp.spawn(nccl_worker, args=(args.devices, 29511, args.iters), nprocs=args.devices, join=True)


if __name__ == "__main__":
    main()
