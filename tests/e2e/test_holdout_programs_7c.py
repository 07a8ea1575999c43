"""Hold-out programs, seventh round (signal, image and audio processing and compression): MFCC
features and their gradient, STFT with overlap-add resynthesis, YIN pitch, Haar, Daubechies-4
and integer CDF 5/3 lifting, JPEG-like block DCT with zigzag order, entropy symbols and learned
quantisation steps, Levinson-Durbin LPC and its cepstrum, hard and soft Viterbi decoding of
convolutional codes, delta/run-length, Huffman and rANS coding in narrow integer types,
bilateral and guided filters (with derivatives), summed-area boxes, Perona-Malik diffusion,
Lucas-Kanade flow, Harris corners and Gaussian/Laplacian pyramids, each checked against NumPy
computed here. Each case states its
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



# 8 i16 deltas, u16 zigzag words, block widths, zero runs, u8 bytes, Fletcher-16, decoding
def delta_inputs():
    rg = R(708); d = rg.integers(-40, 40, 48); d[rg.random(48) < 0.35] = 0; d[20] = 30000; d[21] = 25000
    return dict(s=np.cumsum(d).astype(np.int64).astype(np.int16))
@case("delta_zigzag_rle", inputs=delta_inputs,
      outputs=["delta", "zig", "width", "payload_bits", "run", "run_end", "n_runs", "longest", "bytes", "fletcher", "dec"])
def _(s):
    N = len(s); d = np.diff(s.astype(np.int64), prepend=0).astype(np.int16)   # wraps as i16
    di = d.astype(np.int64); zig = np.where(di >= 0, 2 * di, -2 * di - 1).astype(np.uint16)
    width = np.int32([max(int(z).bit_length() for z in zig[8 * b:8 * b + 8]) for b in range(N // 8)])
    run = np.zeros(N, np.int32)
    for n in range(N):
        run[n] = (run[n - 1] + 1 if n else 1) if d[n] == 0 else 0
    end = (d == 0) & np.append(d[1:] != 0, True)
    by = np.stack([zig % 256, zig // 256], 1).astype(np.uint8)
    f1 = f2 = 0
    for b in by.ravel():
        f1 = (f1 + int(b)) % 255; f2 = (f2 + f1) % 255
    pb = int((4 + 8 * width).sum())
    return dict(delta=d, zig=zig, width=width, payload_bits=np.int32(pb), run=run, run_end=end, n_runs=np.int32(end.sum()),
                longest=np.int32(run.max()), bytes=by, fletcher=np.uint16(f2 * 256 + f1), dec=s,
                __stdout__=[f"payload {pb} bits in {int(end.sum())} zero runs"])


# 9 Huffman code lengths by two queues, canonical codes
@case("huffman_lengths", inputs=lambda: dict(w=np.int32([1, 1, 2, 3, 5, 5, 6, 9, 14, 20, 31])),
      outputs=["st", "clen", "kraft", "coded_bits", "root_weight", "code"])
def _(w):
    n = len(w); leaves = list(w); inner = []; l = j = 0; st = np.zeros((n, 5), np.int32)
    top = list(range(n)); depth = [0] * n
    for m in range(1, n):
        picks = []
        for _ in range(2):
            if l < n and (j >= len(inner) or w[l] <= inner[j]):
                picks.append((int(w[l]), l)); l += 1
            else:
                picks.append((inner[j], n + j)); j += 1
        inner.append(picks[0][0] + picks[1][0])
        st[m] = [l, j, inner[-1], picks[0][1], picks[1][1]]
        for k in range(n):
            if top[k] in (picks[0][1], picks[1][1]):
                top[k] = n + m - 1; depth[k] += 1
    L = np.int32(depth); order = sorted(range(n), key=lambda k: (L[k], k)); code = np.zeros(n, np.int32); c = 0
    for i, k in enumerate(order):
        if i:
            c = (c + 1) << int(L[k] - L[order[i - 1]])
        code[k] = c
    return dict(st=st, clen=L, kraft=(0.5 ** L.astype(float)).sum(), coded_bits=np.int32((w * L).sum()),
                root_weight=np.int32(st[n - 1, 2]), code=code)



def box_mean(p, r):
    H, W = p.shape; out = np.zeros_like(p)
    for i in range(H):
        for j in range(W):
            out[i, j] = p[max(0, i - r):i + r + 1, max(0, j - r):j + r + 1].mean()
    return out


# 10 bilateral and guided filters in f32 over named H and W
def bilateral_inputs():
    i, j = np.mgrid[0:14, 0:18]; rg = R(710)
    img = ((j > 8).astype(float) * 0.6 + 0.2 + 0.05 * rg.standard_normal((14, 18)) + 0.1 * (i > 6)).astype(np.float32)
    return dict(img=img, guide=(0.8 * img + 0.1 + 0.02 * rg.standard_normal((14, 18))).astype(np.float32))
@case("bilateral_guided", inputs=bilateral_inputs, tol=(2e-4, 2e-5),
      outputs=["bilateral", "mean_I", "cov", "a", "b", "guided", "residual"])
def _(img, guide):
    img, guide = img.astype(float), guide.astype(float); H, W = img.shape; R2 = 2
    pad = np.pad(img, R2, mode="edge"); ab = np.arange(-R2, R2 + 1)
    ws = np.exp(-(ab[:, None] ** 2 + ab[None] ** 2) / (2 * 1.5 ** 2))
    bil = np.zeros_like(img)
    for i in range(H):
        for j in range(W):
            nb = pad[i:i + 5, j:j + 5]; wt = ws * np.exp(-(nb - img[i, j]) ** 2 / (2 * 0.2 ** 2))
            bil[i, j] = (wt * nb).sum() / wt.sum()
    mI, mp = box_mean(guide, 2), box_mean(img, 2)
    cov = box_mean(guide * img, 2) - mI * mp; var = box_mean(guide * guide, 2) - mI * mI
    a = cov / (var + 0.01); b = mp - a * mI; q = box_mean(a, 2) * guide + box_mean(b, 2)
    return dict(bilateral=bil, mean_I=mI, cov=cov, a=a, b=b, guided=q, residual=((q - img) ** 2).mean())


# 11 Lucas-Kanade flow with per-pixel 2x2 solves over a 5x5 window
def lk_inputs():
    i, j = np.mgrid[0:16, 0:20].astype(float)
    f = lambda y, x: np.sin(x / 2.5) * np.cos(y / 3.0) + 0.5 * np.exp(-((x - 9) ** 2 + (y - 7) ** 2) / 20)
    return dict(I0=f(i, j), I1=f(i + 0.2, j - 0.3))
@case("lucas_kanade", inputs=lk_inputs, tol=(1e-9, 1e-10), outputs=["Ix", "It", "T", "flow", "lmin", "n_reliable", "mean_flow"])
def _(I0, I1):
    H, W = I0.shape; avg = (I0 + I1) / 2; Ix = np.zeros((H, W)); Iy = np.zeros((H, W))
    Ix[:, 1:-1] = (avg[:, 2:] - avg[:, :-2]) / 2; Iy[1:-1] = (avg[2:] - avg[:-2]) / 2; It = I1 - I0
    T = np.zeros((H, W, 5)); flow = np.zeros((H, W, 2)); inside = np.zeros((H, W), bool); inside[3:H - 3, 3:W - 3] = True
    for i in range(3, H - 3):
        for j in range(3, W - 3):
            gx, gy, gt = (g[i - 2:i + 3, j - 2:j + 3] for g in (Ix, Iy, It))
            T[i, j] = [(gx * gx).sum(), (gx * gy).sum(), (gy * gy).sum(), -(gx * gt).sum(), -(gy * gt).sum()]
            A = np.array([[T[i, j, 0], T[i, j, 1]], [T[i, j, 1], T[i, j, 2]]])
            if abs(np.linalg.det(A)) >= 1e-9:
                flow[i, j] = np.linalg.solve(A, T[i, j, 3:])
    tr = T[..., 0] + T[..., 2]; det = T[..., 0] * T[..., 2] - T[..., 1] ** 2
    lmin = 0.5 * (tr - np.sqrt(tr * tr - 4 * det)); rel = inside & (lmin > 1e-3); n = int(rel.sum())
    mf = flow[rel].sum(0) / n
    return dict(Ix=Ix, It=It, T=T, flow=flow, lmin=lmin, n_reliable=np.int32(n), mean_flow=mf,
                __stdout__=[f"reliable pixels {n}, mean flow {mf[0]:.3f} {mf[1]:.3f}"])


# 12 Harris corners with 3x3 non-maximum suppression and a filtered corner list
def harris_inputs():
    img = np.zeros((24, 24)); img[4:11, 5:13] = 1.0; img[14:21, 12:20] = 0.7; img[13:17, 2:6] = 0.4
    return dict(img=(img + 0.01 * R(712).standard_normal((24, 24))).astype(np.float32))
@case("harris_nms", inputs=harris_inputs, tol=(1e-4, 1e-5), vk=True,
      outputs=["gx", "Sxy", "resp", "is_corner", "corners", "n_corners", "best_rc"])
def _(img):
    N = 24; im = img.astype(np.float64); p = np.pad(im, 1); sx = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1.0]])
    gx = sum(sx[a, b] * p[a:a + N, b:b + N] for a in range(3) for b in range(3))
    gy = sum(sx[b, a] * p[a:a + N, b:b + N] for a in range(3) for b in range(3))
    g3 = np.array([0.25, 0.5, 0.25])
    sm = lambda m: sum(g3[a] * g3[b] * np.pad(m, 1, mode="edge")[a:a + N, b:b + N] for a in range(3) for b in range(3))
    Sxx, Sxy, Syy = sm(gx * gx), sm(gx * gy), sm(gy * gy)
    resp = Sxx * Syy - Sxy ** 2 - 0.05 * (Sxx + Syy) ** 2; peak = resp.max()
    isc = np.zeros((N, N), bool)
    for i in range(1, N - 1):
        for j in range(1, N - 1):
            isc[i, j] = resp[i, j] > 0.1 * peak and resp[i, j] >= resp[i - 1:i + 2, j - 1:j + 2].max()
    best = int(np.argmax(resp)); rc = (best // N, best % N); n = int(isc.sum())
    return dict(gx=gx, Sxy=Sxy, resp=resp, is_corner=isc, corners=np.flatnonzero(isc).astype(np.int32), n_corners=np.int32(n),
                **{"best_rc.0": np.int32(rc[0]), "best_rc.1": np.int32(rc[1])}, __stdout__=[f"{n} corners, strongest at {rc[0]}, {rc[1]}"])


# 13 Gaussian and Laplacian pyramids through size-generic down/up functions
def pyr_down(g):
    h, w = g.shape; k = np.array([1, 4, 6, 4, 1.0]); p = np.pad(g, 2, mode="edge")
    full = sum(k[a] * k[b] * p[a:a + h, b:b + w] for a in range(5) for b in range(5)) / 256
    return full[::2, ::2]
def pyr_up(g, h, w):
    k = np.array([1, 4, 6, 4, 1.0]); z = np.zeros((h + 4, w + 4)); z[2:h + 2:2, 2:w + 2:2] = g
    return sum(k[a] * k[b] * z[a:a + h, b:b + w] for a in range(5) for b in range(5)) / 64
def pyr_inputs():
    i, j = np.mgrid[0:16, 0:24]
    return dict(img=np.cos(i / 2.0) * np.sin(j / 3.0) + (i + j > 20) + 0.1 * R(713).standard_normal((16, 24)))
@case("laplacian_pyramid", inputs=pyr_inputs, tol=(1e-10, 1e-11), outputs=["G1", "G2", "L0", "L1", "R0", "err", "band_energy", "sharpened"])
def _(img):
    H, W = img.shape; G1 = pyr_down(img); G2 = pyr_down(G1)
    L0 = img - pyr_up(G1, H, W); L1 = G1 - pyr_up(G2, H // 2, W // 2)
    R0 = pyr_up(pyr_up(G2, H // 2, W // 2) + L1, H, W) + L0
    sh = pyr_up(pyr_up(G2, H // 2, W // 2) + 1.5 * L1, H, W) + 1.5 * L0
    return dict(G1=G1, G2=G2, L0=L0, L1=L1, R0=R0, err=np.abs(R0 - img).max(),
                band_energy=np.array([(L0 ** 2).sum(), (L1 ** 2).sum(), (G2 ** 2).sum()]), sharpened=sh)



# 14 MFCC-like loss and its gradient with respect to the signal and the filterbank
def mfcc_loss_np(x, fb, target):
    L, HOP, F = 16, 8, target.shape[0]; n = np.arange(L); k = np.arange(L // 2 + 1)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / L); ang = 2 * np.pi * ((k[:, None] * n) % L) / L
    fr = np.stack([x[f * HOP:f * HOP + L] for f in range(F)]) * hann
    pw = (fr @ np.cos(ang).T) ** 2 + (fr @ np.sin(ang).T) ** 2
    lm = np.log(1e-3 + pw @ fb.T); M = fb.shape[0]
    cep = lm @ np.cos(np.pi * np.arange(4)[:, None] * (np.arange(M) + 0.5) / M).T
    return ((cep - target) ** 2).mean()
def mfcc_fb():
    k = np.arange(9); c = 1.0 + 1.4 * np.arange(5)[:, None]; d = k - c
    return np.where(np.abs(d) > 1.5, 0.0, 1 - d * d / 2.25)
@case("mfcc_grad", inputs=lambda: dict(x=R(714).standard_normal(40), target=R(715).standard_normal((4, 4))),
      tol=(1e-8, 1e-10), outputs=["fb", "loss", "dx", "dfb"])
def _(x, target):
    fb = mfcc_fb(); h = 1e-30
    dx = np.array([mfcc_loss_np(x + 1j * h * np.eye(len(x))[i], fb, target).imag / h for i in range(len(x))])
    dfb = np.array([[mfcc_loss_np(x, fb + 1j * h * (np.arange(fb.size) == m * 9 + k).reshape(fb.shape), target).imag / h
                     for k in range(9)] for m in range(5)])
    return dict(fb=fb, loss=mfcc_loss_np(x, fb, target), dx=dx, dfb=dfb)


# 15 summed-area tables as 2-D recurrences, box means and deviations of two radii (sat_two_radii)
@case("sat_two_radii", inputs=lambda: dict(img=R(716).uniform(0, 1, (11, 13)) + np.add.outer(np.arange(11), np.arange(13)) * 0.05),
      tol=(1e-10, 1e-10), outputs=["S", "mean", "sd", "band", "top_col", "total"])
def _(img):
    H, W = img.shape; mean = np.zeros((2, H, W)); sd = np.zeros((2, H, W))
    for k, r in enumerate([1, 3]):
        for i in range(H):
            for j in range(W):
                win = img[max(0, i - r):i + r + 1, max(0, j - r):j + r + 1]
                mean[k, i, j] = win.mean(); sd[k, i, j] = np.sqrt(max(0.0, (win ** 2).mean() - win.mean() ** 2))
    S = img.cumsum(0).cumsum(1)
    return dict(S=S, mean=mean, sd=sd, band=mean[0] - mean[1], top_col=sd[0].argmax(1).astype(np.int32), total=S[-1, -1])


# 16 LPC to cepstrum and back, log magnitude responses
def lpc_poly():
    a = np.array([1.0])
    for k in [0.6, -0.4, 0.3, -0.2, 0.1]:
        a = np.concatenate([a, [0.0]]) + k * np.concatenate([a, [0.0]])[::-1]
    return a[1:]
@case("lpc_cepstrum", inputs=lambda: dict(a=lpc_poly()), tol=(1e-10, 1e-12), outputs=["c", "logmag_poly", "logmag_cep", "back", "err"])
def _(a):
    P, Q = len(a), 12; ak = np.zeros(Q); ak[1:P + 1] = a; c = np.zeros(Q)
    for n in range(1, Q):
        c[n] = -ak[n] - sum(k / n * c[k] * ak[n - k] for k in range(1, n))
    w = np.pi * (np.arange(6) + 0.5) / 6; A = 1 + np.exp(-1j * np.outer(w, np.arange(1, P + 1))) @ a
    back = np.zeros(P + 1)
    for n in range(1, P + 1):
        back[n] = -c[n] - sum(k / n * c[k] * back[n - k] for k in range(1, n))
    return dict(c=c, logmag_poly=-np.log(np.abs(A)), logmag_cep=np.cos(np.outer(w, np.arange(1, Q))) @ c[1:], back=back,
                err=np.abs(back[1:] - a).max())



# 17 Haar shrinkage through an array-valued recurrence, d(mse)/d(threshold)
def shrink_np(x, clean, thr):
    """Analysis, soft threshold (thr may be complex, for a complex-step derivative), synthesis."""
    N, J, r2 = 32, 3, np.sqrt(2); v = x.copy()
    for j in range(J):
        m = N >> j
        v = np.concatenate([(v[0:m:2] + v[1:m:2]) / r2, (v[0:m:2] - v[1:m:2]) / r2, v[m:]])
    c = N >> J; d = v[c:]
    w = np.concatenate([v[:c], np.where(np.abs(d) > np.real(thr), np.sign(d) * (np.abs(d) - thr), 0)])
    for u in range(1, J + 1):
        m = N >> (J - u); a, d = w[:m // 2], w[m // 2:m]
        w = np.concatenate([np.stack([(a + d) / r2, (a - d) / r2], 1).ravel(), w[m:]])
    return w, ((w - clean) ** 2).mean()
def shrink_inputs():
    t = np.arange(32); clean = np.where(t < 12, 1.0, -0.5) + 0.3 * np.sin(t / 3)
    return dict(x=clean + 0.2 * R(717).standard_normal(32), clean=clean, thr=np.float64(0.25))
@case("wavelet_shrink", inputs=shrink_inputs, tol=(1e-10, 1e-12), outputs=["lv", "w", "y", "mse", "dmse", "zeroed"])
def _(x, clean, thr):
    N, r2 = 32, np.sqrt(2); lv = [x]
    for j in range(1, 4):
        v = lv[-1]; m = N >> (j - 1)
        lv.append(np.concatenate([(v[0:m:2] + v[1:m:2]) / r2, (v[0:m:2] - v[1:m:2]) / r2, v[m:]]))
    y, mse = shrink_np(x, clean, thr)
    dmse = shrink_np(x, clean, thr + 1e-30j)[1].imag / 1e-30
    w = lv[3].copy(); w[4:] = np.sign(w[4:]) * np.maximum(np.abs(w[4:]) - thr, 0); z = int((w[4:] == 0).sum())
    return dict(lv=np.array(lv), w=w, y=y, mse=mse, dmse=dmse, zeroed=np.int32(z), __stdout__=[f"threshold zeroes {z} details"])


# 18 JPEG entropy symbols: i16 coefficients, zigzag comprehension, (run, size) tuple match
ZIGZAG = sorted(range(64), key=lambda p: (p // 8 + p % 8, (p % 8) if (p // 8 + p % 8) % 2 == 0 else (p // 8)))
def jsym_inputs():
    rg = R(718); u, v = np.mgrid[0:8, 0:8]
    coef = rg.standard_normal((3, 8, 8)) * 400 / (1 + u + v) ** 1.5; coef[1, 3:, 3:] = 0; coef[2, 1:, :] *= 0.05
    return dict(coef=coef, Q=(8.0 + 3 * (u + v)).astype(float))
@case("jpeg_symbols", inputs=jsym_inputs, outputs=["q", "scan", "last", "run", "symbol", "amplitude", "n_symbols", "total_amp_bits"])
def _(coef, Q):
    B = len(coef); q = np.round(coef / Q).astype(np.int16); scan = q.reshape(B, 64)[:, ZIGZAG]
    last = np.int32([max([p for p in range(1, 64) if scan[b, p]] or [0]) for b in range(B)])
    run = np.zeros((B, 64), np.int32)
    for p in range(2, 64):
        run[:, p] = np.where(scan[:, p - 1] == 0, run[:, p - 1] + 1, 0)
    size = np.vectorize(lambda v: int(abs(int(v))).bit_length())(scan).astype(np.int32)
    sym = np.full((B, 64), -1, np.int32)
    for b in range(B):
        for p in range(1, 64):
            if p > last[b]:
                sym[b, p] = 256 if p == last[b] + 1 else -1
            elif scan[b, p]:
                sym[b, p] = (run[b, p] % 16) * 16 + size[b, p]
            elif run[b, p] % 16 == 15:
                sym[b, p] = 240
    sym[:, 0] = 0   # no clause defines p = 0
    sc = scan.astype(np.int64); amp = np.where(sc >= 0, sc, sc + 2 ** size - 1).astype(np.uint16)
    return dict(q=q, scan=scan, last=last, run=run, symbol=sym, amplitude=amp, n_symbols=(sym[:, 1:] >= 0).sum(1).astype(np.int32),
                total_amp_bits=np.int32(size[:, 1:][scan[:, 1:] != 0].sum()))



# 19 iterative global Lucas-Kanade translation with bilinear warping
def lkt_inputs():
    i, j = np.mgrid[0:18, 0:22].astype(float)
    f = lambda y, x: np.sin(x / 3.0) + np.cos(y / 2.5) + 0.3 * np.sin((x + y) / 4.0)
    return dict(I0=f(i, j), I1=f(i - 0.7, j - 1.3))
@case("lk_translation", inputs=lkt_inputs, tol=(1e-9, 1e-10), outputs=["A11", "det", "du", "dv", "resid", "step_size"])
def _(I0, I1):
    H, W = I0.shape; B = 3; gx = np.zeros((H, W)); gy = np.zeros((H, W))
    gx[:, 1:-1] = (I0[:, 2:] - I0[:, :-2]) / 2; gy[1:-1] = (I0[2:] - I0[:-2]) / 2
    sl = (slice(B, H - B), slice(B, W - B)); i, j = np.mgrid[0:H, 0:W].astype(float)
    A11, A12, A22 = (gx[sl] ** 2).sum(), (gx[sl] * gy[sl]).sum(), (gy[sl] ** 2).sum(); det = A11 * A22 - A12 ** 2
    def warp(u, v):
        y, x = i + v, j + u; fy = np.clip(np.floor(y), 0, H - 2); fx = np.clip(np.floor(x), 0, W - 2)
        a, b = fy.astype(int), fx.astype(int); ty, tx = y - fy, x - fx
        return (1 - ty) * ((1 - tx) * I1[a, b] + tx * I1[a, b + 1]) + ty * ((1 - tx) * I1[a + 1, b] + tx * I1[a + 1, b + 1])
    du, dv, res = [0.0], [0.0], []
    for k in range(7):
        e = (I0 - warp(du[-1], dv[-1]))[sl]; res.append((e ** 2).sum())
        if k < 6:
            b1, b2 = (gx[sl] * e).sum(), (gy[sl] * e).sum()
            du.append(du[-1] + (A22 * b1 - A12 * b2) / det); dv.append(dv[-1] + (A11 * b2 - A12 * b1) / det)
    du, dv = np.array(du), np.array(dv)
    return dict(A11=A11, det=det, du=du, dv=dv, resid=np.array(res), step_size=np.concatenate([[0.0], np.abs(np.diff(du)) + np.abs(np.diff(dv))]),
                __stdout__=[f"shift after 6 iterations: {du[-1]:.4f}, {dv[-1]:.4f}"])


# 20 soft-decision Viterbi for the (15, 17) code with a u8 shift register and row-valued metrics
def vsoft_inputs():
    rg = R(720); T = 40; bits = rg.integers(0, 2, T).astype(np.int32); bits[-3:] = 0
    return dict(bits=bits, noise=(0.8 * rg.standard_normal((T, 2))).astype(np.float32))
@case("viterbi_soft", inputs=vsoft_inputs, tol=(1e-4, 1e-3), outputs=["reg", "code", "rx", "pm", "surv", "decoded", "errors"])
def _(bits, noise):
    T, G = len(bits), [13, 15]; tap = lambda r, g: bin(r & g).count("1") % 2
    reg = np.zeros(T + 1, np.uint8)
    for t in range(1, T + 1):
        reg[t] = (int(reg[t - 1]) * 2 + bits[t - 1]) % 16
    full = (reg[:T].astype(int) * 2 + bits) % 16
    code = np.int32([[tap(f, g) for g in G] for f in full]); rx = (2 * code - 1).astype(np.float32) + noise
    def branch(t, s, b):
        r = (s * 2 + b) % 16
        return np.float32(sum((rx[t, c] - np.float32(2 * tap(r, G[c]) - 1)) ** 2 for c in range(2)))
    pm = np.zeros((T + 1, 8), np.float32); pm[0, 1:] = 1e6; surv = np.zeros((T + 1, 8), np.int32)
    for t in range(1, T + 1):
        for s2 in range(8):
            c = [pm[t - 1, s2 // 2 + 4 * r] + branch(t - 1, s2 // 2 + 4 * r, s2 % 2) for r in range(2)]
            pm[t, s2] = min(c); surv[t, s2] = 1 if c[1] < c[0] else 0
    s = int(np.argmin(pm[T])); dec = np.zeros(T, np.int32)
    for t in range(T - 1, -1, -1):
        dec[t] = s % 2; s = s // 2 + 4 * surv[t + 1, s]
    e = int((dec != bits).sum())
    return dict(reg=reg, code=code, rx=rx, pm=pm, surv=surv, decoded=dec, errors=np.int32(e), __stdout__=[f"decoded with {e} bit errors"])


# 21 a batched spectrogram over rest axes: power in dB, centroid, flatness, flux, onset frame
def stftb_inputs():
    n = np.arange(64); rg = R(721)
    x = np.stack([[np.sin(n * (0.3 + 0.2 * c + 0.1 * d)) * (n > 20 + 8 * d) + 0.05 * rg.standard_normal(64) for d in range(3)] for c in range(2)])
    return dict(x=x.astype(np.float32))
@case("stft_batched", inputs=stftb_inputs, tol=(2e-3, 2e-3), outputs=["pw", "db", "centroid", "flatness", "flux", "onset"])
def _(x):
    L, HOP = 16, 6; F = (x.shape[-1] - L) // HOP + 1; n = np.arange(L); w = 0.5 - 0.5 * np.cos(2 * np.pi * n / L)
    fr = np.stack([x[..., f * HOP:f * HOP + L] * w for f in range(F)], -2).astype(np.float64)
    pw = np.abs(np.fft.rfft(fr, axis=-1)) ** 2 + 1e-8; K = pw.shape[-1]; k = np.arange(K)
    sq = np.sqrt(pw); flux = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.maximum(0, sq[..., 1:, :] - sq[..., :-1, :]).sum(-1)], -1)
    return dict(pw=pw, db=10 * np.log10(pw), centroid=(pw * k).sum(-1) / pw.sum(-1),
                flatness=np.exp(np.log(pw).mean(-1)) / pw.mean(-1), flux=flux, onset=(1 + flux[..., 1:].argmax(-1)).astype(np.int32))



# 22 reversible CDF 5/3 integer lifting with floor division, guarded clauses interleaving
def cdf53_np(v):
    v = v.astype(np.int64); e, o = v[0::2], v[1::2]; M = len(e)
    d = o - (e + e[np.minimum(np.arange(M) + 1, M - 1)]) // 2
    s = e + (d[np.maximum(np.arange(M) - 1, 0)] + d + 2) // 4
    return np.concatenate([s, d]).astype(np.int32)
@case("cdf53_integer", inputs=lambda: dict(x=(R(722).integers(-60, 60, 24).cumsum()).astype(np.int32)), vk=True,
      outputs=["y", "back", "lossless", "y2", "detail_energy"])
def _(x):
    y = cdf53_np(x); H = len(x) // 2; d = y[H:].astype(np.int64)
    return dict(y=y, back=x, lossless=np.bool_(True), y2=cdf53_np(y[:H]), detail_energy=np.int32((d * d).sum()))


# 23 window |> DFT (a tuple) |> power, a peak with parabolic interpolation, array-pattern labels
@case("dft_pipeline", inputs=lambda: dict(x=np.sin(2 * np.pi * 52 * np.arange(48) / 480) + 0.5 * np.sin(2 * np.pi * 104 * np.arange(48) / 480 + 0.3)
                                            + 0.02 * R(723).standard_normal(48)),
      tol=(1e-9, 1e-10), outputs=["spec", "re", "im", "bin", "frac", "freq", "strong", "label"])
def _(x):
    N = 48; X = np.fft.rfft(x * (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N) / N))); p = np.abs(X) ** 2
    kk = 1 + int(np.argmax(p[1:N // 2])); a, b, c = np.log(p[kk - 1:kk + 2])
    frac = kk + 0.5 * (a - c) / (a - 2 * b + c); strong = (p > 0.1 * p[kk]).astype(np.int32)
    f3 = [strong[kk], strong[2 * kk], strong[3 * kk]]
    label = 3 if f3 == [1, 1, 1] else 2 if f3[:2] == [1, 1] else 1 if f3[0] == 1 else 0
    freq = frac * 480 / N
    return dict(spec=p, re=X.real, im=X.imag, bin=np.int32(kk), frac=frac, freq=freq, strong=strong, label=np.int32(label),
                __stdout__=[f"peak bin {kk}, interpolated {freq:.3f} Hz, harmonic label {label}"])



# 24 Perona-Malik diffusion over iterations, a clamped 3x3 local mean of every iterate
def pm_inputs():
    i, j = np.mgrid[0:12, 0:15]
    return dict(img=(i > 5) * 0.8 + (j > 9) * 0.3 + 0.08 * R(724).standard_normal((12, 15)))
@case("perona_malik", inputs=pm_inputs, tol=(1e-10, 1e-12), outputs=["u", "local", "tv", "half_at", "smoothness"])
def _(img):
    H, W = img.shape; T = 8; g = lambda d: np.exp(-(d / 0.15) ** 2); u = [img]
    for t in range(T):
        c = u[-1]; p = np.pad(c, 1, mode="edge")
        n, s, e, w = p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, 2:], p[1:-1, :-2]
        u.append(c + 0.2 * sum(g(v - c) * (v - c) for v in (n, s, e, w)))
    u = np.array(u)
    local = np.array([[[ut[max(0, i - 1):i + 2, max(0, j - 1):j + 2].mean() for j in range(W)] for i in range(H)] for ut in u])
    tv = np.abs(np.diff(u, axis=1)).sum((1, 2)) + np.abs(np.diff(u, axis=2)).sum((1, 2))
    below = np.nonzero(tv < 0.5 * tv[0])[0]
    return dict(u=u, local=local, tv=tv, half_at=np.int32(below[0] if len(below) else T + 1), smoothness=((u - local) ** 2).sum((1, 2)))


# 25 a Gaussian pyramid as a recurrence over levels in one padded tensor, DoG between levels
@case("gauss_levels", inputs=lambda: dict(img=np.add.outer(np.sin(np.arange(16) / 2.0), np.cos(np.arange(24) / 3.0)) + 0.1 * R(725).standard_normal((16, 24))),
      tol=(1e-10, 1e-12), outputs=["G", "mean", "coarsest", "dog"])
def _(img):
    H, W = img.shape; G = np.zeros((4, H, W)); G[0] = img; k = np.array([1, 4, 6, 4, 1.0])
    for l in range(1, 4):
        prev = G[l - 1, :H >> (l - 1), :W >> (l - 1)]; p = np.pad(prev, 2, mode="edge"); h, w = prev.shape
        full = sum(k[a] * k[b] * p[a:a + h, b:b + w] for a in range(5) for b in range(5)) / 256
        G[l, :H >> l, :W >> l] = full[::2, ::2]
    mean = np.array([G[l, :H >> l, :W >> l].mean() for l in range(4)])
    dog = np.zeros((3, H, W))
    for l in range(3):
        h, w = H >> l, W >> l; i, j = np.mgrid[0:h, 0:w]
        dog[l, :h, :w] = G[l, :h, :w] - G[l + 1, i // 2, j // 2]
    return dict(G=G, mean=mean, coarsest=G[3, :H // 8, :W // 8], dog=dog)



# 26 learned quantisation steps through a straight-through rounding rule (`@fn`), trained by descent
def lq_loss_grad(x, q):
    """Loss and its gradient in q, rounding's derivative taken as 1 (straight through)."""
    B = len(x); n = np.arange(8); C = np.cos(np.pi * (2 * n[None] + 1) * n[:, None] / 16) * 0.5; C[0] = np.sqrt(0.125)
    c = x @ C.T; r = c / q; deq = np.round(r) * q; rec = deq @ C; m = B * 8
    err = ((rec - x) ** 2).sum() / m; rate = np.log1p(r ** 2).sum() / m
    d_deq = 2 / m * (rec - x) @ C.T
    g = (d_deq * (np.round(r) - r)).sum(0) + 0.02 * (2 * r / (1 + r ** 2) * (-r / q)).sum(0) / m
    return err + 0.02 * rate, g
