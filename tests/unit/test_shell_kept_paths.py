"""Launches kept in a variable on some paths (issue 31): a bash array or a string set in an ``if``
branch and run after it (a doubt naming the test), or inside the same branch (certain); a default
command that the script's arguments replace; ``sh -lc "$CMD"``, ``exec $CMD``; and ``numactl``
handed ``NAME=value`` words it runs as the program."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces import read_surface
from kimi_lsp.surfaces.model import LaunchCommand, SurfaceResult
from kimi_lsp.syntax.shell import FlatSource, lex
from kimi_lsp.workspace import SourceText


def read(text: str, name: str = "run.sh") -> SurfaceResult:
    result = read_surface(SourceText(Path("/repo") / name, text))
    assert not result.notes, result.notes
    return result


def values(launch: LaunchCommand) -> list[str]:
    return [t.value for t in launch.argv]


def test_commands_know_their_branch_and_its_test() -> None:
    text = 'if [[ "$S" == 1 ]]; then\n  A=1\nelse\n  B=2\n  for x in 1; do C=3; done\nfi\nD=4\n'
    by_name = {c.assignments[0].name.value: c for c in lex(FlatSource(text))[0] if c.assignments}
    a, b, c, d = (by_name[n] for n in "ABCD")
    assert a.condition == 'when `[[ "$S" == 1 ]]` holds' and b.condition == 'when `[[ "$S" == 1 ]]` fails'
    assert a.block != b.block and c.block[: len(b.block)] == b.block and len(c.block) == 2
    assert d.block == () and not d.conditional
    assert lex(FlatSource("[ -n x ] && E=1\n"))[0][1].and_or


def test_an_array_set_in_a_branch_and_run_after_it() -> None:
    text = (
        'if [[ "$SECURE" == "1" ]]; then\n  CMD=(./secure-launch.py)\nelse\n  CMD=(python -m sglang.launch_server)\nfi\n'
        'CMD+=(--model-path m --tp 2)\n'
        'if [[ "$SECURE" == "0" ]]; then\n  CMD+=(--enable-metrics)\nfi\n'
        'exec "${CMD[@]}"\n'
    )
    (launch,) = read(text).launches
    assert values(launch)[:4] == ["--model-path", "m", "--tp", "2"] and not launch.argv[4].exact  # grown in an if
    assert launch.argv[0].span.start == text.index("--model-path")
    assert launch.doubt is not None and '`[[ "$SECURE" == "1" ]]` fails' in launch.doubt
    # the launch in the first branch, a wrapper in the second: the launch stays, with a doubt
    swapped = 'if [ -n "$X" ]; then\n  CMD=(python -m sglang.launch_server)\nelse\n  CMD=(./wrap.py)\nfi\n"${CMD[@]}" --port 1\n'
    (launch,) = read(swapped).launches
    assert values(launch) == ["--port", "1"] and launch.doubt is not None and "replaced" in launch.doubt


def test_an_array_set_and_run_in_the_same_branch_is_certain() -> None:
    text = (
        'f() {\n  if [[ -n "$M" ]]; then\n    local -a cmd=(\n      python -m sglang.launch_server --model-path "$M"\n    )\n'
        '    setsid env A=1 "${cmd[@]}" --port 1 &\n  fi\n}\n'
    )
    (launch,) = read(text).launches
    assert values(launch) == ["--model-path", "$M", "--port", "1"] and launch.doubt is None
    # only its arguments set in a branch: after it, one unknown word (as before), no doubt
    args = 'if [ -n "$X" ]; then\n  EXTRA=(--bogus)\nfi\npython -m sglang.launch_server --port 1 "${EXTRA[@]}"\n'
    (launch,) = read(args).launches
    assert values(launch) == ["--port", "1", "${EXTRA[@]}"] and launch.doubt is None
    # set after `&&`: a path we cannot name, not followed
    assert read('[ -n "$X" ] && CMD=(python -m sglang.launch_server)\n"${CMD[@]}"\n').launches == ()


def test_a_kept_string_run_by_a_login_shell_in_another_branch() -> None:
    text = (
        'if [ -z "$CMD" ]; then\n  if [ -n "$M" ]; then\n'
        '    CMD="python3 -m sglang.launch_server --model-path $M"\n  fi\nfi\n'
        'if [ -n "$CMD" ]; then\n  sh -lc "${CMD}" &\nfi\n'
    )
    (launch,) = read(text).launches
    assert values(launch) == ["--model-path", "$M"]
    assert launch.doubt is not None and '`[ -n "$M" ]` holds' in launch.doubt


def test_a_default_command_replaced_by_the_arguments() -> None:
    text = 'CMD="python -m sglang.launch_server --model-path m"\nif [ $# -gt 0 ]; then\n  CMD="$@"\nfi\nexec $CMD\n'
    (launch,) = read(text).launches
    assert values(launch) == ["--model-path", "m"] and launch.argv[1].span.start == text.index(" m\"") + 1
    assert launch.doubt is not None and "replaced on some paths (when `[ $# -gt 0 ]` holds)" in launch.doubt
    # replaced on every path: nothing is run from it
    assert read('CMD="python -m sglang.launch_server"\nCMD="$@"\nexec $CMD\n').launches == ()
    # `nohup $CMD &` behind a plain wrapper, certain; `echo $CMD` runs nothing
    (launch,) = read('CMD="python -m sglang.launch_server --port 1"\nnohup $CMD --tp 2 &\necho $CMD\n').launches
    assert values(launch) == ["--port", "1", "--tp", "2"] and launch.doubt is None


def test_numactl_runs_an_assignment_as_its_program() -> None:
    text = 'numactl --cpunodebind=0 \\\nA="x" B=1 \\\npython3 -m sglang.launch_server --port 1\n'
    (launch,) = read(text).launches
    assert values(launch) == ["--port", "1"] and {"A", "B"} <= {v.name.value for v in launch.env}
    assert launch.doubt is not None and "numactl is no shell" in launch.doubt
    assert text[launch.span.start :].startswith("numactl")
    # env and sudo take NAME=value words: no doubt
    for ok in ("env A=1 python3 -m sglang.launch_server --port 1\n", "numactl -N 0 env A=1 python3 -m sglang.launch_server\n"):
        (launch,) = read(ok).launches
        assert launch.doubt is None
    doc = "```bash\nnumactl --interleave=all X=1 python3 -m sglang.launch_server --port 1\n```\n"
    (launch,) = read(doc, "README.md").launches
    assert launch.doubt is not None


def test_a_kept_launch_that_nothing_followed_runs_is_read_where_it_is_written() -> None:
    text = (
        "show() { printf ' %q' \"$@\"; }\n"
        'if [ "$DRY" = 1 ]; then\n  local -a dry=(python -m sglang.launch_server --model-path m)\n'
        '  if [ -n "$X" ]; then\n    dry+=("${EXTRA[@]}")\n  fi\n  show env A=1 "${dry[@]}"\nfi\n'
        'RUN=(python -m sglang.launch_server --port 1)\n"${RUN[@]}"\n'
        'CMD="python -m sglang.launch_server --port 2"\necho "$CMD"\n$CMD --tp 2\n'
    )
    dry, run, cmd = sorted(read(text).launches, key=lambda lc: lc.span.start)
    assert values(dry)[:2] == ["--model-path", "m"] and not dry.argv[2].exact  # grown in an if: unknown tail
    assert dry.argv[0].span.start == text.index("--model-path") and dry.doubt is not None and "nothing" in dry.doubt
    # run where kimi-lsp reads it: read there, once, and as certain as before
    assert values(run) == ["--port", "1"] and run.doubt is None
    assert values(cmd) == ["--port", "2", "--tp", "2"] and cmd.doubt is None
    doc = "```sh\nSERVER_CMD='python3 -m sglang.launch_server --port 3'\n```\n"
    (launch,) = read(doc, "README.md").launches
    assert values(launch) == ["--port", "3"] and launch.doubt is not None
    # a kept string that is no launch, and an array set after `&&`: nothing
    assert read('A="echo hi"\nB=(ls -l)\n').launches == ()


def test_a_kept_string_grown_with_plus_equals() -> None:
    text = 'C="python -m sglang.launch_server --port 1"\nC+=" --tp 2"\nif [ -n "$X" ]; then\n  C+=" $X"\nfi\nbash -lc "$C"\n'
    (launch,) = read(text).launches
    assert values(launch)[:4] == ["--port", "1", "--tp", "2"] and not launch.argv[4].exact
    assert launch.argv[3].span.start == text.index("--tp 2") + 5 and launch.doubt is None
