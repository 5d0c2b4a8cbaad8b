# Session 8 probe 2: what beside a cuBLAS GEMM waits for it: torch's copy_, a raw cudaMemcpyAsync
# (device to device, through ctypes), a small add kernel; no kernel in front of them on their stream.
import ctypes, glob, os, torch
dev = torch.device("cuda", 0)
a = torch.randn(16384, 4096, dtype=torch.bfloat16, device=dev)
b = torch.randn(4096, 4096, dtype=torch.bfloat16, device=dev)
c = torch.empty(16384, 4096, dtype=torch.bfloat16, device=dev)
src = torch.randn(32 * 2**20, dtype=torch.bfloat16, device=dev)  # 64 MiB
dst = torch.empty_like(src)
small = torch.zeros(2**20, device=dev)
cands = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cu*", "lib", "libcudart.so*")) + \
        glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cuda_runtime", "lib", "libcudart.so*")) + \
        ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]
rt = None
for p in cands:
    try:
        rt = ctypes.CDLL(p); print("cudart:", p); break
    except OSError:
        pass
s = torch.cuda.Stream()
def raw():
    e = rt.cudaMemcpyAsync(ctypes.c_void_p(dst.data_ptr()), ctypes.c_void_p(src.data_ptr()),
                           ctypes.c_size_t(src.numel() * 2), ctypes.c_int(3), ctypes.c_void_p(s.cuda_stream))
    assert e == 0, e
ops = {"torch copy_ 64 MiB": lambda: dst.copy_(src), "add 4 MiB": lambda: small.add_(1.0)}
if rt: ops["cudaMemcpyAsync DtoD 64 MiB"] = raw
ev = lambda: torch.cuda.Event(enable_timing=True)
med = lambda v: sorted(v)[len(v) // 2]
for name, op in ops.items():
    alone, beside, start, gemm = [], [], [], []
    for rep in range(7):
        torch.cuda.synchronize()
        e0, e1 = ev(), ev()
        with torch.cuda.stream(s):
            e0.record(); op(); e1.record()
        torch.cuda.synchronize()
        alone.append(e0.elapsed_time(e1) * 1e3)
        g0, g1, e0, e1 = ev(), ev(), ev(), ev()
        g0.record(); torch.matmul(a, b, out=c); g1.record()
        with torch.cuda.stream(s):
            e0.record(); op(); e1.record()
        torch.cuda.synchronize()
        beside.append(e0.elapsed_time(e1) * 1e3); start.append(g0.elapsed_time(e0) * 1e3); gemm.append(g0.elapsed_time(g1) * 1e3)
    print(f"{name:28s} alone {med(alone):7.1f} us; beside a GEMM ({med(gemm):6.1f} us): starts {med(start):6.1f} us after it, takes {med(beside):7.1f} us")
