"""``cq agent install|uninstall`` on a temp project and a temp home."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_cq

CLAUDE_CMD = Path(".claude/commands/cq.md")
CODEX_SKILL = Path(".agents/skills/cq/SKILL.md")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("def main():\n    pass\n")
    return project


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def agent(*args: str, cwd: Path, home: Path) -> str:
    run = run_cq("agent", *args, cwd=cwd, env={"HOME": str(home)})
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    return run.stdout


def test_project_install_is_idempotent_and_uninstall_restores_the_tree(project, home):
    (project / "CLAUDE.md").write_text("# House rules\n\nTabs, never spaces.\n")
    before = snapshot(project)
    first = agent("install", "--guidance", cwd=project, home=home)
    assert "written" in first
    cmd = (project / CLAUDE_CMD).read_text()
    assert "$ARGUMENTS" in cmd and cmd.startswith("---\ndescription:")
    skill = (project / CODEX_SKILL).read_text()
    assert re.search(r"^name: cq$", skill, re.M) and "description:" in skill
    claude_md = (project / "CLAUDE.md").read_text()
    assert claude_md.startswith("# House rules\n\nTabs, never spaces.\n")
    assert "cq:agent:begin" in claude_md and (project / "AGENTS.md").exists()
    installed = snapshot(project)

    second = agent("install", "--guidance", cwd=project, home=home)
    assert snapshot(project) == installed
    assert all(line.startswith("unchanged") for line in second.splitlines())

    agent("uninstall", cwd=project, home=home)
    assert snapshot(project) == before
    assert sorted(p.name for p in project.iterdir()) == ["CLAUDE.md", "app.py"]
    assert list(home.iterdir()) == []


def test_edited_files_are_kept_unless_forced(project, home):
    agent("install", "--claude", cwd=project, home=home)
    cmd = project / CLAUDE_CMD
    edited = cmd.read_text() + "\nAlways pass --lang python.\n"
    cmd.write_text(edited)

    out = agent("install", "--claude", cwd=project, home=home)
    assert out.startswith("kept") and cmd.read_text() == edited
    out = agent("uninstall", "--claude", cwd=project, home=home)
    assert out.startswith("kept") and cmd.read_text() == edited

    out = agent("install", "--claude", "--force", cwd=project, home=home)
    assert out.startswith("overwritten") and "Always pass" not in cmd.read_text()
    agent("uninstall", "--claude", cwd=project, home=home)
    assert not (project / ".claude").exists()


def test_a_file_the_user_wrote_first_is_never_replaced_or_removed(project, home):
    mine = project / CLAUDE_CMD
    mine.parent.mkdir(parents=True)
    mine.write_text("my own /cq command\n")
    assert agent("install", "--claude", cwd=project, home=home).startswith("kept")
    agent("uninstall", "--claude", "--project", cwd=project, home=home)
    assert mine.read_text() == "my own /cq command\n"


def test_edited_guidance_block_is_kept_and_the_rest_of_the_file_untouched(project, home):
    (project / "AGENTS.md").write_text("Intro line without newline")
    agent("install", "--codex", "--guidance", cwd=project, home=home)
    text = (project / "AGENTS.md").read_text()
    assert text.startswith("Intro line without newline\n\n<!-- cq:agent:begin")
    (project / "AGENTS.md").write_text(text.replace("## Code search", "## Code search (mine)"))
    agent("uninstall", "--codex", cwd=project, home=home)
    assert "(mine)" in (project / "AGENTS.md").read_text()
    agent("uninstall", "--codex", "--force", cwd=project, home=home)
    assert (project / "AGENTS.md").read_text() == "Intro line without newline"


def test_user_scope_writes_under_home_only(project, home):
    before = snapshot(project)
    agent("install", "--user", "--guidance", cwd=project, home=home)
    assert snapshot(project) == before
    assert (home / CLAUDE_CMD).is_file()
    assert (home / CODEX_SKILL).is_file()
    prompt = home / ".codex" / "prompts" / "cq.md"
    assert "$ARGUMENTS" in prompt.read_text()
    assert "cq:agent:begin" in (home / ".claude" / "CLAUDE.md").read_text()
    assert "cq:agent:begin" in (home / ".codex" / "AGENTS.md").read_text()
    agent("uninstall", "--user", cwd=project, home=home)
    assert list(home.iterdir()) == []


def test_codex_home_is_honoured_for_user_prompts(project, home, tmp_path):
    codex_home = tmp_path / "codex-home"
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home)}
    run = run_cq("agent", "install", "--codex", "--user", cwd=project, env=env)
    assert run.returncode == 0, run.stderr
    assert (codex_home / "prompts" / "cq.md").is_file()
    assert not (home / ".codex").exists() and (home / CODEX_SKILL).is_file()
    assert run_cq("agent", "uninstall", "--user", cwd=project, env=env).returncode == 0
    assert list(codex_home.rglob("*.md")) == [] and list(home.iterdir()) == []


def test_uninstall_without_a_manifest_removes_only_pristine_files(project, home, tmp_path):
    agent("install", "--claude", cwd=project, home=home)
    # A different cache dir: the manifest is gone, as after clearing the cache.
    run = run_cq(
        "agent", "uninstall", cwd=project, env={"HOME": str(home), "CQ_CACHE_DIR": str(tmp_path)}
    )
    assert run.returncode == 0 and run.stdout.startswith("removed")
    assert not (project / CLAUDE_CMD).exists()


def test_bad_invocations_are_one_line_errors(project, home):
    for args in (["agent"], ["agent", "install", "--user", "--project"], ["agent", "nope"]):
        run = run_cq(*args, cwd=project, env={"HOME": str(home)})
        assert run.returncode == 2
        assert run.stderr.startswith("cq: ") and run.stderr.count("\n") == 1
    run = run_cq("agent", "install", "--root", str(project / "missing"), env={"HOME": str(home)})
    assert run.returncode == 2 and "not found" in run.stderr


def test_templates_only_mention_flags_cq_search_accepts():
    from cq.agent.targets import artifacts

    helptext = run_cq("search", "--help").stdout
    texts = [a.content for a in artifacts(("claude", "codex"), "user", Path("/h"), True)]
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", "\n".join(texts)))
    assert flags, "templates should teach some flags"
    assert sorted(f for f in flags if f not in helptext) == []


def test_project_and_user_installs_in_the_home_dir_stay_separate(home):
    agent("install", "--user", cwd=home, home=home)
    agent("install", "--project", "--guidance", cwd=home, home=home)
    agent("uninstall", "--project", cwd=home, home=home)
    assert not (home / "CLAUDE.md").exists() and not (home / "AGENTS.md").exists()
    assert (home / ".codex" / "prompts" / "cq.md").is_file()  # user scope untouched
    agent("uninstall", "--user", cwd=home, home=home)
    assert list(home.iterdir()) == []
