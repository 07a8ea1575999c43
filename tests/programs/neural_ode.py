"""A neural ODE's loss and gradient in NumPy, by a hand-written adjoint: the reference of the
RK4 gradient tests and of the benchmark that trains through it."""
import numpy as np


def neural_ode_gradient(x0, target, th, h=0.125, steps=4):
    """The loss and its gradient by th, by a hand-written adjoint over the stored RK4 stages."""
    W, c, z, tape = th[:4].reshape(2, 2), th[4:], x0, []
    for _ in range(steps):
        xs, ks = [z], []
        for a in (0.5 * h, 0.5 * h, h, None):
            ks.append(np.tanh(xs[-1] @ W.T + c))
            if a is not None:
                xs.append(z + a * ks[-1])
        tape.append((xs, ks))
        z = z + h / 6 * (ks[0] + 2 * ks[1] + 2 * ks[2] + ks[3])
    zb, gW, gc = 2 * (z - target), np.zeros((2, 2)), np.zeros(2)
    for xs, ks in reversed(tape):
        kb, new = [h / 6 * zb, h / 3 * zb, h / 3 * zb, h / 6 * zb], zb.copy()
        for k in (3, 2, 1, 0):
            a = kb[k] * (1 - ks[k] ** 2)
            gW, gc, xb = gW + a.T @ xs[k], gc + a.sum(0), a @ W
            new += xb
            if k:
                kb[k - 1] = kb[k - 1] + (h if k == 3 else 0.5 * h) * xb
        zb = new
    return ((z - target) ** 2).sum(), np.concatenate([gW.ravel(), gc])
