"""On the GPU machine (staged into .gpu/ by tools/gpu/prepare.py): einc's vulkan-spirv modules
against torch and JAX on CUDA, each checked against a float64 reference first. Prints one line
per measurement and writes $OUT/gpu.json. Arguments: the cases to run (default: all)."""
import json
import os
import sys
import time
import numpy as np
import einc
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MODS = os.path.join(HERE, "modules")
results = {}


def report(key, **fields):
    results[key] = fields
    print(key, " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in fields.items()), flush=True)


def einc_time(name, inputs, output, repeat=10):
    prog = einc.load(os.path.join(MODS, name + ".vmfb"), device="vulkan")
    outs, timing = prog.benchmark(inputs, repeat)
    return np.asarray(outs[output]), timing.min_s


def torch_time(fn, repeat=10):
    fn(); torch.cuda.synchronize()
    best = 1e9
    for _ in range(repeat):
        s = time.perf_counter(); fn(); torch.cuda.synchronize(); best = min(best, time.perf_counter() - s)
    return best


def close(a, b, tol):
    err = float(np.max(np.abs(a - b)) / (np.max(np.abs(b)) + 1e-30))
    return err, err <= tol


torch.backends.cuda.matmul.allow_tf32 = False   # f32 against f32: einc's Vulkan code has no TF32
torch.backends.cudnn.allow_tf32 = False


def matmul():
    n = 4096
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n), dtype=np.float32); B = rng.standard_normal((n, n), dtype=np.float32)
    ref = (torch.from_numpy(A).double().cuda() @ torch.from_numpy(B).double().cuda()).cpu().numpy()
    flop = 2 * n ** 3
    ta, tb = torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda()
    t_torch = torch_time(lambda: ta @ tb)
    for name in ("matmul_named", "matmul_fixed"):
        got, t = einc_time(name, {"A": A, "B": B}, "C")
        err, ok = close(got, ref, 1e-4)
        report(name, seconds=t, tflops=flop / t / 1e12, torch_tflops=flop / t_torch / 1e12, rel_err=err, ok=ok)


def conv():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((64, 8, 128, 128), dtype=np.float32); K = rng.standard_normal((16, 8, 5, 5), dtype=np.float32)
    tx, tk = torch.from_numpy(X).cuda(), torch.from_numpy(K).cuda()
    ref = torch.nn.functional.conv2d(tx.double(), tk.double(), padding=2).cpu().numpy()
    t_torch = torch_time(lambda: torch.nn.functional.conv2d(tx, tk, padding=2))
    flop = 2 * 64 * 16 * 128 * 128 * 8 * 25
    for name in ("conv_named", "conv_fixed"):
        got, t = einc_time(name, {"X": X, "K": K}, "Y")
        err, ok = close(got, ref, 1e-4)
        report(name, seconds=t, tflops=flop / t / 1e12, torch_tflops=flop / t_torch / 1e12, rel_err=err, ok=ok)


