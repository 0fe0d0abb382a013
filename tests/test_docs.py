"""The documentation site builds as ``make docs`` builds it (``mkdocs build --strict``), says
what the code says, and fails on what a reader would trip over.

The docs extra is in requirements.lock, so the build always runs here (no skip).
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from html import unescape as html_unescape
from pathlib import Path

import click
import pytest

from conftest import REPO
from motionkit.cli import COMMANDS, cli
from motionkit.formats import registry


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def _text(page: Path) -> str:
    """A built page's text, tags removed and entities of interest decoded."""
    return re.sub(r"<[^>]+>", "", page.read_text()).replace("&gt;", ">").replace("&lt;", "<")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = _build(REPO / "mkdocs.yml", out)
    assert result.returncode == 0, result.stderr
    return out


def test_every_command_has_its_help_on_the_cli_page(site: Path) -> None:
    page = _text(site / "cli.html")
    for name in COMMANDS:
        assert f"Usage: motionkit {name} " in page, name
    assert "Usage: motionkit batch convert " in page  # subcommands of groups too
    assert "Usage: motionkit eval ape " in page


@pytest.mark.parametrize("info", registry.formats(), ids=lambda info: info.name)
def test_every_format_has_a_page_with_its_options(site: Path, info: registry.Format) -> None:
    html = (site / "formats" / f"{info.name}.html").read_text()
    cells = {html_unescape(code) for code in re.findall(r"<code>([^<]*)</code>", html)}
    assert all(ext in cells for ext in info.extensions)
    named = {cell.split("=", 1)[0] for cell in cells}  # `name` or `name=default`, whole
    for option in info.read_options() | (info.write_options() if info.can_write() else frozenset()):
        assert option in named, option


def test_the_api_pages_are_rendered_from_the_docstrings(site: Path) -> None:
    model = (site / "api" / "model.html").read_text()
    assert 'id="motionkit.model.Motion"' in model
    assert 'id="motionkit.evaluation.ape"' in (site / "api" / "evaluation.html").read_text()
    for page in (site / "api").glob("*.html"):  # Sphinx roles show the name alone
        assert not re.search(r":(class|func|meth|mod|data|attr|exc):", _text(page)), page


@pytest.mark.parametrize("package", ["model", "kinematics", "ops", "evaluation", "motionlib", "dataset",
                                     "retarget", "plot", "view", "quality"])
def test_every_public_name_has_its_entry(site: Path, package: str) -> None:
    """Each name of a package's ``__all__`` is on the API pages (also where a submodule of the
    same name, such as ``evaluation.align``, hides the function from mkdocstrings)."""
    ids = set()
    for page in (site / "api").glob("*.html"):
        ids |= set(re.findall(r'id="(motionkit[\w.]*)"', page.read_text()))
    names = importlib.import_module(f"motionkit.{package}").__all__
    prefix = f"motionkit.{package}."
    missing = [name for name in names
               if not any(i.startswith(prefix) and i.endswith(f".{name}") for i in ids)]
    assert missing == []


def test_the_architecture_page_is_the_repository_file(site: Path) -> None:
    """Included, not forked: the page is built from docs/architecture.md itself."""
    first_paragraph = (REPO / "docs" / "architecture.md").read_text().split("\n\n")[1]
    words = " ".join(re.sub(r"[`*]", "", first_paragraph).split())
    assert words in " ".join(_text(site / "architecture.html").split())


@pytest.fixture()
def docs_copy(tmp_path: Path) -> Path:
    """mkdocs.yml and docs/ in tmp_path, the API still read from the repository's src/."""
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    config = (REPO / "mkdocs.yml").read_text()
    assert "paths: [src]" in config
    (tmp_path / "mkdocs.yml").write_text(config.replace("paths: [src]", f"paths: [{REPO / 'src'}]"))
    return tmp_path / "mkdocs.yml"


def test_the_copy_builds(docs_copy: Path) -> None:
    """The control for the tests below: the copy as it is builds."""
    assert _build(docs_copy, docs_copy.parent / "site").returncode == 0


@pytest.mark.parametrize("breakage", [
    "[a page](no-such-page.md)",
    "[an anchor](getting-started.md#no-such-heading)",
    "::: motionkit.no_such_module",
])
def test_a_broken_reference_fails_the_build(docs_copy: Path, breakage: str) -> None:
    index = docs_copy.parent / "docs" / "index.md"
    index.write_text(index.read_text() + f"\n{breakage}\n")
    assert _build(docs_copy, docs_copy.parent / "site").returncode != 0