@case("learned_quant", inputs=lambda: dict(x=np.cumsum(R(726).standard_normal((6, 8)) * 2, 1)), tol=(1e-9, 1e-10),
      outputs=["coef", "q", "losses"])
def _(x):
    n = np.arange(8); C = np.cos(np.pi * (2 * n[None] + 1) * n[:, None] / 16) * 0.5; C[0] = np.sqrt(0.125)
    q = [np.array([1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5])]
    for e in range(12):
        q.append(np.maximum(0.2, q[-1] - 0.5 * lq_loss_grad(x, q[-1])[1]))
    losses = np.array([lq_loss_grad(x, qe)[0] for qe in q])
    return dict(coef=x @ C.T, q=np.array(q), losses=losses, __stdout__=[f"loss {losses[0]:.4f} -> {losses[-1]:.4f}"])



# 27 YIN pitch: difference function, cumulative-mean normalisation, threshold, refinement
def yin_inputs():
    sr = 8000.0; t = np.arange(400) / sr; f0 = np.where(t < 0.025, 250.0, 320.0)
    x = np.sin(2 * np.pi * np.cumsum(f0) / sr) + 0.4 * np.sin(4 * np.pi * np.cumsum(f0) / sr)
    x[300:] = 0.3 * R(727).standard_normal(100)
    return dict(x=x, sr=np.float64(sr))
