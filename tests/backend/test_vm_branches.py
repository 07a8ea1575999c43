"""IREE-251: a VM branch passing one ref to two block arguments leaves one of them null, and
einc gives each repeat a value of its own before the module is serialized
(einc/backend/vm_branches.py). The programs here are VM IR, serialized and run with no device.
"""
from __future__ import annotations

import iree.runtime as rt
import pytest
from iree.compiler.api import Output, Session, Source

from einc.backend.vm_branches import separate_repeated_refs

# the size of a list counted through two block arguments that both receive it: 2 * n
ONE_LIST_TWICE = """
vm.module @m {
  vm.func @f(%n: i32) -> i32 {
    %c1 = vm.const.i32 1
    %l = vm.list.alloc %c1 : (i32) -> !vm.list<i32>
    vm.list.resize %l, %n : (!vm.list<i32>, i32)
    vm.br ^bb1(%l, %n, %n, %l : !vm.list<i32>, i32, i32, !vm.list<i32>)
  ^bb1(%a: !vm.list<i32>, %p: i32, %q: i32, %b: !vm.list<i32>):
    %x = vm.list.size %a : (!vm.list<i32>) -> i32
    %y = vm.list.size %b : (!vm.list<i32>) -> i32
    %s = vm.add.i32 %x, %y : i32
    vm.return %s : i32
  }
  vm.export @f
}
"""


def _bytecode(text: str, separate: bool) -> tuple[bytes, int]:
    """The serialized module, and how many operands the workaround replaced."""
    session = Session()
    try:
        session.context     # the exported module lives in the session's context
        invocation = session.invocation()
        assert invocation.parse_source(Source.wrap_buffer(session, text.encode()))
        replaced = 0
        if separate:
            module = invocation.export_module()
            replaced = separate_repeated_refs(module)
            invocation = session.invocation()
            invocation.import_module(module)
        output = Output.open_membuffer()
        invocation.output_vm_bytecode(output)
        return bytes(output.map_memory()), replaced
    finally:
        session.close()


def _call(vmfb: bytes, n: int) -> int:
    instance = rt.VmInstance()
    module = rt.VmModule.copy_buffer(instance, vmfb)
    args, results = rt.VmVariantList(1), rt.VmVariantList(1)
    args.push_int(n)
    rt.VmContext(instance, [module]).invoke(module.lookup_function("f"), args, results)
    return results.get_variant(0)


def test_a_list_passed_to_two_block_arguments_reaches_both():
    vmfb, replaced = _bytecode(ONE_LIST_TWICE, separate=True)
    assert replaced == 1          # the list's repeat; the repeated i32 is a value, not a ref
    assert _call(vmfb, 3) == 2 * 3


def test_iree_still_nulls_the_repeat_without_the_workaround():
    """When this fails, IREE's register allocation keeps repeated refs (its PR 24781, issue 24753):
    IREE-251's workaround can go."""
    vmfb, _ = _bytecode(ONE_LIST_TWICE, separate=False)
    with pytest.raises(Exception, match="list is null"):
        _call(vmfb, 3)
