"""The package's shape: no two of its modules import each other, directly or round a
circle, not even for type hints only (docs/ARCHITECTURE.md keeps the same rule for the
Rust crates, and tests/tests/architecture.rs checks it there)."""

import ast
import pathlib

import answer_inbox

PACKAGE = pathlib.Path(answer_inbox.__file__).parent


def imports_of_each_module():
    graph = {}
    for path in PACKAGE.glob("*.py"):
        name = path.stem
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(alias.name for alias in node.names)
        graph[name] = found - {name}
    return graph


def find_circle(graph):
    done = set()

    def visit(node, path):
        if node in path:
            return path[path.index(node) :]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, path + [node])
            if found:
                return found
        done.add(node)
        return None

    for node in sorted(graph):
        found = visit(node, [])
        if found:
            return found
    return None


def test_no_two_modules_import_each_other():
    graph = imports_of_each_module()
    # The package root gathers the public names; nothing imports it back.
    assert len(graph) > 5, graph
    assert find_circle(graph) is None, find_circle(graph)


def test_the_circle_finder_finds_one():
    assert sorted(find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()})) == ["a", "b", "c"]
