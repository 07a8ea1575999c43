"""`einc build --emit ir`: the tensor IR as text, program-level values first, bodies inline."""
from __future__ import annotations

from einc.ir import nodes as ir
from einc.ir.traversal import fold
from einc.ir.types import shape_str

INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "pow": "**", "and": "&&",
         "or": "||", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


class _Printer:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.lines: list[str] = []
        self.var_names: dict[int, str] = {}      # id(IndexVar) -> its name, primed when taken

    def var(self, v: ir.IndexVar) -> str:
        """A name no other index variable of this definition has: a function called per point
        can bring its own `i` into a kernel that already iterates an outer `i`."""
        if id(v) not in self.var_names:
            taken = set(self.var_names.values())
            name = v.name
            while name in taken:
                name += "'"
            self.var_names[id(v)] = name
        return self.var_names[id(v)]

    def var_range(self, v: ir.IndexVar) -> str:
        lo = "" if v.lo == 0 else f"{v.lo!r}.."
        return f"{self.var(v)} in {lo}+{v.extent!r}" if lo else f"{self.var(v)} < {v.extent!r}"

    def program_value(self, v: ir.Value) -> str:
        """Name of a program-level value, printing its definition the first time."""
        if id(v) in self.names:
            return self.names[id(v)]
        if isinstance(v, ir.Input):
            self.names[id(v)] = v.name
            return v.name
        if ir.is_folding_constant(v) and v.array.ndim == 0:
            return str(v.array[()])
        if isinstance(v, ir.Size):
            return repr(v.lin)
        outer_vars, self.var_names = self.var_names, {}      # names are unique per definition
        text = self._definition(v)
        self.var_names = outer_vars
        name = f"%{len(self.names)}"
        self.names[id(v)] = name
        self.lines.append(f"{name}: {_type(v)} = {text}")
        return name

    def _definition(self, v: ir.Value) -> str:
        if isinstance(v, ir.Const):
            kind = "variable" if v.differentiable else "const"     # a binding under `@`, kept unfolded
            return f"{kind} {v.array.tolist() if v.array.size <= 8 else '<' + str(v.array.size) + ' values>'}"
        if isinstance(v, ir.Generic):
            head = f"generic [{', '.join(self.var_range(x) for x in v.vars)}]"
            guard = f" where {self.expr(v.guard)}" if v.guard is not None else ""
            return f"{head} {{ {self.expr(v.body)} }}{guard}"
        if isinstance(v, ir.Piecewise):
            parts = [f"@{list(map(repr, c.offsets))} {self.program_value(c.value)}" for c in v.clauses]
            return "piecewise " + ", ".join(parts)
        if isinstance(v, ir.Stack):
            return "stack [" + ", ".join(self.expr(e) for e in v.elems) + "]"
        if isinstance(v, ir.RecValue):
            return self._recurrence(v)
        if isinstance(v, ir.Compact):
            return (f"compact {self.program_value(v.source)} where the count {self.program_value(v.kept)} "
                    f"steps up (length {v.length!r}, computed at run time)")
        return "scalar " + self.expr(v)

    def _recurrence(self, v: ir.RecValue) -> str:
        group = v.group
        if id(group) not in self.names:
            self.names[id(group)] = f"group{len([k for k in self.names.values() if k.startswith('group')])}"
            t = group.t_var
            self.lines.append(f"{self.names[id(group)]}: recurrence over {self.var(t)} < {t.extent!r}")
            for m in group.members:
                for c in m.clauses:
                    axes = ", ".join([f"{self.var(t)} in {c.t_lo!r}..{c.t_hi!r}"] + [self.var_range(x) for x in c.vars])
                    guard = f" where {self.expr(c.guard)}" if c.guard is not None else ""
                    self.lines.append(f"  {m.name}[{axes}] = {self.expr(c.body)}{guard}")
        window = f", window {v.member.window}" if v.member.window else ""
        return f"{self.names[id(group)]}.{v.member.name}{window}"

    def expr(self, v: ir.Value) -> str:
        """A scalar expression; a chain of operations (a sum of thousands of terms) is folded
        without a recursion per operation."""
        return fold(v, _op_args, self._expr_of, {})

    def _expr_of(self, v: ir.Value, args: list) -> str:
        if isinstance(v, ir.IndexRef):
            return self.var(v.var)
        if isinstance(v, ir.Read):
            subs = ", ".join(self.expr(s) for s in v.subs)
            return f"{self.program_value(v.tensor)}[{subs}]"
        if isinstance(v, ir.StateRead):
            return f"{v.member.name}[{', '.join(self.expr(s) for s in v.subs)}]"
        if isinstance(v, ir.Op):
            if v.op in INFIX:
                return f"({args[0]} {INFIX[v.op]} {args[1]})"
            if v.op == "cast":
                return f"({args[0]} as {v.dtype})"
            return f"{v.op}({', '.join(args)})"
        if isinstance(v, ir.Reduce):
            guard = f" where {self.expr(v.guard)}" if v.guard is not None else ""
            return f"{v.kind}[{', '.join(self.var_range(x) for x in v.vars)}]({self.expr(v.body)}{guard})"
        return self.program_value(v)


def _op_args(v: ir.Value) -> tuple:
    return v.args if isinstance(v, ir.Op) else ()


def _type(v: ir.Value) -> str:
    return str(v.dtype) if v.rank == 0 else f"{v.dtype}{shape_str(v.shape)}"


def format_program(p: ir.Program) -> str:
    pr = _Printer()
    header = [f"input {i.name}: {_type(i)}" for i in p.inputs]
    for e in p.effects:
        if isinstance(e, ir.Print):
            args = ", ".join(pr.program_value(a) if a.rank else pr.expr(a) for a in e.args)
            pr.lines.append(f"print {e.parts!r} ({args})")
        else:
            pr.lines.append(f"assert {pr.expr(e.cond)}  // {e.message}")
    outs = [f"output {n} = {pr.program_value(v) if v.rank else pr.expr(v)}" for n, v in p.outputs]
    return "\n".join(header + pr.lines + outs) + "\n"
