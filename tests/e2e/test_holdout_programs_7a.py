"""Hold-out programs, seventh round (geometry, graphics and physical simulation): ray casting against
spheres and a plane with a nearest-hit argmin and shadow rays, sphere tracing a signed distance
field, barycentric rasterization with a depth test, mesh Laplacian smoothing over an edge list,
Verlet cloth with distance constraints, rigid-body quaternions, marching-squares case bits,
point-cloud neighbours and 2-d ICP, shape fitting by gradient and collision response with guards,
each checked against NumPy computed here. Each case states its tolerance (`tol`, rtol and atol;
integers and bools compare exactly); `vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)
f32 = np.float32


# 1 ray casting: spheres and a ground plane, nearest hit, Lambert shading with shadow rays
def rays_inputs():
    return dict(centers=f32([[0.0, 0.0, 4.0], [1.2, -0.3, 3.0], [-1.3, 0.2, 5.0], [0.3, 1.1, 6.0]]),
                radii=f32([1.0, 0.5, 0.8, 0.6]), light=f32([3.0, 5.0, 0.0]))
@case("ray_spheres", inputs=rays_inputs, tol=(1e-4, 1e-4), vk=True)
def _(centers, radii, light):
    W, H, K, INF = 40, 30, len(radii), f32(1e30)
    unit = lambda v: v / np.sqrt((v * v).sum(-1, keepdims=True))
    x, y = np.meshgrid(np.arange(W, dtype=f32), np.arange(H, dtype=f32))
    d = unit(np.stack([(x + f32(0.5)) / f32(W) * f32(2) - f32(1), f32(1) - (y + f32(0.5)) / f32(H) * f32(1.5), np.ones_like(x)], -1))
    def sphere(o, d, k):
        oc = o - centers[k]; b = (oc * d).sum(-1); disc = b * b - ((oc * oc).sum(-1) - radii[k] ** 2)
        with np.errstate(invalid="ignore"):
            t = -b - np.sqrt(disc)
        return np.where(disc < 0, INF, np.where(t > f32(1e-3), t, INF))
    o = np.zeros(3, f32)
    tp = np.where(d[..., 1] < -1e-6, (f32(-1) - 0) / np.where(d[..., 1] < -1e-6, d[..., 1], f32(1)), INF)
    t = np.stack([sphere(o, d, k) for k in range(K)] + [tp], -1)
    depth = t.min(-1); ident = np.where(depth < INF, np.argmin(t, -1), -1)
    p = depth[..., None] * d
    n = np.where((ident < K)[..., None], unit(p - centers[np.clip(ident, 0, K - 1)]), f32([0, 1, 0]))
    l = unit(light - p)
    lit = np.ones((H, W), bool)
    for k in range(K):
        lit &= (ident == k) | (sphere(p, l, k) == INF)
    shade = np.where(ident < 0, f32(0.1), f32(0.1) + np.where(lit, f32(0.9) * np.maximum((n * l).sum(-1), 0), 0))
    cov = np.array([(ident == k).sum() for k in range(K + 1)], np.int32)
    return dict(dir=d, t_obj=t, depth=depth, id=ident, shade=shade, coverage=cov, centre_depth=depth[H // 2, W // 2],
                __stdout__=["sphere pixels"])


# 2 sphere tracing a blended signed distance field, normals by the field's gradient
@case("sdf_sphere_trace", inputs=lambda: dict(cam=f32([0.0, 0.3, 0.0]), k_blend=f32(0.3)), tol=(2e-3, 2e-3),
      outputs=["t", "hit", "steps", "shade", "n_hit"])
def _(cam, k_blend):
    W, H, S, EPS, FAR = 32, 24, 48, f32(1e-3), f32(20)
    x, y = np.meshgrid(np.arange(W, dtype=f32), np.arange(H, dtype=f32))
    d = np.stack([(x - f32(15.5)) / f32(16), (f32(11.5) - y) / f32(16), np.ones_like(x)], -1)
    d = d / np.sqrt((d * d).sum(-1, keepdims=True))
    def field(q):
        sph = np.sqrt(((q - f32([0, 0, 5])) ** 2).sum(-1)) - f32(1)
        dd = np.abs(q - f32([1.2, -0.2, 5.5])) - f32([0.5, 0.7, 0.5])
        box = np.sqrt((np.maximum(dd, 0) ** 2).sum(-1)) + np.minimum(dd.max(-1), 0)
        sm = -np.log(np.exp(-sph / k_blend) + np.exp(-box / k_blend)) * k_blend
        return np.minimum(sm, q[..., 1] + f32(1.2))
    t = [np.zeros((H, W), f32)]
    for s in range(1, S):
        dist = field(cam + t[-1][..., None] * d)
        t.append(np.where((dist < EPS) | (t[-1] > FAR), t[-1], t[-1] + dist))
    t = np.array(t); p = cam + t[-1][..., None] * d
    hit = field(p) < 0.01
    h = 1e-3; pp = p.astype(np.float64)
    def field64(q):
        return field(q.astype(f32)).astype(np.float64)
    g = np.stack([(field64(pp + h * e) - field64(pp - h * e)) / (2 * h) for e in np.eye(3)], -1)
    n = g / np.sqrt((g * g).sum(-1, keepdims=True))
    light = np.array([0.577, 0.577, -0.577])
    shade = np.where(hit, np.maximum((n * light).sum(-1), 0), 0)
    return dict(t=t, hit=hit, steps=(t[1:] != t[:-1]).sum(0).astype(np.int32), shade=shade, n_hit=np.int32(hit.sum()),
                __stdout__=["pixels hit:"])


@pytest.mark.sampled(every=6)
@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
