"""Depth-first work over the IR without Python recursion.

A program's values form chains as long as the program: a definition reading the one before it,
a sum of thousands of terms. Walks that recurse per value hit Python's recursion limit there, so
the passes and the lowering walk with an explicit stack through these two helpers.
"""
from __future__ import annotations


def fold(root, parts, combine, memo: dict, key=id):
    """`memo[key(x)] = combine(x, [memo[key(p)] for p in parts(x)])` for `root` and every item
    `parts` reaches from it, parts first, in the order a memoized recursion would combine them;
    returns root's."""
    stack = [root]
    while stack:
        x = stack[-1]
        if key(x) in memo:
            stack.pop()
            continue
        below = parts(x)
        missing = [p for p in below if key(p) not in memo]
        if missing:
            stack.extend(reversed(missing))    # the first part first, as a recursion would
            continue
        stack.pop()
        memo[key(x)] = combine(x, [memo[key(p)] for p in below])
    return memo[key(root)]


def run_in_order(tasks: list, visit) -> None:
    """Run `tasks` depth first, in the order recursive calls would: `visit(task)` does a task's
    own work up to where it would recurse and returns the tasks it would then call, in order. A
    callable among them is work to do between or after those calls (it may return tasks too)."""
    todo = list(reversed(tasks))
    while todo:
        task = todo.pop()
        more = task() if callable(task) else visit(task)
        if more:
            todo.extend(reversed(more))
