"""The prompt's memos live in a PromptCache its owner holds, never in module globals.

Module-level caches were hidden state shared by every runtime in a process; the scan below
keeps them from coming back to the aggregator and to assembly.
"""

from __future__ import annotations

import ast
from pathlib import Path

from terrarium.config import load_team
from terrarium.controller.assembly import AssemblyCache, assemble
from terrarium.prompt import PromptBuilder, PromptCache

try:
    from golden.prompt_inputs import FakeFormat, make_inputs
except ImportError:  # pragma: no cover
    from tests.golden.prompt_inputs import FakeFormat, make_inputs

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [
    *sorted((ROOT / "terrarium" / "prompt").glob("*.py")),
    ROOT / "terrarium" / "controller" / "assembly.py",
]
VOICE_ASSISTANT = ROOT / "examples" / "voice_assistant"

# callables whose result is a mutable container or a memo
MUTABLE_FACTORIES = frozenset(
    {
        "dict", "list", "set", "bytearray", "defaultdict", "OrderedDict", "Counter", "deque",
        "WeakKeyDictionary", "WeakValueDictionary", "WeakSet", "lru_cache", "cache",
        "IdentityCache", "IdentityMemo", "PromptCache", "AssemblyCache",
    }
)
MEMO_DECORATORS = frozenset({"lru_cache", "cache", "cached", "identity_memo"})
DISPLAYS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def _callee(node: ast.expr) -> str:
    """The name a call or decorator is made through (``functools.lru_cache(...)`` → lru_cache)."""
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _mutable(value: ast.expr | None) -> bool:
    if value is None:
        return False
    if isinstance(value, DISPLAYS):
        return True
    return isinstance(value, ast.Call) and _callee(value) in MUTABLE_FACTORIES


def module_state(source: str, name: str = "<module>") -> list[str]:
    """Module- and class-level mutable state, memo decorators and ``global`` statements."""
    found: list[str] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"{name}:{node.lineno}: global {', '.join(node.names)}")

    def scan(body: list[ast.stmt], where: str) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if names == ["__all__"]:
                    continue
                if _mutable(stmt.value):
                    found.append(f"{name}:{stmt.lineno}: {where}mutable {names or '?'}")
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for deco in stmt.decorator_list:
                    if _callee(deco) in MEMO_DECORATORS:
                        found.append(f"{name}:{stmt.lineno}: {where}memoized {stmt.name}")
                if isinstance(stmt, ast.ClassDef):
                    scan(stmt.body, f"class {stmt.name} ")
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While) and not where:
                found.append(f"{name}:{stmt.lineno}: module-level loop (registering into?)")
            elif isinstance(stmt, ast.If | ast.Try):
                blocks = [stmt.body, stmt.orelse]
                if isinstance(stmt, ast.Try):
                    blocks += [stmt.finalbody, *(h.body for h in stmt.handlers)]
                for block in blocks:
                    scan(block, where)

    scan(tree.body, "")
    return found


def test_the_scan_finds_the_kinds_of_state_it_forbids() -> None:
    planted = """
import functools
from functools import lru_cache
_A: dict[str, int] = {}
_B = []
_C = weakref.WeakKeyDictionary()
_D = IdentityCache(sorted)
_E = functools.lru_cache(maxsize=4)(len)
__all__ = ["f"]
_OK = frozenset({"a"})
_ALSO_OK = types.MappingProxyType({"a": 1})
@lru_cache(maxsize=8)
def f(x): return x
@functools.cache
def g(x): return x
class K:
    table = {}
for _v in (1, 2):
    pass
def h():
    global _B
"""
    found = module_state(planted)
    assert len(found) == 10, found
    assert not any("_OK" in f or "_ALSO_OK" in f or "__all__" in f for f in found)


def test_no_module_level_caches_in_prompt_or_assembly() -> None:
    found = [f for path in SCANNED for f in module_state(path.read_text("utf-8"), path.name)]
    assert not found, "module-level state; keep memos in a PromptCache:\n" + "\n".join(found)


def test_two_caches_share_nothing_one_cache_shares_everything() -> None:
    inputs = make_inputs()
    cache = PromptCache()
    a = PromptBuilder(inputs, FakeFormat(), cache=cache)
    b = PromptBuilder(inputs, FakeFormat(), cache=cache)
    c = PromptBuilder(inputs, FakeFormat())  # its own, private cache
    assert b.cache is cache and c.cache is not cache
    assert b.prefix is a.prefix
    assert c.prefix == a.prefix and c.prefix is not a.prefix


def test_assembly_hands_its_cache_on_so_a_team_shares_one() -> None:
    team = load_team(VOICE_ASSISTANT)
    router = assemble(team, "router")
    assert isinstance(router.cache, AssemblyCache)
    speaker = assemble(team, "speaker", cache=router.cache)
    assert speaker.cache is router.cache
    roster = router.cache.all_members(team)
    assert router.inputs.team[0] in roster and any(m is router.inputs.team[0] for m in roster)
    assert any(m is speaker.inputs.team[0] for m in roster)
    assert assemble(team, "speaker").cache is not router.cache