@case("yin_pitch", inputs=yin_inputs, tol=(1e-9, 1e-10), outputs=["d", "cmnd", "lag", "voiced", "refined", "pitch", "smooth", "n_voiced"])
def _(x, sr):
    W, HOP, TAU = 48, 24, 40; F = (len(x) - W - TAU) // HOP + 1
    d = np.array([[((x[f * HOP:f * HOP + W] - x[f * HOP + t:f * HOP + t + W]) ** 2).sum() for t in range(TAU)] for f in range(F)])
    run = np.cumsum(d, 1); run[:, 0] = 0
    cmnd = np.ones((F, TAU)); cmnd[:, 1:] = d[:, 1:] * np.arange(1, TAU) / run[:, 1:]
    lag = np.zeros(F, np.int32); voiced = np.zeros(F, bool)
    for f in range(F):
        under = [t for t in range(2, TAU - 1) if cmnd[f, t] < 0.15 and cmnd[f, t] <= cmnd[f, t + 1]]
        voiced[f] = bool(under); lag[f] = under[0] if under else 2 + int(np.argmin(cmnd[f, 2:TAU - 1]))
    a, b, c = (cmnd[np.arange(F), lag + k] for k in (-1, 0, 1))
    ref = lag + 0.5 * (a - c) / (a - 2 * b + c); pitch = np.where(voiced, sr / ref, 0.0)
    smooth = np.array([pitch[max(0, f - 1):f + 2].mean() for f in range(F)]); n = int(voiced.sum())
    return dict(d=d, cmnd=cmnd, lag=lag, voiced=voiced, refined=ref, pitch=pitch, smooth=smooth, n_voiced=np.int32(n),
                __stdout__=[f"{n} of {F} frames voiced"])



