"""Mutations of real Einlang programs: tokens deleted, duplicated, swapped or replaced, numbers
and types changed, names exchanged, lines dropped or repeated, the text cut short, stray bytes;
and the mistakes users make: other line ends, broken string fields, a range in a where clause,
calls and reads with an argument or subscript too many or too few, a divisor of 0, a name not
in ASCII; and, drawn apart (fuzz.mutants.campaign), a recurrence's base clause deleted, its
step's range narrowed or its read of an earlier step made one of the step being computed, or a
type name in an annotation misspelled, which must be a diagnostic.

The tokenizer is the fuzzer's own (a few regular expressions), not einc's lexer, so that the
mutants do not inherit its idea of what a token is. Joining the tokens gives the text back.
"""
from __future__ import annotations

import random
import re

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\])*")
  | (?P<number>\d+\.\d+(?:[eE][+-]?\d+)?(?:f32|f64)?|\d+[eE][+-]?\d+(?:f32|f64)?|\d+(?:i32|i64|f32|f64)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<operator>\.\.=|\.\.|::|->|=>|\|>|\*\*|==|!=|<=|>=|&&|\|\|)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

TYPES = ("f32", "f64", "i32", "i64", "bool", "str", "i8")
NUMBERS = ("0", "1", "2", "7", "0.0", "1.0", "-1", "2147483647", "2147483648", "9223372036854775808",
           "99999999999999999999999", "1e309", "1e-320", "3.5e38", "0.5f64", "3i64", "1f32", "1.5e")
OPERATORS = ("+", "-", "*", "/", "%", "**", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "..", "..=",
             "=", ":", ";", ",", "@", "|", "|>", "!", "?", ".", "::", "->", "=>")
KEYWORDS = ("let", "fn", "use", "mod", "pub", "if", "else", "match", "where", "in", "as", "sum",
            "max", "true", "false", "crate", "self", "super", "const", "@fn")
BRACKETS = ("(", ")", "[", "]", "{", "}", "<", ">")
STRAY = ("\x00", "\x7f", "\t", "\r", "#", "$", "`", "\\", "'", '"', "\u00e9", "\u2028", "\ufeff",
         "\U0001f600", "/*", "*/", "//")


def tokens(text: str) -> list[tuple[str, str]]:
    return [(m.lastgroup, m.group()) for m in TOKEN.finditer(text)]


def mutate(text: str, rng: random.Random, count: int | None = None) -> bytes:
    """`text` with 1-3 mutations (or `count`); bytes, since a stray byte need not be UTF-8."""
    for _ in range(count or rng.choice((1, 1, 1, 2, 3))):
        operator = rng.choice(MUTATIONS)
        text = operator(text, rng)
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.03:                          # a byte that is not UTF-8 at all
        at = rng.randrange(len(data) + 1)
        data = data[:at] + bytes([rng.choice((0x80, 0xc3, 0xff, 0xfe))]) + data[at:]
    return data


def _significant(toks: list) -> list[int]:
    return [k for k, (kind, _) in enumerate(toks) if kind not in ("space", "comment")]


def _edit_token(text: str, rng: random.Random, change) -> str:
    toks = tokens(text)
    places = _significant(toks)
    if not places:
        return text
    return "".join(change(toks, rng.choice(places), places))


def delete_token(text: str, rng: random.Random) -> str:
    return _edit_token(text, rng, lambda toks, k, _: [t for j, (_, t) in enumerate(toks) if j != k])


def duplicate_token(text: str, rng: random.Random) -> str:
    return _edit_token(text, rng, lambda toks, k, _: [t * (2 if j == k else 1) for j, (_, t) in enumerate(toks)])


def swap_tokens(text: str, rng: random.Random) -> str:
    def swap(toks, k, places):
        later = [p for p in places if p > k]
        if not later:
            return [t for _, t in toks]
        other = later[0] if rng.random() < 0.7 else rng.choice(later)
        texts = [t for _, t in toks]
        texts[k], texts[other] = texts[other], texts[k]
        return texts
    return _edit_token(text, rng, swap)


