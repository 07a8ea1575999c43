"""einc.runtime: load an einc .vmfb, check inputs, run `main`, print, read outputs back."""
from einc.runtime.errors import RunError
from einc.runtime.inputs import check_input_names
from einc.runtime.npy import read_npy
from einc.runtime.program import KNOWN_DEVICES, Program, load
from einc.runtime.signature import InputSpec, OutputSpec, Signature

__all__ = ["load", "Program", "RunError", "read_npy", "check_input_names", "Signature", "InputSpec", "OutputSpec", "KNOWN_DEVICES"]
