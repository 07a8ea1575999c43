"""Large constant arrays as IREE parameters instead of data inside the module.

Embedded, a 4 MB `load_npy` array made a 4.2 MB .vmfb and a 257 MB build (IREE copies and
folds dense attributes). A constant array of at least `threshold` bytes becomes instead a
`util.global` initialised from `#stream.parameter.named<"einc"::"weightN">`, read once at the
top of `main`; its data is written to a parameter archive (.irpa) beside the module
(einc.backend.parameters) and supplied by the runner (einc.runtime.parameters).
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import util

from einc.ir.nodes import Const
from einc.mlir.core.types import tensor_type
from einc.module_file import SCOPE   # the scope the runner provides the archive under



class Weights:
    """Collects the constant arrays of one lowering that become parameters, by key.

    `threshold` None keeps every constant in the module; 0 makes every constant array (not a
    scalar) a parameter."""

    def __init__(self, threshold: int | None):
        self.threshold = threshold
        self.arrays: dict[str, np.ndarray] = {}
        self._main = None
        self._loaded: dict[int, ir.Value] = {}   # id(array) -> its util.global.load in main
        self._ops: dict[str, tuple] = {}         # key -> (its util.global, its load)

    def start(self, main) -> None:
        """Loads and globals go into `main` (a func.FuncOp with its entry block) and its module;
        those of an earlier `main` are forgotten (a program lowered again)."""
        self._main = main
        self.arrays.clear()
        self._loaded.clear()
        self._ops.clear()

    def takes(self, v: Const) -> bool:
        return self.threshold is not None and v.array.ndim > 0 and v.array.nbytes >= self.threshold

    def load(self, v: Const) -> ir.Value:
        """`v`'s value as a load of its parameter global, made at the start of `main` so that
        it dominates every use (kernels, loops and dispatch regions capture it from there)."""
        found = self._loaded.get(id(v.array))
        if found is not None:
            return found
        key = f"weight{len(self.arrays)}"
        t = tensor_type(v.dtype, v.shape)
        with ir.InsertionPoint(self._main):
            defined = util.GlobalOp(key, t, sym_visibility="private",
                                    initial_value=ir.Attribute.parse(f'#stream.parameter.named<"{SCOPE}"::"{key}"> : {t}'))
        with ir.InsertionPoint.at_block_begin(self._main.entry_block):
            loaded = util.GlobalLoadOp(t, ir.FlatSymbolRefAttr.get(key)).result
        self.arrays[key] = v.array
        self._loaded[id(v.array)] = loaded
        self._ops[key] = (defined, loaded)
        return loaded

    def drop_unused(self) -> None:
        """Parameters nothing reads leave the module and the archive: a stack of layers' weights
        lowered whole, then read only through constant slices (einc.mlir.dense.operand_views)."""
        for key, (defined, loaded) in self._ops.items():
            if next(iter(loaded.uses), None) is None:
                loaded.owner.erase()
                defined.operation.erase()
                del self.arrays[key]