def cnn():
    d = os.path.join(HERE, "mnist"); load = lambda n: np.load(os.path.join(d, n + ".npy"))
    batch = 8192
    X = np.ascontiguousarray(np.tile(load("samples"), (batch // 10 + 1, 1, 1, 1))[:batch], dtype=np.float32)
    w = {k: load(f) for k, f in [("W1", "conv1_w"), ("b1", "conv1_b"), ("W2", "conv2_w"), ("b2", "conv2_b"), ("Wf", "fc_w"), ("bf", "fc_b")]}
    F = torch.nn.functional
    tw = {k: torch.from_numpy(v).cuda() for k, v in w.items()}
    tX = torch.from_numpy(X).cuda()
    def net(x, dt=torch.float32):
        g = {k: v.to(dt) for k, v in tw.items()}
        c1 = F.max_pool2d(F.relu(F.conv2d(1.0 - x.to(dt), g["W1"], g["b1"], padding=2)), 2)
        c2 = F.max_pool2d(F.relu(F.conv2d(c1, g["W2"], g["b2"], padding=2)), 3)
        return c2.reshape(x.shape[0], -1) @ g["Wf"] + g["bf"]
    ref = net(tX, torch.float64).cpu().numpy()
    t_torch = torch_time(lambda: net(tX))
    inputs = {"X": X, **w}
    for name in ("cnn_named", "cnn_fixed"):
        got, t = einc_time(name, inputs, "logits")
        err, ok = close(got, ref, 1e-4)
        report(name, seconds=t, images_per_s=batch / t, torch_images_per_s=batch / t_torch, rel_err=err, ok=ok)


def rnn():
    T, B, H = 1000, 64, 64
    rng = np.random.default_rng(2)
    W = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32); x = rng.standard_normal((T, B, H), dtype=np.float32)
    h = np.zeros((B, H))
    for t in range(1, T):
        h = np.tanh(h @ W.T.astype(np.float64) + x[t])
    got, t_einc = einc_time("rnn_batch64", {"W": W, "x": x}, "final", repeat=5)
    err, ok = close(got, h, 1e-3)
    import jax, jax.numpy as jnp
    Wj, xj = jnp.asarray(W), jnp.asarray(x)
    @jax.jit
    def scan(W, x):
        step = lambda h, xt: (jnp.tanh(h @ W.T + xt), None)
        return jax.lax.scan(step, jnp.zeros((B, H), jnp.float32), x[1:])[0]
    scan(Wj, xj).block_until_ready()
    best = 1e9
    for _ in range(5):
        s = time.perf_counter(); scan(Wj, xj).block_until_ready(); best = min(best, time.perf_counter() - s)
    report("rnn_batch64", seconds=t_einc, steps_per_s=(T - 1) / t_einc, jax_steps_per_s=(T - 1) / best,
           jax_device=str(jax.devices()[0]), rel_err=err, ok=ok)


def vit():
    sys.path.insert(0, os.path.join(HERE, "vit"))
    import make_weights, transformers
    import torch.nn.functional as F
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    w = make_weights.deit_weights(12, 196)
    batch = 8
    images = np.random.default_rng(3).standard_normal((batch, 3, 224, 224), dtype=np.float32)
    ref = transformers.deit(images, w, 12)
    tw = {k: torch.from_numpy(v).cuda() for k, v in w.items()}
    ti = torch.from_numpy(images).cuda()

    def deit_torch(x):
        n = x.shape[0]
        P = F.conv2d(x, tw["patch_w"], tw["patch_b"], stride=16).flatten(2).transpose(1, 2)
        h = torch.cat([tw["cls"].expand(n, 1, 192), P], 1) + tw["pos"]
        for l in range(12):
            a = F.layer_norm(h, (192,), tw["ln1_g"][l], tw["ln1_b"][l], 1e-6)
            qkv = a @ tw["w_qkv"][l] + tw["b_qkv"][l]
            q, k, v = (qkv[..., i * 192:(i + 1) * 192].reshape(n, -1, 3, 64).transpose(1, 2) for i in range(3))
            ctx = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(n, -1, 192)
            h = h + ctx @ tw["w_out"][l] + tw["b_out"][l]
            a = F.layer_norm(h, (192,), tw["ln2_g"][l], tw["ln2_b"][l], 1e-6)
            h = h + F.gelu(a @ tw["w_up"][l] + tw["b_up"][l], approximate="tanh") @ tw["w_down"][l] + tw["b_down"][l]
        return F.layer_norm(h[:, 0], (192,), tw["norm_g"], tw["norm_b"], 1e-6) @ tw["head_w"] + tw["head_b"]

    with torch.no_grad():
        terr, tok = close(deit_torch(ti).cpu().numpy(), ref, 1e-3)
        t_torch = torch_time(lambda: deit_torch(ti))
    import shutil
    shutil.copy(os.path.join(HERE, "vit", "deit_b8.irpa"), os.path.join(HERE, "vit", "deit_named.irpa"))
    for name in ("deit_b8", "deit_named"):
        prog = einc.load(os.path.join(HERE, "vit", name + ".vmfb"), device="vulkan")
        outs, timing = prog.benchmark({"X": images}, 10)
        err, ok = close(np.asarray(outs["logits"]), ref, 1e-3)
        report(name, seconds=timing.min_s, images_per_s=batch / timing.min_s,
               torch_images_per_s=batch / t_torch, torch_rel_err=terr, torch_ok=tok, rel_err=err, ok=ok)


for case in sys.argv[1:] or ["matmul", "conv", "cnn", "rnn", "vit"]:
    try:
        globals()[case]()
    except Exception as err:  # report and go on: one failure must not cost the other measurements
        report(case + "_failed", error=f"{type(err).__name__}: {str(err)[:300]}")
json.dump(results, open(os.path.join(os.environ.get("OUT", "/tmp"), "gpu.json"), "w"), indent=1)
