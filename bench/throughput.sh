#!/usr/bin/env bash
# 10,000-file throughput of issue 16, interleaved rounds (wall and CPU seconds per command):
#   bench/throughput.sh [ROUNDS] [BASELINE_KIMI_LSP]
# Uses bench/.venv (run bench/run once first: it installs this tree and yamllint there) and the
# seed-0 corpus of bench/gen_corpus.py in bench/.cache (made here when missing). Per round:
#   kimi-lsp --check -q --no-cache --jobs 1|2 <the corpus's YAML files>   (vs yamllint on the same list)
#   yamllint -f parsable <the same YAML files>
#   kimi-lsp --check -q --no-cache --jobs 1|2 .                          (the whole corpus, walked)
# and, with a baseline kimi-lsp (e.g. main installed in another venv), the same kimi-lsp commands for it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rounds="${1:-3}"
base="${2:-}"
bin="${KIMI_BENCH_VENV:-$here/.venv}/bin"
root="$("$bin/python" -c "
import sys; sys.path.insert(0, '$here')
from pathlib import Path
import harness
root, files = harness.corpus(10000, Path('$here/.cache'), 0)
(root / '.yaml-list').write_text(''.join(f'{f}\n' for f in files))
print(root)")"
cd "$root"
mapfile -t yaml_files < .yaml-list
echo "corpus $root: ${#yaml_files[@]} YAML files; load average $(cut -d' ' -f1-3 /proc/loadavg)"
timed() {  # name command...: one line "name wall cpu"
  local name="$1"; shift
  /usr/bin/time -f "$name %e %U %S" -o "$root/.time" "$@" >/dev/null 2>&1 || true
  tail -1 "$root/.time" | awk '{printf "%-14s wall %6.2f s  cpu %6.2f s\n", $1, $2, $3 + $4}'
}
for _ in $(seq "$rounds"); do
  timed kimi-yaml-j1 "$bin/kimi-lsp" --check -q --no-cache --jobs 1 "${yaml_files[@]}"
  timed yamllint "$bin/yamllint" -f parsable "${yaml_files[@]}"
  timed kimi-yaml-j2 "$bin/kimi-lsp" --check -q --no-cache --jobs 2 "${yaml_files[@]}"
  timed kimi-dir-j1 "$bin/kimi-lsp" --check -q --no-cache --jobs 1 .
  timed kimi-dir-j2 "$bin/kimi-lsp" --check -q --no-cache --jobs 2 .
  if [ -n "$base" ]; then
    timed base-yaml-j1 "$base" --check -q --no-cache --jobs 1 "${yaml_files[@]}"
    timed base-dir-j1 "$base" --check -q --no-cache --jobs 1 .
    timed base-dir-j2 "$base" --check -q --no-cache --jobs 2 .
  fi
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
