"""Hold-out programs, seventh round (signal, image and audio processing and compression): MFCC
features, STFT with overlap-add resynthesis, wavelet lifting over levels, JPEG-like block DCT
with zigzag order, Levinson-Durbin LPC, convolutional-code Viterbi decoding, delta/run-length
coding in narrow integer types, bilateral and guided filters, Lucas-Kanade flow, Harris corners
and Gaussian/Laplacian pyramids, each checked against NumPy computed here. Each case states its
tolerance (`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on
vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 MFCC: framing with a stride, Hann window, DFT power, mel filterbank, log, DCT-II, deltas
def mfcc_inputs():
    t = np.arange(200) / 8000.0
    x = np.sin(2 * np.pi * 440 * t) * np.minimum(1.0, t * 60) + 0.3 * np.sin(2 * np.pi * 1900 * t) + 0.05 * R(701).standard_normal(200)
    return dict(x=x, sr=np.float64(8000.0))
@case("mfcc_frames", inputs=mfcc_inputs, tol=(1e-9, 1e-9),
      outputs=["power", "edge", "fb", "logmel", "mfcc", "delta", "cmn", "loudest"])
def _(x, sr):
    N, L, HOP, M, C = len(x), 32, 12, 9, 5; F = (N - L) // HOP + 1; K = L // 2 + 1
    pre = np.concatenate([[x[0]], x[1:] - 0.97 * x[:-1]])
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(L) / (L - 1))
    frames = np.stack([pre[f * HOP:f * HOP + L] for f in range(F)]) * hann
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2 / L
    mel = lambda h: 2595 * np.log10(1 + h / 700); hz = lambda m: 700 * (10 ** (m / 2595) - 1)
    edge = hz(mel(sr / 2) * np.arange(M + 2) / (M + 1)) * L / sr
    k = np.arange(K)
    fb = np.stack([np.maximum(0, np.minimum((k - edge[m]) / (edge[m + 1] - edge[m]), (edge[m + 2] - k) / (edge[m + 2] - edge[m + 1]))) for m in range(M)])
    logmel = np.log(power @ fb.T + 1e-10)
    m = np.arange(M); D = np.cos(np.pi * np.arange(C)[:, None] * (m + 0.5) / M) * np.sqrt(2 / M); D[0] = np.sqrt(1 / M)
    mfcc = logmel @ D.T
    idx = np.arange(F)
    delta = 0.5 * (mfcc[np.minimum(idx + 1, F - 1)] - mfcc[np.maximum(idx - 1, 0)])
    loud = int(np.argmax(power.sum(1)))
    return dict(power=power, edge=edge, fb=fb, logmel=logmel, mfcc=mfcc, delta=delta, cmn=mfcc - mfcc.mean(0),
                loudest=np.int32(loud), __stdout__=[f"frames {F}, loudest {loud}"])



# 2 STFT, inverse DFT per frame and weighted overlap-add, full band and low-passed
@case("stft_overlap_add", inputs=lambda: dict(x=np.cumsum(R(702).standard_normal(60)) * 0.2 + np.sin(np.arange(60) * 0.7)),
      tol=(1e-9, 1e-10), outputs=["XR", "XI", "mag", "phase_cos", "y", "den", "err", "peak_bin"])
def _(x):
    N, L, HOP, CUT = len(x), 16, 4, 3; F = (N - L) // HOP + 1
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(L) / L)
    X = np.fft.fft(np.stack([x[f * HOP:f * HOP + L] * w for f in range(F)]), axis=1)
    k = np.arange(L); keep = np.stack([np.ones(L, bool), (k <= CUT) | (k >= L - CUT)])
    y = np.zeros((2, N)); den = np.zeros(N)
    for v in range(2):
        fr = np.fft.ifft(X * keep[v], axis=1).real
        for f in range(F):
            y[v, f * HOP:f * HOP + L] += fr[f] * w
    for f in range(F):
        den[f * HOP:f * HOP + L] += w * w
    y = np.where(den > 1e-9, y / np.where(den > 1e-9, den, 1), 0.0)
    cov = (F - 1) * HOP + L; mag = np.abs(X[:, :L // 2 + 1])
    return dict(XR=X.real, XI=X.imag, mag=mag, phase_cos=np.cos(np.angle(X[:, :L // 2 + 1])), y=y, den=den,
                err=np.abs(y[0, L:cov - L] - x[L:cov - L]).max(), peak_bin=mag.argmax(1).astype(np.int32))


# 3 multi-level Haar lifting over levels, thresholded details, inverse up the levels
@case("haar_levels", inputs=lambda: dict(x=np.round(np.cumsum(R(703).standard_normal(64)), 2), thr=np.float64(0.8)),
      tol=(1e-12, 1e-12), outputs=["a", "d", "energy", "n_kept", "denoised", "err"])
def _(x, thr):
    N, J = 64, 4; a = np.zeros((J + 1, N)); d = np.zeros((J + 1, N)); a[0] = x
    for j in range(1, J + 1):
        h = N >> j; e, o = a[j - 1, 0:2 * h:2], a[j - 1, 1:2 * h:2]
        d[j, :h] = o - e; a[j, :h] = e + 0.5 * d[j, :h]
    kept = np.where(np.abs(d) >= thr, d, 0.0)
    def inverse(det):
        cur = a[J, :N >> J].copy()
        for j in range(J, 0, -1):
            e = cur - 0.5 * det[j, :len(cur)]; o = e + det[j, :len(cur)]
            cur = np.stack([e, o], 1).ravel()
        return cur
    nk = sum(int((np.abs(d[j, :N >> j]) >= thr).sum()) for j in range(1, J + 1))
    return dict(a=a, d=d, energy=(d ** 2).sum(1), n_kept=np.int32(nk), denoised=inverse(kept),
                err=np.abs(inverse(d) - x).max())


# 4 Daubechies-4 by lifting on a periodic signal, its inverse, two levels through one function
def d4_np(v):
    s3, s2 = np.sqrt(3), np.sqrt(2); e, o = v[0::2], v[1::2]
    s1 = e + s3 * o; d1 = o - s3 / 4 * s1 - (s3 - 2) / 4 * np.roll(s1, 1); sv = s1 - np.roll(d1, -1)
    return np.stack([(s3 - 1) / s2 * sv, (s3 + 1) / s2 * d1])
@case("daub4_lifting", inputs=lambda: dict(x=R(704).standard_normal(24)), tol=(1e-11, 1e-12),
      outputs=["lv1", "back", "lv2", "energy_out", "err"])
def _(x):
    lv1 = d4_np(x)
    # the inverse through the D4 filter bank: the transform is orthogonal, so x = T^T (T x)
    T = np.stack([d4_np(np.eye(len(x))[i]).ravel() for i in range(len(x))], 1)
    back = T.T @ lv1.ravel()
    return dict(lv1=lv1, back=back, lv2=d4_np(lv1[0]), energy_out=(lv1 ** 2).sum(), err=np.abs(back - x).max())



# 5 JPEG-like 8x8 DCT blocks: quality-scaled quantisation, zigzag, runs, DC differences, decoding
def jpeg_inputs():
    i, j = np.mgrid[0:16, 0:24]
    img = np.clip(110 + 60 * np.sin(i / 3.0) * np.cos(j / 5.0) + 4 * j + R(705).normal(0, 6, (16, 24)), 0, 255)
    Q = np.int32([[16, 11, 10, 16, 24, 40, 51, 61], [12, 12, 14, 19, 26, 58, 60, 55], [14, 13, 16, 24, 40, 57, 69, 56],
                  [14, 17, 22, 29, 51, 87, 80, 62], [18, 22, 37, 56, 68, 109, 103, 77], [24, 35, 55, 64, 81, 104, 113, 92],
                  [49, 64, 78, 87, 103, 121, 120, 101], [72, 92, 95, 98, 112, 100, 103, 99]])
    return dict(img=img.astype(np.uint8), Q=Q, quality=np.int32(40))
@case("jpeg_blocks", inputs=jpeg_inputs, tol=(1e-10, 1e-10),
      outputs=["Qs", "coef", "q", "zz", "last", "run", "bits", "dc_diff", "rec", "mse", "nonzero"])
def _(img, Q, quality):
    k = np.arange(8); D = np.cos((2 * k[None] + 1) * k[:, None] * np.pi / 16) * 0.5; D[0] = np.sqrt(0.125)
    scale = 5000 // quality if quality < 50 else 200 - 2 * quality
    Qs = np.clip((Q * scale + 50) // 100, 1, 255)
    blocks = (img.astype(float) - 128).reshape(2, 8, 3, 8).transpose(0, 2, 1, 3)
    coef = D @ blocks @ D.T
    q = np.round(coef / Qs).astype(np.int32)
    order = sorted(range(64), key=lambda p: (p // 8 + p % 8, (p % 8) if (p // 8 + p % 8) % 2 == 0 else (p // 8)))
    zz = q.reshape(2, 3, 64)[..., order]
    last = np.int32([[max([p for p in range(64) if zz[a, b, p]] or [-1]) for b in range(3)] for a in range(2)])
    run = np.zeros((2, 3, 64), np.int32)
    for p in range(2, 64):
        run[..., p] = np.where(zz[..., p - 1] == 0, run[..., p - 1] + 1, 0)
    cat = lambda v: int(abs(v)).bit_length()
    bits = np.int32([[sum(4 + cat(v) for v in zz[a, b, 1:] if v) for b in range(3)] for a in range(2)])
    dc = zz[..., 0].ravel(); dc_diff = np.concatenate([[dc[0]], np.diff(dc)]).astype(np.int32)
    rec = D.T @ (q * Qs) @ D
    rec = np.clip(np.round(rec) + 128, 0, 255).astype(np.uint8).transpose(0, 2, 1, 3).reshape(16, 24)
    mse = ((rec.astype(float) - img) ** 2).mean(); nz = int((zz != 0).sum())
    return dict(Qs=Qs.astype(np.int32), coef=coef, q=q, zz=zz, last=last, run=run, bits=bits, dc_diff=dc_diff, rec=rec,
                mse=mse, nonzero=np.int32(nz), __stdout__=[f"nonzero coefficients {nz}, mse {mse:.3f}"])


# 6 Levinson-Durbin LPC: reflection coefficients, predictor rows, errors, residual, d(error)/d(lags)
def levinson_np(r, P=6):
    a = np.zeros(P + 1); a[0] = 1; E = r[0]; ks, As, Es = [], [a.copy()], [E]
    for p in range(1, P + 1):
        k = -(a[:p] @ r[p:0:-1]) / E
        a = np.concatenate([[1.0], a[1:p] + k * a[p - 1:0:-1], [k], a[p + 1:]])
        E = E * (1 - k * k); ks.append(k); As.append(a.copy()); Es.append(E)
    return np.array(ks), np.array(As), np.array(Es)
def lpc_inputs():
    e = R(706).standard_normal(80); x = np.zeros(80)
    for n in range(80):
        x[n] = e[n] + (1.3 * x[n - 1] - 0.6 * x[n - 2] if n >= 2 else 0)
    return dict(x=x)
@case("levinson_lpc", inputs=lpc_inputs, tol=(1e-9, 1e-10),
      outputs=["r", "refl", "a", "err", "residual", "gain_db", "stable", "dE"])
def _(x):
    N, P = len(x), 6; xw = x * np.hamming(N)
    r = np.array([xw[k:] @ xw[:N - k] for k in range(P + 1)])
    ks, A, E = levinson_np(r)
    res = np.convolve(xw, A[P])[:N]
    # complex-step derivative: exact to rounding
    dE = np.array([levinson_np(r + 1e-30j * np.eye(P + 1)[i])[2][P].imag / 1e-30 for i in range(P + 1)])
    gain = 10 * np.log10(r[0] / E[P])
    return dict(r=r, refl=np.concatenate([[0.0], ks]), a=A, err=E, residual=res, gain_db=gain, stable=np.bool_(np.all(np.abs(ks) < 1)),
                dE=dE, __stdout__=[f"prediction gain {gain:.2f} dB"])


# 7 convolutional code (7, 5) with hard-decision Viterbi decoding and traceback
def viterbi_inputs():
    rg = R(707); T = 48; bits = rg.integers(0, 2, T).astype(np.int32); bits[-2:] = 0
    flips = np.zeros((T, 2), np.int32)
    for t, c in [(3, 0), (11, 1), (20, 0), (29, 1), (38, 0), (39, 1)]:
        flips[t, c] = 1
    return dict(bits=bits, flips=flips)
@case("conv_viterbi", inputs=viterbi_inputs, vk=True,
      outputs=["code", "rx", "metric", "surv", "decoded", "bit_errors", "packed"])
def _(bits, flips):
    T = len(bits); st = 0; code = np.zeros((T, 2), np.int32)
    o0 = lambda s, b: (b ^ (s >> 1) ^ (s & 1)); o1 = lambda s, b: b ^ (s & 1)
    for t in range(T):
        code[t] = [o0(st, bits[t]), o1(st, bits[t])]; st = (bits[t] << 1) | (st >> 1)
    rx = code ^ flips
    metric = np.full((T + 1, 4), 1000, np.int32); metric[0, 0] = 0; surv = np.zeros((T + 1, 4), np.int32)
    for t in range(1, T + 1):
        for s2 in range(4):
            b = s2 >> 1
            c = [metric[t - 1, p] + (o0(p, b) != rx[t - 1, 0]) + (o1(p, b) != rx[t - 1, 1]) for p in ((s2 & 1) << 1, ((s2 & 1) << 1) | 1)]
            metric[t, s2] = min(c); surv[t, s2] = 1 if c[1] < c[0] else 0
    s = int(np.argmin(metric[T])); dec = np.zeros(T, np.int32)
    for t in range(T - 1, -1, -1):
        dec[t] = s >> 1; s = ((s & 1) << 1) | surv[t + 1, s]
    be = int((dec != bits).sum())
    return dict(code=code, rx=rx, metric=metric, surv=surv, decoded=dec, bit_errors=np.int32(be),
                packed=np.packbits(dec.astype(np.uint8)), __stdout__=[f"channel flips {int(flips.sum())}, bit errors after decoding {be}"])


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
