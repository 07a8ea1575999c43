"""`einc build --emit ast`: the parsed AST as an indented tree with source positions."""
from __future__ import annotations

from einc.syntax import ast


def format_module(module: ast.Module) -> str:
    lines: list[str] = []
    # (node, depth, label) to print, or a finished line; a stack, not a recursion per level:
    # a sum of thousands of terms is a tree that deep
    todo: list = [(item, 0, "") for item in reversed(module.items)]
    while todo:
        task = todo.pop()
        if isinstance(task, str):
            lines.append(task)
        else:
            todo.extend(reversed(_node(*task, lines)))
    return "\n".join(lines) + "\n"


def _node(node, depth: int, label: str, lines: list[str]) -> list:
    """Print `node`'s own line; the tasks that print what is under it, in order."""
    pad = "  " * depth + (f"{label}: " if label else "")
    if isinstance(node, list):
        if not node:
            return []
        lines.append(pad + "[")
        return [(item, depth + 1, "") for item in node] + ["  " * depth + "]"]
    if not isinstance(node, ast.Node):
        lines.append(pad + repr(node))
        return []
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
    return [(value, depth + 1, name) for name, value in children]
