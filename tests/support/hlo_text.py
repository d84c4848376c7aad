"""A compiled XLA program's text (``jax.jit(f).lower(...).compile().as_text()``) read into
its computations and their instructions, for tests that check what XLA made of a stop:
what reads a value, what a conditional branches on, what runs whatever it decides."""

from __future__ import annotations

import dataclasses
import re

# `%name = shape opcode(operands), attributes`, `ROOT` before the root; a tuple's shape
# is in parentheses and may hold spaces.
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%(?P<name>\S+) = (?P<shape>\([^=]*?\)|\S+) (?P<opcode>[a-z][\w-]*)\(")
_COMPUTATION = re.compile(r"^(?P<entry>ENTRY )?%(?P<name>\S+) .*\{$")
_CALLED = re.compile(r"\b(calls|to_apply|body|condition|true_computation|false_computation)=%([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
# The computations XLA outlines for one kernel (a fusion's body): their instructions run
# inside that kernel, not as steps of their own.
_KERNEL_BODY_PREFIXES = ("fused", "wrapped")


@dataclasses.dataclass(frozen=True)
class Instruction:
    name: str
    shape: str  # without its layout: "f32[128]", "pred[4,128]"
    opcode: str
    operands: tuple[str, ...]  # the instructions it reads, by name
    line: str

    def called(self) -> list[tuple[str, str]]:
        """The computations it calls: (how, name), ``branch`` for a conditional's branches."""
        found = _CALLED.findall(self.line)
        for branches in _BRANCHES.findall(self.line):
            found += [("branch", b.strip().lstrip("%")) for b in branches.split(",") if b.strip()]
        return found


@dataclasses.dataclass(frozen=True)
class Computation:
    name: str
    instructions: tuple[Instruction, ...]

    @property
    def is_kernel_body(self) -> bool:
        return self.name.startswith(_KERNEL_BODY_PREFIXES)


@dataclasses.dataclass(frozen=True)
class Program:
    computations: dict[str, Computation]
    entry: str

    def instructions(self, *, kernel_bodies: bool = True) -> list[Instruction]:
        return [i for c in self.computations.values() if kernel_bodies or not c.is_kernel_body for i in c.instructions]

    def readers_of(self, shape: str) -> list[str]:
        """The instructions that read a value of ``shape`` (e.g. ``pred[4,128]``), outside
        the computations that make up each kernel: what the program does with that value."""
        steps = self.instructions(kernel_bodies=False)
        shapes = {i.name: i.shape for i in steps}
        return [i.name for i in steps if any(shapes.get(o) == shape for o in i.operands)]

    def conditional_indices(self) -> list[str]:
        """The opcode of what makes the branch index of each conditional (a ``fusion`` is
        a kernel XLA compiled for it)."""
        opcodes = {i.name: i.opcode for i in self.instructions()}
        return [opcodes.get(i.operands[0], "?") for i in self.instructions() if i.opcode == "conditional"]

    def always_run(self) -> list[Instruction]:
        """The instructions that run whatever the conditionals decide: those of the
        computations reached from the entry without entering a conditional's branch."""
        reached, todo = {self.entry}, [self.entry]
        while todo:
            for instruction in self.computations[todo.pop()].instructions:
                for how, called in instruction.called():
                    if how not in ("branch", "true_computation", "false_computation") and called not in reached:
                        reached.add(called)
                        todo.append(called)
        return [i for name in reached for i in self.computations[name].instructions]


def _operands(line: str, opening: int) -> tuple[str, ...]:
    """The names read by the instruction whose operand list opens at ``line[opening]``."""
    depth, end = 0, len(line)
    for at in range(opening, len(line)):
        depth += {"(": 1, ")": -1}.get(line[at], 0)
        if depth == 0:
            end = at
            break
    return tuple(re.findall(r"%([\w.\-]+)", line[opening + 1 : end]))


def parse(compiled_text: str) -> Program:
    computations: dict[str, list[Instruction]] = {}
    entry = current = ""
    for line in compiled_text.splitlines():
        if (found := _COMPUTATION.match(line)) is not None:
            current = found["name"]
            computations[current] = []
            entry = current if found["entry"] else entry
        elif current and (found := _INSTRUCTION.match(line)) is not None:
            shape = found["shape"].split("{")[0] if not found["shape"].startswith("(") else found["shape"]
            operands = _operands(line, found.end() - 1)
            computations[current].append(Instruction(found["name"], shape, found["opcode"], operands, line))
        elif line.startswith("}"):
            current = ""
    return Program({n: Computation(n, tuple(i)) for n, i in computations.items()}, entry)