# 28 rANS in u32: reverse encoding with byte renormalisation, forward decoding
def rans_inputs():
    f = np.uint32([2048, 1024, 512, 300, 200, 11, 1]); p = f / 4096.0
    return dict(sym=R(728).choice(7, size=90, p=p).astype(np.int32), f=f)
@case("rans_coder", inputs=rans_inputs, tol=(1e-12, 1e-12), outputs=["c", "x", "nb", "byte", "total_bytes", "y", "decoded", "bits_per_symbol", "entropy"])
def _(sym, f):
    N, L = len(sym), 1 << 23; c = np.concatenate([[0], np.cumsum(f)]).astype(np.uint32)
    x = [L]; nb = [0]; byte = np.zeros((N + 1, 2), np.uint8)
    for u in range(1, N + 1):
        s = sym[N - u]; fs = int(f[s]); st = x[-1]; k = 0
        while st >= (1 << 19) * fs:
            byte[u, k] = st & 255; st >>= 8; k += 1
        nb.append(k); x.append((st // fs << 12) + st % fs + int(c[s]))
    y = [x[-1]]; dec = []
    for n in range(1, N + 1):
        slot = y[-1] & 4095; s = int(np.searchsorted(c, slot, side="right")) - 1; dec.append(s)
        z = int(f[s]) * (y[-1] >> 12) + slot - int(c[s]); u = N - n + 1
        for k in range(nb[u] - 1, -1, -1):
            z = (z << 8) | int(byte[u, k])
        y.append(z)
    tb = sum(nb) + 4
    return dict(c=c, x=np.uint32(x), nb=np.int32(nb), byte=byte, total_bytes=np.int32(tb), y=np.uint32(y), decoded=np.int32(dec),
                bits_per_symbol=tb * 8 / N, entropy=-np.log2(f[sym] / 4096.0).mean(),
                __stdout__=[f"{tb} bytes, {tb * 8 / N:.3f} bits per symbol"])



# 29 derivatives of a guided filter's error in eps and in the guide, through clamped box means
def guided_np(p, I, eps):
    box = lambda a: box_mean(a, 1)
    mI, mp = box(I), box(p); a = (box(I * p) - mI * mp) / (box(I * I) - mI * mI + eps)
    return box(a) * I + box(mp - a * mI)
def gg_inputs():
    rg = R(729); i, j = np.mgrid[0:7, 0:9]
    I = (j > 4) + 0.1 * rg.standard_normal((7, 9)); p = I + 0.2 * rg.standard_normal((7, 9))
    return dict(p=p, I=I, target=(j > 4) * 1.0, eps=np.float64(0.05))
@case("guided_grad", inputs=gg_inputs, tol=(1e-9, 1e-11), outputs=["q", "loss", "dl_deps", "dl_dI"])
def _(p, I, target, eps):
    loss = lambda I, eps: ((guided_np(p, I, eps) - target) ** 2).sum()
    h = 1e-30; E = np.eye(I.size).reshape(I.size, *I.shape)
    return dict(q=guided_np(p, I, eps), loss=loss(I, eps), dl_deps=loss(I, eps + 1j * h).imag / h,
                dl_dI=np.array([loss(I + 1j * h * e, eps).imag / h for e in E]).reshape(I.shape))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