def _replace_kind(text: str, rng: random.Random, kinds: tuple, choices) -> str:
    toks = tokens(text)
    places = [k for k, (kind, t) in enumerate(toks) if kind in kinds]
    if not places:
        return insert_token(text, rng)
    k = rng.choice(places)
    texts = [t for _, t in toks]
    texts[k] = choices(toks, texts[k])
    return "".join(texts)


def change_number(text: str, rng: random.Random) -> str:
    return _replace_kind(text, rng, ("number",), lambda _, __: rng.choice(NUMBERS))


def change_type(text: str, rng: random.Random) -> str:
    toks = tokens(text)
    places = [k for k, (kind, t) in enumerate(toks) if kind == "name" and t in TYPES]
    if not places:
        return change_number(text, rng)
    texts = [t for _, t in toks]
    texts[rng.choice(places)] = rng.choice(TYPES)
    return "".join(texts)


def change_name(text: str, rng: random.Random) -> str:
    def other_name(toks, old):
        names = sorted({t for kind, t in toks if kind == "name"})
        return rng.choice(names + ["undefined_name", "T", "_", "main", "sum", "print"])
    return _replace_kind(text, rng, ("name",), other_name)


def change_operator(text: str, rng: random.Random) -> str:
    return _replace_kind(text, rng, ("operator", "other"), lambda _, __: rng.choice(OPERATORS + BRACKETS))


def insert_token(text: str, rng: random.Random) -> str:
    toks = tokens(text)
    k = rng.randrange(len(toks) + 1)
    new = rng.choice((rng.choice(KEYWORDS), rng.choice(OPERATORS), rng.choice(BRACKETS),
                      rng.choice(NUMBERS), rng.choice(TYPES)))
    texts = [t for _, t in toks]
    return "".join(texts[:k] + [" " + new + " "] + texts[k:])


