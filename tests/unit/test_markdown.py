"""The documentation reader (syntax/markdown.py): which code blocks there are, and the same-length
view of the document that the shell, YAML and Dockerfile readers run on."""
from __future__ import annotations

import pytest

from kimi_lsp.syntax import markdown as md


def _langs(text: str, rst: bool = False) -> list[tuple[str, str]]:
    return [(b.lang, text[b.body.start : b.body.end]) for b in md.code_blocks(text, rst=rst)]


def test_fences_follow_commonmark() -> None:
    text = (
        "```bash\nA\n```\n"
        "~~~~ yaml title=x\nB\n~~~\nC\n~~~~\n"  # a shorter run does not close
        "````{sh}\nD\n````\n"
        "``` not`a`fence\nE\n"  # a backtick in a backtick fence's info: not a fence
        "```\nF"  # unclosed: runs to the end
    )
    assert _langs(text) == [("bash", "A"), ("yaml", "B\n~~~\nC"), ("sh", "D"), ("", "F")]


def test_view_keeps_every_offset_and_blanks_the_rest() -> None:
    text = "Run it:\r\n\r\n```console\r\n$ python -m x --a 1 \\\r\n    --b 2\r\noutput --c\r\n```\r\n"
    view = md.code_view(text, md.code_blocks(text), shell=True)
    assert len(view) == len(text)
    assert [i for i, c in enumerate(text) if c in "\r\n"] == [i for i, c in enumerate(view) if c in "\r\n"]
    assert view.split() == ["python", "-m", "x", "--a", "1", "\\", "--b", "2"]  # prompt and output gone
    assert view.index("python") == text.index("python")


@pytest.mark.parametrize(("written", "words"), [
    ("--model-path <model-path> --port 1", ["--model-path", "$" + "_" * 11, "--port", "1"]),
    ("cat <<EOF", ["cat", "<<EOF"]),
    ("x 2>&1 < in.txt", ["x", "2>&1", "<", "in.txt"]),
    ("[your normal parameters...] --tp 2", ["$__________________________", "--tp", "2"]),
    ("[ -f a ] && [[ -d b ]] ${arr[@]}", ["[", "-f", "a", "]", "&&", "[[", "-d", "b", "]]", "${arr[@]}"]),
    ("--port your_port --host {host} ...", ["--port", "$________", "--host", "$_____", "$__"]),
    ("echo ${HOME} {a,b}", ["echo", "${HOME}", "{a,b}"]),
])
def test_placeholders_become_unknown_words(written: str, words: list[str]) -> None:
    text = f"```sh\n{written}\n```\n"
    assert md.code_view(text, md.code_blocks(text), shell=True).split() == words


def test_a_line_of_options_continues_the_command_above() -> None:
    text = "```sh\npython -m sglang.launch_server --model-path m\n  --tp 2\n# a comment\n  --x\n```\n"
    view = md.code_view(text, md.code_blocks(text), shell=True)
    first, second = view.split("\n")[1:3]
    assert first.endswith("--model-path m   --tp 2") and second.strip() == "# a comment"


def test_a_manifest_in_a_shell_block_reads_as_yaml() -> None:
    text = "```shell\n# a comment\napiVersion: v1\nkind: Pod\n```\n```bash\necho apiVersion: v1\n```\n"
    first, second = md.code_blocks(text)
    assert md.looks_like_yaml(text, first) and not md.looks_like_yaml(text, second)


def test_rst_code_block_directives() -> None:
    text = (
        "Intro\n\n.. code-block:: bash\n   :linenos:\n\n   pip install x\n\n   run y\n\nAfter.\n\n"
        "A literal block::\n\n   not read\n"
    )
    assert _langs(text, rst=True) == [("bash", "   pip install x\n\n   run y")]


def test_a_documented_launch_is_an_error_only_on_its_own_evidence(tmp_path, monkeypatch, capsys) -> None:
    # The project's pins are a guess at what a reader of the docs installs: a claim resting on
    # them is a warning that says so; what the document installs itself is the example's own.
    import json

    from kimi_lsp.cli.main import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n")
    k3 = "python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --dcp-size 8 --decode-attention-backend cutedsl_mla"
    (tmp_path / "guide.md").write_text(f"```bash\n{k3}\n```\n")
    (tmp_path / "pinned.md").write_text(f"```bash\npip install flashinfer-python==0.6.16.post4\n{k3}\n```\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    main(["--check", "--no-cache", "--format", "json", "guide.md", "pinned.md"])
    got = {(d["path"], d["code"]): d for d in json.loads(capsys.readouterr().out)["diagnostics"]}
    guide, pinned = got[("guide.md", "KL101")], got[("pinned.md", "KL101")]
    assert guide["severity"] == "warning" and "an example in documentation, checked against the project's pins" in guide["message"]
    assert all(f["applicability"] != "safe" for f in guide["fixes"])
    assert pinned["severity"] == "error" and pinned["fixes"][0]["applicability"] == "safe"


def test_a_last_line_ending_in_a_backslash_continues_onto_nothing(tmp_path, monkeypatch, capsys) -> None:
    # as in the document, where the closing fence's line is blank in the view
    import json

    from kimi_lsp.cli.main import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text("```\npython -m sglang.launch_server \\\n  --model m \\\n  --tp 8 \\\n```\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    main(["--check", "--no-cache", "--format", "json", "README.md"])
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []
