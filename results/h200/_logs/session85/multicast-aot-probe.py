import triton, triton.language as tl
from triton.backends.compiler import GPUTarget

@triton.jit
def k(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0); pid_n = tl.program_id(1)
    acc = tl.zeros([BM, BN], tl.float32)
    for kk in range(0, K, BK):
        a = a_desc.load([pid_m * BM, kk])
        b = b_desc.load([pid_n * BN, kk])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.bfloat16))

for ctas in (1, 2):
    sig = {"a_desc": "tensordesc<bf16[128, 64]>", "b_desc": "tensordesc<bf16[128, 64]>", "c_desc": "tensordesc<bf16[128, 128]>", "M": "i32", "N": "i32", "K": "i32"}
    src = triton.compiler.ASTSource(fn=k, signature=sig, constexprs={"BM": 128, "BN": 128, "BK": 64})
    try:
        c = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_ctas": ctas, "num_warps": 8, "num_stages": 3})
        ptx = c.asm["ptx"]
        print(ctas, "multicast" in ptx, ptx.count("cluster"), [l.strip() for l in ptx.splitlines() if "cp.async.bulk.tensor" in l][:3], c.metadata.num_ctas if hasattr(c.metadata,'num_ctas') else '')
    except Exception as e:
        print(ctas, "ERR", type(e).__name__, str(e)[:300])
