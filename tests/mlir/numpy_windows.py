"""NumPy windows for the convolution and pooling references of the dense-rule tests."""
from __future__ import annotations

from numpy.lib.stride_tricks import sliding_window_view


def strided_windows(x, k, axes, stride=1, dilation=1):
    """Strided, dilated windows of x over `axes`: the window axes appended last."""
    span = [(kk - 1) * dilation + 1 for kk in k]
    w = sliding_window_view(x, span, axis=axes)
    index = [slice(None)] * x.ndim + [slice(None, None, dilation)] * len(k)
    for a in axes:
        index[a] = slice(None, None, stride)
    return w[tuple(index)]
