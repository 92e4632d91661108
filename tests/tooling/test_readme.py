"""README is a front door: short, its links resolve, and every command it gives is run by CI
(`.ci/run`) or by a test."""

from __future__ import annotations

import re

from tests.book_site import ROOT

README = ROOT / "README.md"
MAX_LINES = 100


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf8").count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines: move detail to CONTRIBUTING.md"


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf8")
    targets = re.findall(r"\]\((?!https?:)([^)#]+)\)", text)
    assert targets, "no relative link found in README.md"
    missing = [target for target in targets if not (ROOT / target).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def _commands_run() -> set[str]:
    """`./dev` subcommands that `.ci/run` runs by default (its `set -- check ...` list, each run
    as `./dev check`) or a test runs (`[str(DEV), "name", ...]`)."""
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(r'^\s*\./dev "\$check"$', script, re.MULTILINE), ".ci/run no longer loops"
    (default,) = re.findall(r"\|\| set -- ([a-z -]+)$", script, re.MULTILINE)
    ci = default.split()
    tests = {
        name
        for path in (ROOT / "tests").rglob("test_*.py")
        for name in re.findall(r"\[str\(DEV\), \"([a-z-]+)\"", path.read_text(encoding="utf8"))
    }
    return set(ci) | tests


def test_every_readme_command_is_run_by_ci_or_a_test() -> None:
    given = set(re.findall(r"\./dev ([a-z-]+)", README.read_text(encoding="utf8")))
    assert {"book", "test", "lab"} <= given, given
    untested = given - _commands_run()
    assert not untested, f"README gives `./dev {untested}`, which neither .ci/run nor a test runs"
