"""Hold-out programs, eighth round (statistics and classic machine learning): isotonic regression by
pool-adjacent-violators with a stack carried by a recurrence, each checked against NumPy computed
here. Each case states its tolerance (`tol`, rtol and atol; integers and bools compare exactly);
`vk` cases run on vulkan-spirv too."""
import numpy as np
import pytest

from tests.e2e.test_holdout_programs import R, check_case, params, registry

CASES = {}
case = registry(CASES)


# 1 weighted isotonic regression (pool-adjacent-violators)
@case("isotonic_pava", inputs=lambda: dict(y=np.round(np.arange(14) * 0.3 + R(801).normal(0, 1.2, 14), 2),
                                          wt=R(802).uniform(0.5, 2.0, 14)),
      tol=(1e-12, 1e-12), outputs=["fit", "blocks", "sse", "level", "upto"])
def _(y, wt):
    N = len(y); st = []
    for v, w in zip(y, wt):
        st.append([v * w, w, 1.0])
        while len(st) >= 2 and st[-2][0] / st[-2][1] > st[-1][0] / st[-1][1]:
            b = st.pop(); st[-1] = [st[-1][c] + b[c] for c in range(3)]
    level = np.zeros(N); upto = np.zeros(N); fit = []
    for k, (s, w, c) in enumerate(st):
        level[k] = s / w; fit += [s / w] * int(c)
    cnt = np.zeros(N); cnt[:len(st)] = [b[2] for b in st]; upto = np.cumsum(cnt)
    fit = np.array(fit); sse = (wt * (y - fit) ** 2).sum()
    return dict(fit=fit, blocks=np.int32(len(st)), sse=sse, level=level, upto=upto,
                __stdout__=[f"{len(st)} blocks, weighted sse {sse:.6f}"])


@pytest.mark.parametrize("name, target", params(CASES))
def test_holdout_program_matches_numpy(name, target, capfd):
    check_case(CASES[name], name, target, capfd)
