"""Hold-out programs, fifth round (data processing, bits and real-size images): group-by aggregates
through one-hot keys, a keyed join, ranking statistics, rolling windows, resampling with
interpolation, wrapping u32/u64 hashes, bitsets and popcounts, checksums, base64 packing, grey-scale
morphology, connected components by label propagation, histogram equalization, a Canny-like edge
detector, integral images and a bilinear warp, each checked against NumPy computed here. Each case
states its tolerance (`tol`, rtol and atol; integers and bools compare exactly); `vk` cases run on
vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 group-by through a one-hot matrix, pivot, match on count ranges
def sales_inputs():
    rg = R(501); n = 60
    region = rg.integers(0, 4, n).astype(np.int32)      # region 4 stays empty
    return dict(region=region, day=rg.integers(0, 7, n).astype(np.int32),
                amount=rg.uniform(1, 100, n).astype(np.float32))
@case("groupby_sales", inputs=sales_inputs, tol=(1e-4, 1e-4), vk=True,
      outputs=["count", "total", "mean", "biggest", "var", "share", "best", "pivot", "weekend", "class", "grand"])
def _(region, day, amount):
    a = amount.astype(np.float64); G = 5
    oh = region[:, None] == np.arange(G)
    count = oh.sum(0).astype(np.float64); total = (oh * a[:, None]).sum(0)
    mean = np.where(count > 0, total / np.maximum(count, 1), 0)
    biggest = np.array([a[region == g].max() if (region == g).any() else -np.inf for g in range(G)])
    var = np.array([a[region == g].var(ddof=1) if (region == g).sum() > 1 else 0.0 for g in range(G)])
    pivot = np.zeros((G, 7)); np.add.at(pivot, (region, day), a)
    cls = np.int32([0 if c == 0 else 1 if c <= 3 else 2 if c < 10 else 3 for c in count])
    return dict(count=count, total=total, mean=mean, biggest=biggest, var=var, share=a / total[region],
                best=np.int32(np.argmax(total)), pivot=pivot, weekend=pivot[:, 5] + pivot[:, 6], **{"class": cls},
                grand=total.sum(), __stdout__=[f"best region {np.argmax(total)}"])


# 2 inner / anti / left join by key equality
def join_inputs():
    rg = R(502); A, B = 40, 12
    cid = rg.permutation(np.arange(100, 100 + B * 2))[:B].astype(np.int32)
    oc = np.where(rg.random(A) < 0.8, cid[rg.integers(0, B, A)], rg.integers(200, 230, A)).astype(np.int32)
    return dict(order_cust=oc, order_qty=rg.integers(1, 9, A).astype(np.int32), order_price=rg.uniform(1, 50, A),
                cust_id=cid, cust_tier=rg.integers(0, 3, B).astype(np.int32), cust_disc=rg.uniform(0, 0.3, B))
@case("keyed_join", inputs=join_inputs, tol=(1e-10, 1e-10),
      outputs=["matched", "row", "revenue", "tier_of", "tier_revenue", "orphans", "orders_of", "idle", "left_disc", "units", "money"])
def _(order_cust, order_qty, order_price, cust_id, cust_tier, cust_disc):
    hit = order_cust[:, None] == cust_id[None, :]
    matched = hit.any(1); row = np.where(matched, hit.argmax(1), -1).astype(np.int32)
    rev = np.where(matched, order_qty * order_price * (1 - cust_disc[row]), 0.0)
    tier = np.where(matched, cust_tier[row], -1).astype(np.int32)
    orders_of = (hit * order_qty[:, None]).sum(0).astype(np.int32)
    return dict(matched=matched, row=row, revenue=rev, tier_of=tier,
                tier_revenue=np.array([rev[tier == t].sum() for t in range(3)]),
                orphans=np.int32((~matched).sum()), orders_of=orders_of, idle=cust_id[orders_of == 0],
                left_disc=np.where(matched, cust_disc[row], 0.0), units=np.int32(order_qty.sum()), money=rev.sum())


# 3 midranks, Spearman, trimmed mean, IQR, ECDF, Kendall tau
def rank_inputs():
    rg = R(503); x = np.round(rg.standard_normal(50) * 4) / 4     # ties on purpose
    return dict(x=x, y=0.6 * x + rg.standard_normal(50), q=np.linspace(-2, 2, 9))
@case("rank_spearman", inputs=rank_inputs, tol=(1e-10, 1e-12))
def _(x, y, q):
    N = len(x)
    def midrank(v):
        return np.array([(v < e).sum() + ((v == e).sum() + 1) / 2 for e in v])
    rx, ry = midrank(x), midrank(y); mr = (N + 1) / 2
    sp = ((rx - mr) * (ry - mr)).sum() / np.sqrt(((rx - mr) ** 2).sum() * ((ry - mr) ** 2).sum())
    s = np.sort(x, kind="stable"); cut = N // 10
    qt = lambda p: np.interp(p * (N - 1), np.arange(N), s)
    i, j = np.triu_indices(N, 1)
    conc = np.where((x[i] - x[j]) * (y[i] - y[j]) > 0, 1, -1).sum()
    return dict(rx=rx, ry=ry, spearman=sp, sorted=s, trimmed=s[cut:N - cut].mean(), iqr=qt(0.75) - qt(0.25),
                ecdf=(x[None, :] <= q[:, None]).mean(1), concord=np.int32(conc), tau=conc / (N * (N - 1) / 2))


# 4 rolling windows, Bollinger bands, outliers, EWMA, rising runs
def roll_inputs():
    rg = R(504); p = 100 + np.cumsum(rg.standard_normal(120)); p[[30, 77]] += [15, -14]
    return dict(p=p.astype(np.float32))
@case("rolling_bands", inputs=roll_inputs, tol=(2e-4, 2e-3), vk=True)
def _(p):
    p = p.astype(np.float64); T, W = len(p), 7
    win = [p[max(0, t - W + 1):t + 1] for t in range(T)]
    rmean = np.array([w.mean() for w in win]); rstd = np.array([w.std() for w in win])
    band = np.where(p > rmean + 2 * rstd, 1, np.where(p < rmean - 2 * rstd, -1, 0)).astype(np.int32)
    z = (p - p.mean()) / p.std(); out = np.abs(z) > 2.5
    med3 = np.median(np.stack([p[:-2], p[1:-1], p[2:]]), 0)
    cleaned = p.copy(); inner = out.copy(); inner[[0, -1]] = False; cleaned[inner] = med3[inner[1:-1]]
    ew = [p[0]]; run = [0]
    for t in range(1, T):
        ew.append(0.8 * ew[-1] + 0.2 * p[t]); run.append(run[-1] + 1 if p[t] > p[t - 1] else 0)
    run = np.int32(run)
    return dict(cs=np.cumsum(p), rmean=rmean, rmax=np.array([w.max() for w in win]), rmin=np.array([w.min() for w in win]),
                rstd=rstd, band=band, outlier=out, cleaned=cleaned, ew=np.array(ew), run=run,
                longest=np.int32(run.max()), n_out=np.int32(out.sum()))


# 5 djb2 and FNV-1a in wrapping u32, a 64-bit finalizer mix in wrapping u64, bucket collisions
def hash_inputs():
    rg = R(505); s = rg.integers(97, 123, (20, 12)).astype(np.uint8); s[3] = s[7]   # one duplicate row
    return dict(s=s)
@case("hash_mix", inputs=hash_inputs)
def _(s):
    M32, M64 = 2 ** 32, 2 ** 64
    djb = np.zeros((20, 13), np.uint32); fnv = np.zeros((20, 13), np.uint32); mixed = []
    for r in range(20):
        d, f = 5381, 2166136261; djb[r, 0], fnv[r, 0] = d, f
        for t, c in enumerate(s[r]):
            d = (d * 33 + int(c)) % M32; f = ((f ^ int(c)) * 16777619) % M32
            djb[r, t + 1], fnv[r, t + 1] = d, f
        x = (d << 32) | f
        x = ((x ^ (x >> 33)) * 0xff51afd7ed558ccd) % M64
        x = ((x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53) % M64
        mixed.append(x ^ (x >> 33))
    mixed = np.array(mixed, np.uint64); bucket = (mixed % 64).astype(np.int32)
    coll = sum(int(bucket[a] == bucket[b]) for a in range(20) for b in range(a + 1, 20))
    key = (djb[:, -1].astype(np.uint64) << np.uint64(32)) | fnv[:, -1].astype(np.uint64)
    return dict(djb=djb, fnv=fnv, key=key, mixed=mixed, bucket=bucket, collisions=np.int32(coll),
                low_fnv=fnv[:, -1] % np.uint32(65536))


# 6 bitsets in u32 words: and/or from bits, popcounts, Jaccard, SWAR popcount
def bitset_inputs():
    rg = R(506); m = rg.random((9, 96)) < rg.uniform(0.1, 0.5, (9, 1)); m[4] = m[2]; m[4, 50] ^= True
    w = (m.reshape(9, 3, 32) * (2 ** np.arange(32, dtype=np.uint64))).sum(2).astype(np.uint32)
    return dict(words=w)
@case("bitset_jaccard", inputs=bitset_inputs, tol=(1e-6, 1e-7))
def _(words):
    S = len(words); m = ((words[:, :, None] >> np.arange(32, dtype=np.uint32)) & 1).reshape(S, 96).astype(bool)
    inter = words[:, None] & words[None, :]; union = words[:, None] | words[None, :]
    i = (m[:, None] & m[None, :]).sum(2); u = (m[:, None] | m[None, :]).sum(2)
    jacc = np.where(u > 0, i / np.maximum(u, 1), 1.0)
    score = np.where(np.arange(S)[:, None] < np.arange(S)[None, :], jacc, -1.0).ravel()
    best = np.argmax(score.astype(np.float32))
    e = np.arange(96)
    return dict(member=m, pop=m.sum(1).astype(np.int32), inter=inter, union=union, jacc=jacc,
                best_pair=np.int32(best), pa=np.int32(best // S), pb=np.int32(best % S),
                lowest=np.int32([e[r].min() for r in m]), highest=np.int32([e[r].max() for r in m]),
                swar_pop=m.sum(1).astype(np.int32))


# 7 Adler-32, Fletcher-16, rolling weak checksum, Luhn check digit
def checksum_inputs():
    rg = R(507)
    return dict(data=rg.integers(0, 256, 300).astype(np.uint8), digits=rg.integers(0, 10, 15).astype(np.int32))
@case("checksums", inputs=checksum_inputs)
def _(data, digits):
    d = data.astype(np.int64); N, BW = len(d), 16
    a = np.array([1] + [0] * N); b = np.zeros(N + 1, np.int64); f1 = np.zeros(N + 1, np.int64); f2 = f1.copy()
    for n in range(1, N + 1):
        a[n] = (a[n - 1] + d[n - 1]) % 65521; b[n] = (b[n - 1] + a[n]) % 65521
        f1[n] = (f1[n - 1] + d[n - 1]) % 255; f2[n] = (f2[n - 1] + f1[n]) % 255
    K = N - BW + 1
    r1 = np.array([d[k:k + BW].sum() % 65536 for k in range(K)])
    r2 = np.array([((BW - np.arange(BW)) * d[k:k + BW]).sum() % 65536 for k in range(K)])
    D = len(digits); pos = D - np.arange(D)
    dbl = np.where(2 * digits > 9, 2 * digits - 9, 2 * digits); ls = np.where(pos % 2 == 0, digits, dbl).sum()
    return dict(a=a.astype(np.int32), b=b.astype(np.int32), adler=np.uint32(b[N] * 65536 + a[N]),
                fletcher=np.uint16(f2[N] * 256 + f1[N]), r1=r1.astype(np.int32), r2=r2.astype(np.int32),
                weak=(r2 * 65536 + r1).astype(np.uint32), luhn_sum=np.int32(ls), check_digit=np.int32((10 - ls % 10) % 10))


# 8 grey-scale morphology with a cross, open/close, top-hats, alternating sequential filter
def cross_morph(a, op):
    P = np.pad(a, 1, mode="edge"); H, W = a.shape
    shifts = [P[1 + du:1 + du + H, 1 + dv:1 + dv + W] for du, dv in ((-1, 0), (1, 0), (0, 0), (0, -1), (0, 1))]
    return op(np.stack(shifts), 0)
def morph_inputs():
    y, x = np.mgrid[0:96, 0:128]
    img = np.sin(x / 9.0) * np.cos(y / 13.0) + 0.3 * R(508).standard_normal((96, 128))
    return dict(img=img.astype(np.float32))
@case("morphology_gray", inputs=morph_inputs, tol=(1e-6, 1e-6))
def _(img):
    er, di = cross_morph(img, np.min), cross_morph(img, np.max)
    op, cl = cross_morph(er, np.max), cross_morph(di, np.min)
    asf = [img]
    for _ in range(3):
        a = asf[-1]; asf.append(cross_morph(cross_morph(cross_morph(cross_morph(a, np.min), np.max), np.max), np.min))
    return dict(eroded=er, dilated=di, opened=op, closed=cl, gradient=di - er, white_hat=img - op,
                black_hat=cl - img, asf=np.array(asf), ok=np.bool_(True))


# 9 connected components by max-label propagation over a fixed number of sweeps
def comp_inputs():
    rg = R(509); m = rg.random((48, 64)) < 0.45
    for _ in range(2):      # smooth into blobs: majority of the 3x3 neighbourhood
        P = np.pad(m, 1).astype(int); m = sum(P[a:a + 48, b:b + 64] for a in range(3) for b in range(3)) >= 5
    return dict(mask=m)
@case("components_label", inputs=comp_inputs, vk=True,
      outputs=["final", "converged", "is_root", "count", "area", "biggest", "big_label", "top", "bottom", "left", "right"])
def _(mask):
    H, W = mask.shape; lab = np.where(mask, np.arange(H * W).reshape(H, W) + 1, 0); prev = lab
    for _ in range(40):
        P = np.pad(np.where(mask, lab, 0), 1)
        prev, lab = lab, np.where(mask, np.max(np.stack([lab, P[:-2, 1:-1], P[2:, 1:-1], P[1:-1, :-2], P[1:-1, 2:]]), 0), 0)
    root = mask & (lab == np.arange(H * W).reshape(H, W) + 1)
    ids, counts = np.unique(lab[mask], return_counts=True); size = dict(zip(ids, counts))
    area = np.where(mask, np.vectorize(lambda v: size.get(v, 0))(lab), 0)
    big = area.max(); bl = lab[area == big].max(); ii, jj = np.nonzero(lab == bl)
    i32 = np.int32
    return dict(final=lab.astype(i32), converged=np.bool_((lab == prev).all()), is_root=root, count=i32(root.sum()),
                area=area.astype(i32), biggest=i32(big), big_label=i32(bl), top=i32(ii.min()), bottom=i32(ii.max()),
                left=i32(jj.min()), right=i32(jj.max()))


# 10 histogram equalization and a clipped (contrast-limited) variant, entropies
def histeq_inputs():
    rg = R(510); img = np.clip(rg.normal(90, 25, (128, 160)), 0, 255).astype(np.uint8)
    return dict(img=img, limit=np.int32(300))
@case("hist_equalize", inputs=histeq_inputs, tol=(1e-4, 1e-4))
def _(img, limit):
    n = img.size; hist = np.bincount(img.ravel(), minlength=256); cdf = np.cumsum(hist)
    cmin = cdf[hist > 0].min()
    lut = np.round((cdf - cmin).astype(np.float32) / np.float32(n - cmin) * np.float32(255)).astype(np.uint8)
    eq = lut[img]; hist_eq = np.bincount(eq.ravel(), minlength=256)
    excess = np.maximum(hist - limit, 0).sum()
    clipped = np.minimum(hist, limit).astype(np.float32) + np.float32(excess) / np.float32(256)
    ccdf = np.cumsum(clipped, dtype=np.float32); clut = np.round(ccdf / ccdf[255] * np.float32(255)).astype(np.uint8)
    ent = lambda h: -sum((c / n) * np.log2(c / n) for c in h if c > 0)
    return dict(hist=hist.astype(np.int32), cdf=cdf.astype(np.int32), cdf_min=np.int32(cmin), lut=lut, eq=eq,
                hist_eq=hist_eq.astype(np.int32), excess=np.int32(excess), clahe_lut=clut, clahe=clut[img],
                h_before=ent(hist), h_after=ent(hist_eq))


# 11 Canny-like: Gaussian blur, gradients, sectors, non-maximum suppression, hysteresis
def canny_inputs():
    y, x = np.mgrid[0:80, 0:112]
    img = (((x - 50) ** 2 + (y - 40) ** 2) < 600).astype(np.float64) + 0.5 * (x > 80) + 0.05 * R(511).standard_normal((80, 112))
    return dict(img=img.astype(np.float32))
@case("canny_nms", inputs=canny_inputs, tol=(1e-4, 1e-5), outputs=["g", "blur", "mag", "nms", "peak", "edges", "n_edges", "per_dir"])
def _(img):
    f = np.float64; a = img.astype(f); H, W = a.shape
    g = np.exp(-((np.arange(5) - 2.0) ** 2) / 2.0); g /= g.sum()
    P = np.pad(a, ((0, 0), (2, 2)), mode="edge"); bx = sum(g[k] * P[:, k:k + W] for k in range(5))
    P = np.pad(bx, ((2, 2), (0, 0)), mode="edge"); blur = sum(g[k] * P[k:k + H] for k in range(5))
    gx = np.zeros_like(blur); gx[:, 1:-1] = 0.5 * (blur[:, 2:] - blur[:, :-2])
    gy = np.zeros_like(blur); gy[1:-1] = 0.5 * (blur[2:] - blur[:-2])
    mag = np.hypot(gx, gy); deg = np.degrees(np.arctan2(gy, gx)); deg = np.where(deg < 0, deg + 180, deg)
    sec = (deg / 22.5).astype(int); d = np.select([np.isin(sec, [0, 7, 8]), np.isin(sec, [1, 2]), np.isin(sec, [3, 4])], [0, 1, 2], 3)
    di, dj = np.array([0, 1, 1, 1])[d], np.array([1, 1, 0, -1])[d]
    M = np.pad(mag, 1); ii, jj = np.mgrid[0:H, 0:W]
    nms = np.where((mag >= M[ii + di + 1, jj + dj + 1]) & (mag >= M[ii - di + 1, jj - dj + 1]), mag, 0.0)
    peak = nms.max(); weak = nms >= 0.1 * peak; e = nms >= 0.3 * peak
    for _ in range(12):
        P = np.pad(e, 1, mode="edge"); e = e | (weak & np.any([P[u:u + H, v:v + W] for u in range(3) for v in range(3)], 0))
    return dict(g=g, blur=blur, mag=mag, nms=nms, peak=peak, edges=e, n_edges=np.int32(e.sum()),
                per_dir=np.int32([(e & (d == k)).sum() for k in range(4)]))


# 12 integral images: box mean and variance, a self-guided filter, a bilateral filter
def box_np(T, R=3):
    H, W = T.shape[0] - 1, T.shape[1] - 1; i = np.arange(H); j = np.arange(W)
    i0, i1 = np.maximum(i - R, 0)[:, None], np.minimum(i + R + 1, H)[:, None]
    j0, j1 = np.maximum(j - R, 0)[None, :], np.minimum(j + R + 1, W)[None, :]
    return (T[i1, j1] - T[i0, j1] - T[i1, j0] + T[i0, j0]) / ((i1 - i0) * (j1 - j0))
def integral(a):
    return np.pad(a.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
def box_inputs():
    y, x = np.mgrid[0:64, 0:96]
    return dict(img=(0.5 + 0.3 * np.sign(np.sin(x / 10.0)) * (y > 20) + 0.05 * R(512).standard_normal((64, 96))).astype(np.float32))
@case("integral_box", inputs=box_inputs, tol=(2e-3, 2e-4), outputs=["S", "mean", "var", "total", "guided", "bilateral"])
def _(img):
    a = img.astype(np.float64); H, W = a.shape; S = integral(a)
    mean = box_np(S); var = box_np(integral(a * a)) - mean ** 2
    ga = var / (var + 0.01); gb = mean * (1 - ga)
    P = np.pad(a, 2, mode="edge"); num = np.zeros_like(a); den = np.zeros_like(a)
    for u in range(5):
        for v in range(5):
            q = P[u:u + H, v:v + W]; w = np.exp(-((u - 2) ** 2 + (v - 2) ** 2) / 4.5 - (q - a) ** 2 / 0.08)
            num += w * q; den += w
    return dict(S=S, mean=mean, var=var, total=S[H, W], guided=box_np(integral(ga)) * a + box_np(integral(gb)),
                bilateral=num / den)


# 13 interpolation onto a grid, bin means forward-filled, LOCF with ages, a trapezoid and its gradient
def resample_inputs():
    rg = R(513); t = np.sort(rg.uniform(0, 24, 40)); t[0], t[-1] = 0.0, 24.0
    return dict(t=t, y=np.sin(t / 4) + 0.1 * rg.standard_normal(40), valid=rg.random(40) < 0.7)
@case("resample_series", inputs=resample_inputs, tol=(1e-10, 1e-12))
def _(t, y, valid):
    N, M, B = len(t), 25, 12; grid = t[0] + (t[-1] - t[0]) * np.arange(M) / (M - 1)
    b = np.minimum(((t - t[0]) / (t[-1] - t[0]) * B).astype(int), B - 1)
    bn = np.bincount(b, minlength=B); bs = np.bincount(b, y, minlength=B)
    filled = []; locf = [y[0]]; age = [0]
    for k in range(B):
        filled.append(bs[k] / bn[k] if bn[k] else (filled[-1] if k else y[0]))
    for n in range(1, N):
        locf.append(y[n] if valid[n] else locf[-1]); age.append(0 if valid[n] else age[-1] + 1)
    dt = np.diff(t); darea = np.zeros(N); darea[1:] += 0.5 * dt; darea[:-1] += 0.5 * dt
    return dict(grid=grid, resampled=np.interp(grid, t, y), bin_n=bn.astype(np.int32), filled=np.array(filled),
                locf=np.array(locf), age=np.int32(age), stale=np.int32(max(age)),
                area=(0.5 * (y[1:] + y[:-1]) * dt).sum(), darea=darea)


# 14 base64 through matches on ranges, its decoding, an Internet checksum
def b64_inputs():
    return dict(bytes=R(514).integers(0, 256, 48).astype(np.uint8))
@case("base64_pack", inputs=b64_inputs)
def _(bytes):
    import base64
    enc = np.frombuffer(base64.b64encode(bytes.tobytes()), np.uint8)
    cls = np.where((enc >= 65) & (enc <= 90), 0, np.where((enc >= 97) & (enc <= 122), 1, 2))
    w = bytes.astype(np.int64).reshape(-1, 2) @ [256, 1]; acc = 0
    for v in w:
        acc += v; acc = (acc & 0xFFFF) + (acc >> 16)
    return dict(chars=enc, back=bytes, round_trip=np.bool_(True), classes=np.bincount(cls, minlength=3).astype(np.int32),
                inet=np.uint16(0xFFFF - acc))


# 15 bilinear rotation + zoom, alignment score and d/d theta, 2x2 downsample, nearest warp
def warp_np(img, theta, zoom, nearest=False):
    H, W = img.shape; cy, cx = (H - 1) / 2, (W - 1) / 2; i, j = np.mgrid[0:H, 0:W]
    dy, dx = i - cy, j - cx
    y = cy + (np.cos(theta) * dy + np.sin(theta) * dx) / zoom; x = cx + (-np.sin(theta) * dy + np.cos(theta) * dx) / zoom
    P = np.pad(img, 2)
    px = lambda r, c: np.where((r >= 0) & (r < H) & (c >= 0) & (c < W), P[np.clip(r, -2, H + 1) + 2, np.clip(c, -2, W + 1) + 2], 0.0)
    if nearest:
        return px(np.round(y).astype(int), np.round(x).astype(int))
    r, c = np.floor(y).astype(int), np.floor(x).astype(int); fy, fx = y - r, x - c
    p00, p01, p10, p11 = px(r, c), px(r, c + 1), px(r + 1, c), px(r + 1, c + 1)
    w = (1 - fy) * ((1 - fx) * p00 + fx * p01) + fy * ((1 - fx) * p10 + fx * p11)
    # d w / d theta with the cell fixed (the derivative inside each piece)
    dy_dt = (-np.sin(theta) * dy + np.cos(theta) * dx) / zoom; dx_dt = (-np.cos(theta) * dy - np.sin(theta) * dx) / zoom
    dw = ((1 - fx) * (p10 - p00) + fx * (p11 - p01)) * dy_dt + ((1 - fy) * (p01 - p00) + fy * (p11 - p10)) * dx_dt
    return w, dw
def warp_inputs():
    y, x = np.mgrid[0:60, 0:80]; img = np.exp(-((x - 50) ** 2 / 80 + (y - 25) ** 2 / 30)) + (np.abs(x - 30) < 4) * 0.5
    return dict(img=img, target=warp_np(img, 0.3, 1.1)[0], theta=np.float64(0.25), zoom=np.float64(1.1))
@case("bilinear_warp", inputs=warp_inputs, tol=(1e-7, 1e-9))
def _(img, target, theta, zoom):
    w, dw = warp_np(img, theta, zoom)
    return dict(warped=w, score=(w * target).sum(), dscore=(dw * target).sum(), small=w.reshape(len(w) // 2, 2, -1, 2).mean((1, 3)),
                nearest=warp_np(img, theta, zoom, True), inside=np.int32((w != 0).sum()))


# 16 xorshift32, murmur fmix32, rotations, a 64-bit LCG rolling dice
@case("xorshift_murmur", inputs=lambda: dict(seed=np.uint32(2463534242), keys=R(516).integers(0, 2 ** 32, 10, dtype=np.uint64).astype(np.uint32)),
      tol=(1e-5, 1e-5), outputs=["xs", "mixed", "rotated", "lcg", "face", "counts", "chi2"])
def _(seed, keys):
    M32, M64 = 2 ** 32, 2 ** 64
    xs = [int(seed)]
    for _ in range(63):
        x = xs[-1]; x ^= (x << 13) % M32; x ^= x >> 17; x ^= (x << 5) % M32; xs.append(x)
    def fmix(h):
        h ^= h >> 16; h = (h * 0x85ebca6b) % M32; h ^= h >> 13; h = (h * 0xc2b2ae35) % M32; return h ^ (h >> 16)
    rot = lambda x, r: ((x << r) | (x >> (32 - r))) % M32
    lcg = [(int(seed) * 2654435761 + 1) % M64]
    for _ in range(63):
        lcg.append((lcg[-1] * 6364136223846793005 + 1442695040888963407) % M64)
    face = np.int32([(v >> 40) % 6 + 1 for v in lcg]); counts = np.bincount(face - 1, minlength=6)
    return dict(xs=np.uint32(xs), mixed=np.uint32([fmix(int(k)) for k in keys]),
                rotated=np.uint32([[rot(int(k), 8 * r + 3) for r in range(4)] for k in keys]), lcg=np.uint64(lcg),
                face=face, counts=counts.astype(np.int32), chi2=((counts - 64 / 6) ** 2 / (64 / 6)).sum())


# 17 city-block distance transform by two raster passes, geodesic reconstruction
def recon_inputs():
    y, x = np.mgrid[0:40, 0:56]
    fg = ((x - 20) ** 2 + (y - 18) ** 2 < 200) | ((x > 38) & (x < 52) & (y > 5) & (y < 35))
    level = (np.exp(-((x - 15) ** 2 + (y - 12) ** 2) / 40.0) + 0.8 * np.exp(-((x - 40) ** 2 + (y - 28) ** 2) / 30.0)).astype(np.float32)
    return dict(fg=fg, marker=np.where((x == 15) & (y == 12), level, 0).astype(np.float32), level=level)
@case("reconstruct_distance", inputs=recon_inputs, tol=(1e-6, 1e-7),
      outputs=["dist", "ridge", "n_ridge", "reconstructed", "domes"])
def _(fg, marker, level):
    H, W = fg.shape; BIG = 100000; f = np.zeros((H, W), np.int64)
    for i in range(H):
        for j in range(W):
            f[i, j] = 0 if not fg[i, j] else min(f[i - 1, j] + 1 if i else BIG, f[i, j - 1] + 1 if j else BIG)
    d = f.copy()
    for i in range(H - 1, -1, -1):
        for j in range(W - 1, -1, -1):
            d[i, j] = min(f[i, j], d[i + 1, j] + 1 if i < H - 1 else BIG, d[i, j + 1] + 1 if j < W - 1 else BIG)
    c = d[1:-1, 1:-1]
    ridge = np.zeros((H, W), bool); ridge[1:-1, 1:-1] = (c > 0) & (c >= np.maximum.reduce([d[:-2, 1:-1], d[2:, 1:-1], d[1:-1, :-2], d[1:-1, 2:]]))
    r = np.minimum(marker, level)
    for _ in range(30):
        P = np.pad(r, 1, mode="edge")
        r = np.minimum(level, np.maximum.reduce([r, P[:-2, 1:-1], P[2:, 1:-1], P[1:-1, :-2], P[1:-1, 2:]]))
    return dict(dist=d.astype(np.int32), ridge=ridge, n_ridge=np.int32(ridge.sum()), reconstructed=r, domes=level - r)


# 18 sessionizing an event log: gaps and user changes, per-session aggregates, minute buckets
def session_inputs():
    rg = R(518); n = 80
    gaps = np.where(rg.random(n) < 0.15, rg.integers(1_900_000, 5_000_000, n), rg.integers(1_000, 400_000, n))
    ts = 1_700_000_000_000 + np.cumsum(gaps); ts[0] = 1_700_000_000_000
    return dict(ts=ts.astype(np.int64), user=np.repeat(rg.integers(0, 5, 8), 10).astype(np.int32))
@case("sessionize_events", inputs=session_inputs,
      outputs=["starts", "sid", "n_sessions", "events", "duration_s", "owner", "real", "per_minute", "busiest", "longest", "long_ones", "mean_events"])
def _(ts, user):
    N = len(ts); st = np.ones(N, bool); st[1:] = (user[1:] != user[:-1]) | (np.diff(ts) > 1_800_000)
    sid = np.cumsum(st) - 1; S = sid[-1] + 1
    ev = np.bincount(sid, minlength=N)
    first = np.array([ts[sid == s].min() if ev[s] else 0 for s in range(N)])
    last = np.array([ts[sid == s].max() if ev[s] else 0 for s in range(N)])
    dur = np.where(ev > 0, (last - first) // 1000, 0).astype(np.int32)
    owner = np.array([user[sid == s].max() if ev[s] else np.iinfo(np.int32).min for s in range(N)], np.int32)
    minute = ((ts - ts[0]) // 60000).astype(int); pm = (minute[:, None] == minute[None, :]).sum(1)
    i32 = np.int32
    return dict(starts=st, sid=sid.astype(i32), n_sessions=i32(S), events=ev.astype(i32), duration_s=dur,
                owner=owner, real=dur[ev > 0], per_minute=pm.astype(i32), busiest=i32(minute[np.argmax(pm)]),
                longest=i32(dur.max()), long_ones=np.flatnonzero((ev > 0) & (dur * 2 >= dur.max())).astype(i32),
                mean_events=N / S, __stdout__=[f"sessions {S}"])


# 19 Kolmogorov-Smirnov, Tukey fences, winsorizing, Mann-Whitney U
def ks_inputs():
    rg = R(519)
    a = np.round(rg.standard_normal(40) * 8) / 8; a[[3, 17]] = [4.5, -5.0]
    return dict(a=a, b=np.round((rg.standard_normal(30) * 1.3 + 0.4) * 8) / 8)
@case("ks_fences", inputs=ks_inputs, tol=(1e-9, 1e-12),
      outputs=["D", "lam", "p_value", "lo_a", "hi_a", "fence_b", "out_a", "out_b", "wins_a", "rank_sum_a", "U", "z"])
def _(a, b):
    N, M = len(a), len(b); pool = np.concatenate([a, b])
    ea = (a[None, :] <= pool[:, None]).mean(1); eb = (b[None, :] <= pool[:, None]).mean(1)
    D = np.abs(ea - eb).max(); en = np.sqrt(N * M / (N + M)); lam = (en + 0.12 + 0.11 / en) * D
    j = np.arange(1, 101); pv = np.clip(2 * (np.where(j % 2 == 1, 1.0, -1.0) * np.exp(-2 * j * j * lam * lam)).sum(), 0, 1)
    def fences(x):
        s = np.sort(x); q = lambda p: np.interp(p * (len(x) - 1), np.arange(len(x)), s); iqr = q(0.75) - q(0.25)
        return q(0.25) - 1.5 * iqr, q(0.75) + 1.5 * iqr
    lo, hi = fences(a); fb = fences(b)
    mid = lambda v: (pool < v).sum() + ((pool == v).sum() + 1) / 2
    rs = sum(mid(v) for v in a); U = rs - N * (N + 1) / 2
    return dict(D=D, lam=lam, p_value=pv, lo_a=lo, hi_a=hi, **{"fence_b.0": fb[0], "fence_b.1": fb[1]}, out_a=(a < lo) | (a > hi),
                out_b=b[(b < fb[0]) | (b > fb[1])], wins_a=np.clip(a, lo, hi).mean(), rank_sum_a=rs, U=U,
                z=(U - N * M / 2) / np.sqrt(N * M * (N + M + 1) / 12))


# 20 zigzag + LEB128 varints in fixed slots, offsets, decoding, an i8 view
def varint_inputs():
    rg = R(520)
    v = np.concatenate([rg.integers(-70, 70, 8), rg.integers(-10 ** 5, 10 ** 5, 8), rg.integers(-2 ** 31, 2 ** 31 - 1, 8, dtype=np.int64),
                        [0, -1, 63, -64, 64, 2 ** 31 - 1, -2 ** 31]])
    return dict(v=v.astype(np.int32))
@case("varint_zigzag", inputs=varint_inputs, outputs=["zz", "len_of", "byte", "offset", "total_bytes", "decoded", "ok", "signed", "continued"])
def _(v):
    z = ((v.astype(np.int64) << 1) ^ (v.astype(np.int64) >> 31)) & 0xFFFFFFFF
    ln = np.array([max(1, (int(x).bit_length() + 6) // 7) for x in z])
    byte = np.zeros((len(v), 5), np.uint8)
    for n, x in enumerate(z):
        for b in range(ln[n]):
            byte[n, b] = ((int(x) >> (7 * b)) & 127) | (128 if b + 1 < ln[n] else 0)
    off = np.concatenate([[0], np.cumsum(ln)]).astype(np.int32)
    return dict(zz=z.astype(np.uint32), len_of=ln.astype(np.int32), byte=byte, offset=off, total_bytes=off[-1],
                decoded=v, ok=np.bool_(True), signed=byte.view(np.int8), continued=np.int32((byte >= 128).sum()))


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
