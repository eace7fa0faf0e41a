#!/usr/bin/env bash
# Regenerates the real lockfile fixtures under tests/pins_fixtures/ with the real tools.
#
# Run once by hand (needs the package index; tests never run this):
#     bash scripts/make_lock_fixtures.sh
#
# Tool versions used for the committed files (installed into a throwaway venv under /tmp):
#     uv 0.13.9, poetry 2.5.1 (poetry-core 2.5.0), pdm 2.29.4, pipenv 2026.10.3,
#     pip-tools 7.6.2, pip 26.3, hishel 1.4.0 (for pdm), CPython 3.11.7.
#
# Two kinds of fixture:
#  * uv.lock / uv-exported pylock.toml for REAL flashinfer-python and sglang releases, resolved
#    by uv against the default public index (uv reads only metadata, so this is cheap). The
#    index and file host names are then replaced by "https://pypi.example/simple" and
#    "https://files.pypi.example/packages/" placeholders (project rule: no registry host names
#    in committed files); everything else is byte-for-byte what uv wrote.
#  * poetry.lock, pdm.lock, Pipfile.lock, pip-compile output, pip's pylock.toml and the uv
#    fork/workspace cases against a tiny LOCAL index of stub wheels built below and served on
#    http://127.0.0.1:8765/simple. Resolving real flashinfer-python with those tools downloads
#    torch (GBs) from an index without PEP 658 metadata; the stubs keep the real lockfile
#    formats while making each run take seconds.
#  * conda-lock.yml is HAND-WRITTEN from conda-lock's documented format (docs/output.md and its
#    tests/test-install-with-pip-deps/conda-lock.yml): conda-lock needs a conda/mamba/micromamba
#    executable to solve, which cannot be installed on this machine.
#
# The manifests committed beside each lock are the inputs; this script copies them into a
# scratch directory, runs the tool there (so no .venv or cache lands in the repo) and copies
# the lockfile back.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
FIX="$REPO/tests/pins_fixtures"
SCRATCH=${SCRATCH:-/tmp/kimi-lockgen}
TOOLS=${TOOLS:-/tmp/kimi-locktools}
PORT=8765
LOCAL_INDEX="http://127.0.0.1:$PORT/simple"
# Real-index resolutions see the index as of this date, so a re-run writes the same locks.
EXCLUDE_NEWER=2026-11-29T00:00:00Z

rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"

# The machine's pip.conf adds local find-links, extra indexes and constraints; the fixtures
# must see only the index each case names.
export PIP_CONFIG_FILE=/dev/null
unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL PIP_INDEX_URL PIP_CONSTRAINT UV_INDEX_URL UV_EXTRA_INDEX_URL UV_FIND_LINKS
export UV_CACHE_DIR="$SCRATCH/cache/uv" PDM_CACHE_DIR="$SCRATCH/cache/pdm" PDM_CHECK_UPDATE=false
export POETRY_CACHE_DIR="$SCRATCH/cache/poetry" POETRY_VIRTUALENVS_PATH="$SCRATCH/venvs"
export WORKON_HOME="$SCRATCH/venvs" PIPENV_IGNORE_VIRTUALENVS=1 PIPENV_YES=1 PIPENV_NOSPIN=1
export PIPENV_CACHE_DIR="$SCRATCH/cache/pipenv" XDG_CACHE_HOME="$SCRATCH/cache"

if [ ! -x "$TOOLS/bin/uv" ]; then
    python3 -m venv "$TOOLS"
    "$TOOLS/bin/pip" install -q pip==26.3
    "$TOOLS/bin/pip" install -q uv==0.13.9 poetry==2.5.1 pdm==2.29.4 pipenv==2026.10.3 pip-tools==7.6.2
    # pdm 2.29.4 fails with hishel 2 ("module 'hishel' has no attribute 'SyncSqliteStorage'").
    "$TOOLS/bin/pip" install -q 'hishel[httpx2]>=1.4,<2'
fi
T="$TOOLS/bin"
"$T/uv" --version; "$T/poetry" --version; "$T/pdm" --version; "$T/pipenv" --version
"$T/pip-compile" --version; "$T/pip" --version

# ---------------------------------------------------------------------------------------
# Local index of stub wheels. Zip entries carry a fixed timestamp so the wheels, and so the
# sha256 hashes recorded in the locks, are the same on every run.
"$T/python" - "$SCRATCH/index" <<'PY'
import base64, hashlib, html, pathlib, sys, zipfile

root = pathlib.Path(sys.argv[1])
files = root / "files"
files.mkdir(parents=True)

