"""`einc build --emit ast`: the parsed AST as an indented tree with source positions."""
from __future__ import annotations

from einc.syntax import ast


def format_module(module: ast.Module) -> str:
    lines: list[str] = []
    for item in module.items:
        _node(item, 0, "", lines)
    return "\n".join(lines) + "\n"


def _node(node, depth: int, label: str, lines: list[str]) -> None:
    pad = "  " * depth + (f"{label}: " if label else "")
    if isinstance(node, list):
        if not node:
            return
        lines.append(pad + "[")
        for item in node:
            _node(item, depth + 1, "", lines)
        lines.append("  " * depth + "]")
        return
    if not isinstance(node, ast.Node):
        lines.append(pad + repr(node))
        return
    scalars, children = [], []
    for name in node.__dataclass_fields__:
        if name in ("span", "def_id"):
            continue
        value = getattr(node, name)
        if isinstance(value, (ast.Node, list)):
            children.append((name, value))
        elif value is not None and value is not False:
            scalars.append(f"{name}={value!r}")
    where = f"  @{node.span.line}:{node.span.col}"
    lines.append(pad + type(node).__name__ + (" " + " ".join(scalars) if scalars else "") + where)
    for name, value in children:
        _node(value, depth + 1, name, lines)
