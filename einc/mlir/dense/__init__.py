"""Dense kernels: an indexed definition lowered to a linalg named op (matmul, convolution,
pooling) over views of its operands, or to a linalg.generic."""