def wheel(name, version, requires=(), extras=()):
    dist = name.replace("-", "_")
    fname = f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    meta = [
        "Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
        "Summary: stub wheel for kimi-lsp lockfile fixtures", "Requires-Python: >=3.10",
    ]
    meta += [f"Provides-Extra: {e}" for e in extras]
    meta += [f"Requires-Dist: {r}" for r in requires]
    entries = {
        f"{dist}/__init__.py": f'__version__ = "{version}"\n',
        f"{info}/METADATA": "\n".join(meta) + "\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: kimi-lsp-stub\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, body in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(body.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(body.encode())}")
    record.append(f"{info}/RECORD,,")
    entries[f"{info}/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(files / fname, "w") as zf:
        for path, body in entries.items():
            zi = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zf.writestr(zi, body)
    return name, fname

made = []
for v in ("0.6.10", "0.6.16.post4", "0.6.17", "0.7.2"):
    made.append(wheel("flashinfer-python", v, extras=("cu13",)))
    made.append(wheel("flashinfer-cubin", v))
made.append(wheel("sglang", "0.5.23", requires=("flashinfer_python[cu13]==0.7.2",)))

simple = root / "simple"
by_name = {}
for name, fname in made:
    by_name.setdefault(name, []).append(fname)
links = []
for name, fnames in sorted(by_name.items()):
    d = simple / name
    d.mkdir(parents=True)
    rows = []
    for f in fnames:
        h = hashlib.sha256((files / f).read_bytes()).hexdigest()
        rows.append(f'<a href="../../files/{f}#sha256={h}" data-requires-python="{html.escape(">=3.10")}">{f}</a><br/>')
    (d / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(rows) + "\n</body></html>\n")
    links.append(f'<a href="{name}/">{name}</a><br/>')
(simple / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")
PY

"$T/python" -m http.server "$PORT" --bind 127.0.0.1 --directory "$SCRATCH/index" >"$SCRATCH/http.log" 2>&1 &
HTTP_PID=$!
trap 'kill "$HTTP_PID" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
    curl -fs "$LOCAL_INDEX/" >/dev/null 2>&1 && break
    sleep 0.1
done

# stage CASE FILE... : copy the committed inputs of tests/pins_fixtures/CASE to scratch and cd there.
stage() {
    local case=$1; shift
    rm -rf "${SCRATCH:?}/work/$case"
    mkdir -p "$SCRATCH/work/$case"
    (cd "$FIX/$case" && cp --parents "$@" "$SCRATCH/work/$case/")
    cd "$SCRATCH/work/$case"
}
# keep CASE FILE... : copy generated files back into the fixture.
keep() {
    local case=$1; shift
    cp --parents "$@" "$FIX/$case/"
}
# Public index/file hosts -> placeholders (see the header). Matches any https host, so the
# script itself names none.
placeholders() {
    sed -i -E \
        -e 's#https://[A-Za-z0-9.-]+/simple#https://pypi.example/simple#g' \
        -e 's#https://[A-Za-z0-9.-]+/packages/#https://files.pypi.example/packages/#g' "$@"
}

# ---------------------------------------------------------------------------------------
# uv.lock against the real index.
for case in uv-lock/pinned-old uv-lock/ok uv-lock/sglang-only uv-lock/sglang-old uv-lock/sglang-override; do
    stage "$case" pyproject.toml
    "$T/uv" lock --no-progress --exclude-newer "$EXCLUDE_NEWER"
    placeholders uv.lock
    keep "$case" uv.lock
done

# A range that a lock made earlier keeps on an old version: lock with ==0.6.10 first, then
# widen the manifest to the committed range; uv keeps the locked 0.6.10 since it satisfies it.
stage uv-lock/range-old pyproject.toml
sed -i 's/flashinfer-python\[cu13\]>=0.6.10,<0.7/flashinfer-python[cu13]==0.6.10/' pyproject.toml
"$T/uv" lock --no-progress --exclude-newer "$EXCLUDE_NEWER"
cp "$FIX/uv-lock/range-old/pyproject.toml" pyproject.toml
"$T/uv" lock --no-progress --exclude-newer "$EXCLUDE_NEWER"
placeholders uv.lock
keep uv-lock/range-old uv.lock

# uv forks the resolution on a marker split: two [[package]] entries for flashinfer-python.
stage uv-lock/fork pyproject.toml
"$T/uv" lock --no-progress
keep uv-lock/fork uv.lock

# uv workspace: `uv lock` inside the member writes the lock at the workspace root.
stage uv-lock/workspace pyproject.toml packages/serve/pyproject.toml
(cd packages/serve && "$T/uv" lock --no-progress)
keep uv-lock/workspace uv.lock

# ---------------------------------------------------------------------------------------
# pylock.toml, inline wheel tables (uv export) from a real-index lock ...
stage pylock/uv-export pyproject.toml
"$T/uv" lock --no-progress --exclude-newer "$EXCLUDE_NEWER"
"$T/uv" export --no-progress --format pylock.toml -o pylock.toml >/dev/null
placeholders pylock.toml
keep pylock/uv-export pylock.toml
# ... and [[packages.wheels]] sub-tables (pip lock, experimental in pip 26.3).
stage pylock/pip-lock requirements.in
"$T/pip" lock --index-url "$LOCAL_INDEX" -r requirements.in -o pylock.toml
keep pylock/pip-lock pylock.toml

# ---------------------------------------------------------------------------------------
stage poetry-lock/pinned-old pyproject.toml
"$T/poetry" lock --no-interaction
keep poetry-lock/pinned-old poetry.lock

stage poetry-lock/sglang pyproject.toml
"$T/poetry" lock --no-interaction
keep poetry-lock/sglang poetry.lock

stage pdm-lock/range-old pyproject.toml
"$T/pdm" lock
keep pdm-lock/range-old pdm.lock

stage pipfile-lock/pinned Pipfile
"$T/pipenv" lock
keep pipfile-lock/pinned Pipfile.lock

stage pip-compile/hashed requirements.in constraints.txt
"$T/pip-compile" --quiet --generate-hashes --no-strip-extras --index-url "$LOCAL_INDEX" \
    requirements.in -o requirements.txt
keep pip-compile/hashed requirements.txt

echo "fixtures regenerated under $FIX"
