#!/usr/bin/env bash
# One prepared GPU check for `kimi-lsp verify`, sized to finish in under 5 minutes.
#
#   scripts/gpu-check.sh [OUT_DIR]        (default: $OUT, else ./gpu-check-out)
#
# 1. installs carried wheels if torch / flashinfer are missing (.whl/, shared/wheels/ or
#    $KIMI_LSP_WHEELS; installed with --target so the system Python stays untouched);
# 2. runs `kimi-lsp verify --json` with the default shapes and on the bundled launch files;
# 3. runs the GPU tests (pytest -m gpu tests/verify);
# 4. writes OUT_DIR/gpu-check.json after every step and on exit (failure, timeout or interrupt
#    included): every verify report, each step's exit code, time and stderr tail. Beside it only
#    gpu-check.log and pytest-gpu.log (the device tool returns at most eight files).
# Exit 0 when verify saw a CUDA device, every step ran to completion without an internal error,
# and the GPU tests passed; 1 otherwise. verify's own verdicts are in the report: on an H200
# (SM90) the expected one is exit 4, "unsupported architecture".
#
# Budget: GPU_CHECK_BUDGET_S (default 280 s) is shared by all steps; each step's timeout is cut
# to what is left, and a step that no longer fits is recorded as skipped.
set -u

cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT:-gpu-check-out}}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kimi-gpu-check.XXXXXX")
STEPS="$WORK/steps.jsonl"
: >"$STEPS"
: >"$WORK/environment.txt"
BUDGET=${GPU_CHECK_BUDGET_S:-280}
STARTED=$(date +%s)
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/server${PYTHONPATH:+:$PYTHONPATH}"

log() { echo "[gpu-check $(($(date +%s) - STARTED))s] $*" | tee -a "$OUT_DIR/gpu-check.log"; }
left() { echo $((BUDGET - ($(date +%s) - STARTED))); }

# gpu-check.json from the step records so far; exit status 0 iff the check as a whole is ok.
assemble() {
    "$PY" - "$STEPS" "$OUT_DIR/gpu-check.json" "$BUDGET" "$(($(date +%s) - STARTED))" \
        "$WORK/environment.txt" <<'PYEOF'
import json, platform, subprocess, sys

steps_path, report_path, budget, elapsed, env_path = sys.argv[1:6]
steps = []
for line in open(steps_path, encoding="utf-8"):
    try:
        steps.append(json.loads(line))
    except ValueError:
        pass
try:
    lines = open(env_path, encoding="utf-8").read().splitlines()
    packages = dict(line.split(" ", 1) for line in lines if " " in line)
except OSError:
    packages = {}


def smi():
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=name,compute_cap,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as exc:  # noqa: BLE001
        return f"unavailable: {exc}"


def step_ok(step):
    if step["step"].startswith("verify"):  # 2 is verify's internal error; 124 a timeout
        return step["rc"] in (0, 1, 3, 4) and not step["timed_out"]
    return step["rc"] == 0


def gpu_seen(step):
    stages = (step.get("verify") or {}).get("stages", [])
    return any(stage["id"] == "cuda" and stage["status"] == "PASS" for stage in stages)


# a run that never reached a GPU checked nothing this script exists for
seen = any(gpu_seen(s) for s in steps if s["step"].startswith("verify"))
ok = seen and all(step_ok(s) for s in steps if s["rc"] != -1)
verdicts = {s["step"]: ((s.get("verify") or {}).get("summary") or {}).get("verdict")
            for s in steps if s["step"].startswith("verify")}
document = {"ok": ok, "gpu_seen": seen, "budget_s": int(budget), "elapsed_s": int(elapsed),
            "python": platform.python_version(), "nvidia_smi": smi(), "packages": packages,
            "verdicts": verdicts, "steps": steps}
with open(report_path, "w", encoding="utf-8") as fh:
    json.dump(document, fh, indent=2)
sys.exit(0 if ok else 1)
PYEOF
}

# record NAME RC SECONDS TIMED_OUT STDOUT_FILE STDERR_FILE NOTE: one JSON line, then the report.
record() {
    "$PY" - "$@" >>"$STEPS" <<'PYEOF'
import json, sys

name, rc, seconds, timed_out, out, err, note = sys.argv[1:8]


def read(path, limit=None):
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return None
    return text if limit is None else text[-limit:]


report = None
text = read(out) if out else None
if text:
    try:
        report = json.loads(text)
    except ValueError:
        report = None
print(json.dumps({"step": name, "rc": int(rc), "seconds": int(seconds), "timed_out": timed_out == "1",
                  "note": note or None, "verify": report,
                  "stdout_tail": None if report is not None or not out else read(out, 4000),
                  "stderr_tail": read(err, 4000) if err else None}))
PYEOF
    assemble >/dev/null 2>&1 || true
}