def drop_line(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def repeat_line(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    k = rng.randrange(len(lines))
    lines.insert(k, lines[k])
    return "\n".join(lines)


def truncate(text: str, rng: random.Random) -> str:
    return text[:rng.randrange(len(text) + 1)]


def stray(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(STRAY) + text[at:]


def line_endings(text: str, rng: random.Random) -> str:
    """The text as another editor saves it: CRLF line ends, a byte order mark, tab indents."""
    how = rng.randrange(3)
    if how == 0:
        return text.replace("\n", "\r\n")
    if how == 1:
        return "\ufeff" + text
    return re.sub(r"(?m)^ {2,}", "\t", text)


FIELD = re.compile(r"\{[^{}]*\}")


def break_interpolation(text: str, rng: random.Random) -> str:
    """A `{field}` of a string with a spec that fits nothing, a name not defined, or no `}`."""
    toks = tokens(text)
    places = [k for k, (kind, t) in enumerate(toks) if kind == "string" and FIELD.search(t)]
    if not places:
        return stray(text, rng)
    k = rng.choice(places)
    m = rng.choice(list(FIELD.finditer(toks[k][1])))
    inner = m.group()[1:-1].split(":")[0] or "x"
    new = rng.choice((f"{{{inner}:.zz}}", f"{{{inner}:q}}", "{undefined_name}", f"{{{inner}", "{}",
                      f"{{{inner}:{{}}}}"))
    texts = [t for _, t in toks]
    texts[k] = texts[k][:m.start()] + new + texts[k][m.end():]
    return "".join(texts)


INDEXED_LET = re.compile(r"let\s+(\w+)\[\s*(\w+)[^\]]*\][^;]*;")


def range_in_where(text: str, rng: random.Random) -> str:
    """A definition's index given a range in a where clause (thesis 2.1.1 rejects it)."""
    lets = list(INDEXED_LET.finditer(text))
    if not lets:
        return insert_token(text, rng)
    m = rng.choice(lets)
    index = m.group(2) if rng.random() < 0.7 else "undefined_index"
    return text[:m.end() - 1] + f" where {index} in 0..{rng.choice((0, 1, 3))}" + text[m.end() - 1:]


CALL_ARGS = re.compile(r"\b\w+\(([^()]*)\)")


def call_arity(text: str, rng: random.Random) -> str:
    """A call given one argument too many or too few."""
    calls = [m for m in CALL_ARGS.finditer(text) if m.group(1).strip()]
    if not calls:
        return insert_token(text, rng)
    m = rng.choice(calls)
    args = m.group(1)
    new = args + rng.choice((", 1.0", ", 2", ", x")) if rng.random() < 0.5 else args.rpartition(",")[0]
    return text[:m.start(1)] + new + text[m.end(1):]


SUBSCRIPTS = re.compile(r"\b(\w+)\[([^\[\]]+)\]")


def change_subscripts(text: str, rng: random.Random) -> str:
    """A read or definition with a subscript more or fewer, or a constant one past any end."""
    reads = list(SUBSCRIPTS.finditer(text))
    if not reads:
        return insert_token(text, rng)
    m = rng.choice(reads)
    subs = m.group(2)
    new = rng.choice((subs + ", 0", subs.rpartition(",")[0] or subs + ", i", "99999", "-1"))
    return text[:m.start(2)] + new + text[m.end(2):]


def zero_divisor(text: str, rng: random.Random) -> str:
    """The operand after a `/` or `%` made the constant 0."""
    toks = tokens(text)
    places = [k for k in _significant(toks) if toks[k][1] in ("/", "%")]
    later = [(k, next((j for j in _significant(toks) if j > k), None)) for k in places]
    later = [(k, j) for k, j in later if j is not None]
    if not later:
        return change_number(text, rng)
    _, j = rng.choice(later)
    texts = [t for _, t in toks]
    texts[j] = rng.choice(("0", "0.0", "(1 - 1)"))
    return "".join(texts)


def non_ascii_name(text: str, rng: random.Random) -> str:
    """Every use of one name spelled with a letter that is not ASCII."""
    names = sorted({t for kind, t in tokens(text) if kind == "name" and t not in KEYWORDS + TYPES})
    if not names:
        return stray(text, rng)
    old = rng.choice(names)
    new = rng.choice(("\u03b1", "\u00e9", "\u0394")) + old
    return "".join(new if kind == "name" and t == old else t for kind, t in tokens(text))


MUTATIONS = (delete_token, delete_token, duplicate_token, swap_tokens, swap_tokens, change_number,
             change_number, change_type, change_type, change_name, change_operator, insert_token,
             drop_line, repeat_line, truncate, stray, line_endings, break_interpolation, range_in_where,
             call_arity, change_subscripts, zero_divisor, non_ascii_name)


# A definition of two clauses, a base point and a step from the next point on that reads the
# step before, outside any `if` or `where` (`let s[0] = ..; let s[t in 1..T] = s[t - 1] + ..;`).
STEP_CLAUSE = re.compile(r"let\s+(\w+)\[\s*(\w+)\s+in\s+(\d+)\.\.([^\],\[]+)\]\s*=([^;{}]*);")


def recurrences(text: str) -> list:
    """(base clause match, step clause match) of each such definition in `text`."""
    found = []
    for step in STEP_CLAUSE.finditer(text):
        name, index, first, body = step.group(1), step.group(2), int(step.group(3)), step.group(5)
        reads_back = re.search(rf"\b{name}\[\s*{index}\s*-\s*1\s*\]", body)
        base = re.search(rf"let\s+{name}\[\s*{first - 1}\s*\][^;{{}}]*;", text)
        clauses = len(re.findall(rf"\blet\s+{name}\[", text))
        if reads_back and base and clauses == 2 and not re.search(r"\bif\b|\bwhere\b|\bmatch\b", body):
            found.append((base, step))
    return found


def delete_base_clause(text: str, rng: random.Random) -> str | None:
    """The base clause of a recurrence deleted: its step reads a point no clause defines (E005)."""
    found = recurrences(text)
    if not found:
        return None
    base, _ = rng.choice(found)
    return text[:base.start()] + text[base.end():]


def narrow_clause_range(text: str, rng: random.Random) -> str | None:
    """A recurrence's step clause started one step later (`t in 1..T` to `t in 2..T`): its first
    step reads the point it no longer defines (E005)."""
    found = recurrences(text)
    if not found:
        return None
    _, step = rng.choice(found)
    return text[:step.start(3)] + str(int(step.group(3)) + 1) + text[step.end(3):]


# a step clause of a one-axis recurrence on one line, `let r[t in 2..T] = ..;`, blocks included
ONE_AXIS_STEP = re.compile(r"^[ \t]*let\s+(\w+)\[\s*(\w+)\s+in\s+([^\]\[,]+)\]\s*=(.*)$", re.MULTILINE)
EMPTY_RANGE = re.compile(r"^\s*(\d+)\s*\.\.\s*(\d+)\s*$")


def step_reads_back(text: str) -> list:
    """Each read `r[t - c]` of a one-axis recurrence's state in one of its step clauses, inside
    the blocks and local definitions of the step too."""
    found = []
    for clause in ONE_AXIS_STEP.finditer(text):
        name, index = clause.group(1), clause.group(2)
        literal = EMPTY_RANGE.match(clause.group(3))
        if literal and int(literal.group(2)) <= int(literal.group(1)):
            continue                # `t in 5..2` has no step, so no read runs
        back = re.compile(rf"\b{name}\[\s*{index}\s*-\s*\d+\s*\]")
        found += [(clause.start(4) + m.start(), clause.start(4) + m.end(), name, index)
                  for m in back.finditer(clause.group(4))]
    return found


def read_the_step_being_computed(text: str, rng: random.Random) -> str | None:
    """A read of an earlier step of a recurrence made a read of the step being computed
    (`r[t - 1]` to `r[t]`), wherever it is in the step: it reads itself (E007), or from a loop
    nested in the step, a step the nesting cannot read (E011)."""
    found = step_reads_back(text)
    if not found:
        return None
    start, end, name, index = rng.choice(found)
    return text[:start] + f"{name}[{index}]" + text[end:]


# a type name where a type is written: after `:` (a parameter, binding or input), `->`, `as`, or
# first inside `[` (an array's element type)
ANNOTATED_TYPE = re.compile(r"(?:(?<=:)|(?<=->)|(?<=\bas)|(?<=\[))(\s*)(f16|f32|f64|i8|i32|i64|u8|bool)\b(?=\s*[;,\]){=)])")


def annotated_types(text: str) -> list:
    return list(ANNOTATED_TYPE.finditer(text))


def misspell_type(text: str, rng: random.Random) -> str | None:
    """A type name in an annotation misspelled as users do (`flaot32`, `f23`, `int32`, `double`):
    no type has that name and Einlang has no type parameters (E002)."""
    found = annotated_types(text)
    if not found:
        return None
    place = rng.choice(found)
    name = place.group(2)
    wrong = rng.choice([name[0] + name[:0:-1], name + name[-1], "T", "flaot" + name[1:] if name[0] == "f" else
                        "int" + name[1:], "double" if name[0] == "f" else "long"])
    if wrong == name:
        wrong += "x"
    return text[:place.start(2)] + wrong + text[place.end(2):]


# the mutations that must be a diagnostic -> the places in a program where each applies
COVERAGE_MUTATIONS = {delete_base_clause: recurrences, narrow_clause_range: recurrences, misspell_type: annotated_types,
                      read_the_step_being_computed: step_reads_back}
