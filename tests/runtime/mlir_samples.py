"""Hand-written MLIR modules following the einc contract, compiled once per test session."""
from __future__ import annotations

import functools
import json

from einc.backend import compile_mlir
from einc.mlir.signature import target_entries
from einc.target import get

REFLECTION = "EINC_REFLECTION"   # where a sample's reflection goes, written for the target built


def _reflection(signature: dict, target: str) -> str:
    entries = {"einc.signature": json.dumps(signature), **target_entries(get(target))}
    # MLIR string attributes: escape the quotes and backslashes.
    text = ", ".join(f'"{key}" = "{_escaped(value)}"' for key, value in entries.items())
    return f"iree.reflection = {{{text}}}"


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


MATMUL_SIGNATURE = {
    "version": 2,
    "inputs": [
        {"name": "A", "dtype": "float32", "dims": ["M", "K"]},
        {"name": "B", "dtype": "float32", "dims": ["K", 2]},
        {"name": "s", "dtype": "float32", "dims": []},
    ],
    "outputs": [{"name": "C", "dtype": "float32"}, {"name": "scale", "dtype": "float32"}],
    "prints": {
        "0": [{"text": "s = "}, {"arg": 0, "spec": ".2f"}, {"text": "\n"}],
        "1": [{"text": "C =\n"}, {"arg": 0, "spec": ""}, {"text": "\n"}],
    },
    "source": "matmul.ein",
}

# C = (A @ B) * s; asserts s != 0; prints s, then C.
MATMUL = f"""
func.func @main(%A: tensor<?x?xf32>, %B: tensor<?x2xf32>, %s: f32) -> (tensor<?x2xf32>, tensor<f32>)
    attributes {{{REFLECTION}}} {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %st = tensor.from_elements %s : tensor<f32>
  flow.tensor.trace "einc.print.0" = [%st : tensor<f32>]
  %nonzero = arith.cmpf one, %s, %zero : f32
  cf.assert %nonzero, "assertion failed at matmul.ein:4:1: scale must be nonzero"
  %M = tensor.dim %A, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%M) : tensor<?x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %P = linalg.matmul ins(%A, %B : tensor<?x?xf32>, tensor<?x2xf32>) outs(%z : tensor<?x2xf32>) -> tensor<?x2xf32>
  %C = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}} ins(%P : tensor<?x2xf32>) outs(%e : tensor<?x2xf32>) {{
  ^bb0(%p: f32, %o: f32):
    %r = arith.mulf %p, %s : f32
    linalg.yield %r : f32
  }} -> tensor<?x2xf32>
  flow.tensor.trace "einc.print.1" = [%C : tensor<?x2xf32>{{%M}}]
  return %C, %st : tensor<?x2xf32>, tensor<f32>
}}
"""

ADD_SIGNATURE = {
    "version": 2,
    "inputs": [
        {"name": "a", "dtype": "float32", "dims": [None]},
        {"name": "b", "dtype": "float32", "dims": [None]},
        {"name": "n", "dtype": "int32", "dims": []},
        {"name": "flag", "dtype": "bool", "dims": []},
    ],
    "outputs": [{"name": "total", "dtype": "float32"}, {"name": "next", "dtype": "int32"},
                {"name": "flag_out", "dtype": "bool"}],
    "prints": {"0": [{"text": "n = "}, {"arg": 0, "spec": ""}, {"text": ", flag = "}, {"arg": 1, "spec": ""},
                     {"text": "\n"}]},
    "source": "add.ein",
}

# total = a + b with a compiler-style shape check (both dims are `?`, so only the module checks them).
ADD = f"""
func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>, %n: i32, %flag: i1) -> (tensor<?xf32>, tensor<i32>, tensor<i1>)
    attributes {{{REFLECTION}}} {{
  %c0 = arith.constant 0 : index
  %na = tensor.dim %a, %c0 : tensor<?xf32>
  %nb = tensor.dim %b, %c0 : tensor<?xf32>
  %same = arith.cmpi eq, %na, %nb : index
  cf.assert %same, "shape mismatch: a and b must have the same length (add.ein:3:9)"
  %nt = tensor.from_elements %n : tensor<i32>
  %ef = tensor.empty() : tensor<i1>
  %ft = linalg.fill ins(%flag : i1) outs(%ef : tensor<i1>) -> tensor<i1>
  flow.tensor.trace "einc.print.0" = [%nt : tensor<i32>, %ft : tensor<i1>]
  %total = arith.addf %a, %b : tensor<?xf32>
  %one = arith.constant 1 : i32
  %n1 = arith.addi %n, %one : i32
  %next = tensor.from_elements %n1 : tensor<i32>
  return %total, %next, %ft : tensor<?xf32>, tensor<i32>, tensor<i1>
}}
"""

SAMPLES = {"matmul": (MATMUL, MATMUL_SIGNATURE), "add": (ADD, ADD_SIGNATURE)}


def sample_text(sample: str, target: str) -> str:
    """The sample's MLIR as einc's lowering would stamp it for `target` (einc.mlir.signature)."""
    text, signature = SAMPLES[sample]
    return text.replace(REFLECTION, _reflection(signature, target))


@functools.lru_cache(maxsize=None)
def compiled(sample: str, target: str) -> bytes:
    """The sample's .vmfb for `target`, compiled at most once per test process."""
    return compile_mlir(sample_text(sample, target), get(target))
