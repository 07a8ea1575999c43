"""einc.runtime: load an einc .vmfb, check inputs, run `main`, print, read outputs back."""
from einc.runtime.errors import RunError
from einc.runtime.inputs import check_input_names, check_known_names, not_an_input
from einc.runtime.npy import read_npy, read_npz
from einc.runtime.program import KNOWN_DEVICES, Program, Timing, load
from einc.runtime.signature import InputSpec, OutputSpec, Signature

__all__ = ["load", "Program", "Timing", "RunError", "read_npy", "read_npz", "check_input_names", "check_known_names", "not_an_input", "Signature",
           "InputSpec", "OutputSpec", "KNOWN_DEVICES"]