def test_a_page_left_out_of_the_nav_fails_the_build(docs_copy: Path) -> None:
    (docs_copy.parent / "docs" / "orphan.md").write_text("# Orphan\n")
    assert _build(docs_copy, docs_copy.parent / "site").returncode != 0


def _documented_commands() -> list[tuple[str, str]]:
    """``(file, line)`` for every ``motionkit …`` line in the README's and the pages' code blocks."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for block in re.findall(r"^```[a-z]*\n(.*?)^```", path.read_text(), re.MULTILINE | re.DOTALL):
            for line in block.splitlines():
                line = line.removeprefix("$ ").strip()
                if line.startswith("motionkit "):
                    found.append((str(path.relative_to(REPO)), line))
    return found


DOCUMENTED = _documented_commands()


def test_the_pages_show_commands() -> None:
    assert len(DOCUMENTED) > 40
    assert {file for file, _ in DOCUMENTED} >= {"README.md", "docs/getting-started.md", "docs/evaluation.md"}


@pytest.mark.parametrize(("file", "line"), DOCUMENTED, ids=[f"{f}:{line}" for f, line in DOCUMENTED])
def test_every_documented_command_and_option_exists(file: str, line: str) -> None:
    """A stale page (a renamed command or option) fails here, not in a reader's shell."""
    words = shlex.split(line, comments=True)[1:]
    command: click.Command = cli
    ctx = click.Context(cli, info_name="motionkit")
    while isinstance(command, click.Group) and words and not words[0].startswith("-"):
        sub = command.get_command(ctx, words[0])
        assert sub is not None, f"{file}: no command {words[0]!r} in {line!r}"
        ctx = click.Context(sub, info_name=words.pop(0), parent=ctx)
        command = sub
    options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    options |= {"-h", "--help"} | ({"--debug"} if command is cli else set())
    for word in words:
        if word.startswith("-") and word != "-":
            assert word.split("=", 1)[0] in options, f"{file}: {ctx.command_path} has no {word} ({line!r})"


def test_the_documented_shell_completion_works() -> None:
    """The README's completion line: click's variable for the ``motionkit`` entry point."""
    readme = (REPO / "README.md").read_text()
    assert 'eval "$(_MOTIONKIT_COMPLETE=bash_source motionkit)"' in readme
    script = Path(sys.executable).with_name("motionkit")
    env = {**os.environ, "_MOTIONKIT_COMPLETE": "bash_complete", "COMP_WORDS": "motionkit conv",
           "COMP_CWORD": "1"}
    done = subprocess.run([str(script)], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0
    assert "convert" in [line.rsplit(",", 1)[-1] for line in done.stdout.splitlines()]


def _tour() -> list[str]:
    """The ``motionkit`` lines of docs/tour.md, which promises that each runs on the corpus."""
    return [line for file, line in DOCUMENTED if file == "docs/tour.md"]


def test_the_tour_has_commands() -> None:
    assert len(_tour()) >= 15


@pytest.mark.corpus
@pytest.mark.parametrize("line", _tour())
def test_the_tour_runs_on_the_corpus(corpus: Path, tmp_path: Path, line: str) -> None:
    """As a new user runs it: from the corpus folder, outputs in $OUT, exit 0, no traceback."""
    env = {**os.environ, "OUT": str(tmp_path),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", line], cwd=corpus, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_the_readme_quick_start_is_two_make_targets() -> None:
    """Exactly two set-up commands, and every ``make X`` the README and the pages name is a target."""
    readme = (REPO / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in quick.splitlines()] == ["make demo", "make test"]
    targets = set(re.findall(r"^([\w.-]+):", (REPO / "Makefile").read_text(), re.MULTILINE))
    named = set()
    for path in [REPO / "README.md", *(REPO / "docs").rglob("*.md")]:
        named |= set(re.findall(r"`make ([\w-]+)`|^make ([\w-]+)", path.read_text(), re.MULTILINE))
    assert {"demo", "test", "docs", "lock"} <= {name for pair in named for name in pair if name}
    assert {name for pair in named for name in pair if name} <= targets
