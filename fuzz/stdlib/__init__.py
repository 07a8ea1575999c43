"""The stdlib campaign: random calls of the standard library's std::ml, std::math and std::array
functions (the interface of /work/shared/STDLIB_API.md), with random valid shapes, attributes,
dtypes and named sizes, against NumPy references of the ONNX / math-library meaning written
here (fuzz.stdlib.reference), never from einc's stdlib source.
"""