finish() {
    local rc=$?
    assemble
    local assembled=$?
    log "report: $OUT_DIR/gpu-check.json (ok: $([ "$assembled" -eq 0 ] && echo yes || echo no))"
    rm -rf "$WORK"
    if [ "$rc" -ne 0 ]; then exit "$rc"; fi
    exit "$assembled"
}
trap finish EXIT
trap 'log "interrupted"; exit 130' INT TERM

# --- 1. wheels ------------------------------------------------------------------------------------
have() { "$PY" -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('$1') else 1)" 2>/dev/null; }
WHEELS=""
for dir in ${KIMI_LSP_WHEELS:-} .whl shared/wheels; do
    if [ -d "$dir" ] && ls "$dir"/*.whl >/dev/null 2>&1; then WHEELS=$dir; break; fi
done
if have torch && have flashinfer; then
    record install 0 0 0 "" "" "torch and flashinfer already importable"
elif [ -n "$WHEELS" ]; then
    log "installing carried wheels from $WHEELS"
    t0=$(date +%s)
    timeout 120 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/kimi-lsp-site "$WHEELS"/*.whl >"$WORK/install.log" 2>&1
    rc=$?
    export PYTHONPATH="/tmp/kimi-lsp-site:$PYTHONPATH"
    record install "$rc" $(($(date +%s) - t0)) "$([ $rc -eq 124 ] && echo 1 || echo 0)" "" "$WORK/install.log" \
        "from $WHEELS"
else
    record install 0 0 0 "" "" "no carried wheels found; using what is installed"
fi
"$PY" - >"$WORK/environment.txt" 2>&1 <<'PYEOF'
import importlib.metadata as md

for name in ("torch", "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache", "nvidia-cutlass-dsl",
             "apache-tvm-ffi", "sglang", "pyyaml", "packaging", "pytest", "hypothesis"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "not installed")
PYEOF
log "$(tr '\n' ';' <"$WORK/environment.txt")"

# --- 2. kimi-lsp verify ---------------------------------------------------------------------------
run_verify() { # NAME MAX_SECONDS ARGS...
    local name=$1 max=$2
    shift 2
    local limit
    limit=$(($(left) - 25))
    [ "$limit" -gt "$max" ] && limit=$max
    if [ "$limit" -lt 20 ]; then
        record "$name" -1 0 0 "" "" "skipped: budget spent"
        log "$name: skipped (budget)"
        return
    fi
    log "$name: kimi-lsp verify --json $* (timeout ${limit}s)"
    local t0 rc
    t0=$(date +%s)
    timeout "$limit" "$PY" -m kimi_lsp.verify.cli --json --iters 30 "$@" \
        >"$WORK/$name.json" 2>"$WORK/$name.err"
    rc=$?
    record "$name" "$rc" $(($(date +%s) - t0)) "$([ $rc -eq 124 ] && echo 1 || echo 0)" \
        "$WORK/$name.json" "$WORK/$name.err" ""
    log "$name: exit $rc"
}

# Default shapes first (H=96, W=2, bf16): the one every architecture must answer.
run_verify verify-default 120
# If flashinfer would not even import under FLASHINFER_DISABLE_JIT / _NO_DOWNLOAD while its files
# have the DCP signature, ask again without them, to tell the offline policy from a broken install.
if "$PY" - "$WORK/verify-default.json" 2>/dev/null <<'PYEOF'
import json, sys
stages = {s["id"]: s["status"] for s in json.load(open(sys.argv[1]))["stages"]}
sys.exit(0 if stages.get("signature-static") == "PASS" and stages.get("signature-runtime") == "FAIL" else 1)
PYEOF
then
    run_verify verify-default-allow-network 60 --allow-network
fi
# The launch files' own shapes: TP8 x DCP8 with an FP8 KV cache; TP8 x DCP4 with DSPARK (q_len 4).
run_verify verify-dcp8-fp8 75 tests/verify/data/k3-dcp8-fp8.yaml
run_verify verify-dcp4-dspark 75 tests/verify/data/k3-dcp4-dspark.yaml

# --- 3. GPU tests ---------------------------------------------------------------------------------
limit=$(($(left) - 10))
[ "$limit" -gt 150 ] && limit=150
if [ "$limit" -ge 20 ]; then
    log "pytest -m gpu tests/verify (timeout ${limit}s)"
    t0=$(date +%s)
    timeout "$limit" "$PY" -m pytest tests/verify -m gpu -q -p no:cacheprovider -rs \
        >"$OUT_DIR/pytest-gpu.log" 2>&1
    rc=$?
    record pytest-gpu "$rc" $(($(date +%s) - t0)) "$([ $rc -eq 124 ] && echo 1 || echo 0)" \
        "$OUT_DIR/pytest-gpu.log" "" ""
    log "pytest-gpu: exit $rc"
else
    record pytest-gpu -1 0 0 "" "" "skipped: budget spent"
fi
