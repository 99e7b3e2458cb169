#!/usr/bin/env bash
# Every fixed kernel, compiled and run on a GPU: the golden fixes, the fix-all result, the fixed
# corpus and the fixed agreement fixtures. Run from the repository root:
#   bench/gpu_fixed_kernels.sh prepare     # here: builds gpu-run/ (untracked) with the fixed copies
#   bash gpu-run/run.sh                    # on the GPU machine (only python3 with jax needed)
# Results: docs/benchmarks.md ("On an NVIDIA H200").
#   bench/gpu_fixed_kernels.sh generated FIX.json [FIX.json ...]  # gpu-run/ with the kernels that each
#                                   # bench/fix_rate_generated.py --json FIX.json run fixed (its --out folder's
#                                   # after/), one folder gpu-run/generated-<FIX>/ each (families reuse names)
#   bash gpu-run/run_generated.sh   # on the GPU machine: compiled or interpreted there, one summary per folder
# Both modes also take the realistic corpus's fixed kernels and clean ones (tests/fixes/realistic/, judged by
# bench/fix_rate.py --judge here: gpu-run/realistic/, its list gpu-run/realistic-targets.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

prepare_judged() {  # SOURCE NAME: the fixed and clean kernels of a judged corpus in gpu-run/NAME/
  PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/fix_rate.py "$1" --judge \
    --keep "gpu-run/$2" --json "gpu-run/$2.json" > /dev/null 2> "gpu-run/$2-table.md"
  python3 - "$2" <<'PY'
import json, os, sys
name = sys.argv[1]
cases = json.load(open(f"gpu-run/{name}.json"))["judged"]["cases"]
run = [c["case"] for c in cases if c["outcome"] in ("fixed", "clean")]
targets = []
for case in run:  # a folder case: each of its files that defines a target
    path = f"gpu-run/{name}/{case}"
    files = [os.path.join(case, f) for f in sorted(os.listdir(path)) if f.endswith(".py")] if os.path.isdir(path) else [case]
    targets += [f for f in files if "def target" in open(f"gpu-run/{name}/{f}").read()]
open(f"gpu-run/{name}-targets.txt", "w").write("".join(f"{name}/{t}\n" for t in targets))
print(f"gpu-run/{name}/ ready: {len(run)} kernels (fixed or clean) of {len(cases)}, {len(targets)} files with a target")
PY
}

prepare_realistic() {
  prepare_judged tests/fixes/realistic realistic
  prepare_judged bench/apart_fixes apart_fixes
  prepare_judged bench/apart_fixes2 apart_fixes2
  prepare_judged bench/apart_fixes4 apart_fixes4
  prepare_judged bench/apart_fixes3 apart_fixes3
  prepare_judged bench/apart_fixes5 apart_fixes5
  prepare_judged bench/apart_fixes6 apart_fixes6
  prepare_judged bench/apart_fixes7 apart_fixes7
  prepare_judged bench/apart_fixes9 apart_fixes9
  prepare_judged bench/apart_fixes8 apart_fixes8
  prepare_judged bench/apart_fixes10 apart_fixes10
  prepare_judged bench/apart_fixes12 apart_fixes12
  prepare_judged bench/apart_fixes11 apart_fixes11
  prepare_judged bench/apart_fixes13 apart_fixes13
  prepare_judged bench/apart_fixes14 apart_fixes14
  prepare_judged bench/apart_fixes15 apart_fixes15
  prepare_judged bench/apart_fixes16 apart_fixes16
}

if [ "${1:-}" = generated ]; then
  rm -rf gpu-run && mkdir -p gpu-run/kernel_generator
  prepare_realistic
  cp tests/fixes/jax_lower.py gpu-run/
  shift
  python3 - "$@" <<'PY'
import glob, json, os, shutil, sys
for fix_json in sys.argv[1:]:
    run = json.load(open(fix_json))
    folder = f"gpu-run/generated-{os.path.splitext(os.path.basename(fix_json))[0]}"
    os.makedirs(folder)
    names = [k["name"] for k in run["kernels"] if k["outcome"] == "fixed"]
    for name in names:
        for path in glob.glob(f"{run['folder']}/after/{name}.py") + glob.glob(f"{run['folder']}/after/{name}_h.py"):
            shutil.copy(path, folder)
    open(f"{folder}/FILES.txt", "w").write("".join(f"{name}.py\n" for name in names))
    print(f"{folder}/ ready: {len(names)} fixed generated kernels ({run['family']} family, seed {run['seed']})")
PY
  cp tests/jax_truth.py gpu-run/ && cp tests/kernel_generator/oracle.py gpu-run/kernel_generator/
  cat > gpu-run/run_generated.sh <<'RUN'
#!/usr/bin/env bash
# The fixed generated kernels, compiled (JAX_TRUTH_COMPILE=1: .lower().compile() for cuda and triton) or
# run interpreted on the GPU, by the generator's oracle (tests/kernel_generator/oracle.py).
export JAX_TRUTH_COMPILE=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
python3 -c "import jax; print('jax', jax.__version__, jax.devices())"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for folder in "$(dirname "$0")"/generated-*/; do
  name=$(basename "$folder")
  (cd "$folder" && timeout 270 python3 ../kernel_generator/oracle.py --timeout 30 $(cat FILES.txt) \
    > "${OUT:-/tmp}/$name.jsonl" 2> "${OUT:-/tmp}/$name.err")
  python3 - "${OUT:-/tmp}/$name.jsonl" "$name" <<'PY'
import collections, json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"{sys.argv[2]}: {sum(r['ok'] for r in rows)} ok of {len(rows)} run;", dict(collections.Counter(r["mode"] for r in rows)))
for r in rows:
    if not r["ok"]:
        print(" ", r["path"], r["mode"], r["exc_type"], (r["message"] or "")[:160])
PY
done
# The realistic corpus's fixed and clean kernels, compiled and run (one process each: its cases share names).
cd "$(dirname "$0")"
while read -r f; do timeout 120 python3 jax_lower.py --execute "$f"; done < realistic-targets.txt \
  > "${OUT:-/tmp}/realistic.jsonl" 2> "${OUT:-/tmp}/realistic.err"
python3 - "${OUT:-/tmp}/realistic.jsonl" <<'PY'
import json, sys
rows = {k: v for line in open(sys.argv[1]) if line.strip() for k, v in json.loads(line).items()}
print(f"realistic: {sum(v['ok'] for v in rows.values())} ok of {len(rows)} run")
for path, v in rows.items():
    if not v["ok"]:
        print(" ", path, (v["error"] or "")[:160])
PY
RUN
  exit 0
fi
[ "${1:-}" = prepare ] || { echo "usage: $0 prepare | $0 generated FIX.json" >&2; exit 2; }
rm -rf gpu-run && mkdir -p gpu-run/golden gpu-run/fix_all
prepare_realistic
PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/fix_rate.py --no-lower --keep gpu-run/corpus > /dev/null
PYTHONPATH=$PWD/server .venvs/dev/bin/python bench/fix_rate.py tests/fixtures/agreement --unchecked --no-lower \
  --keep gpu-run/agreement > /dev/null
(cd gpu-run && diff -rq ../tests/fixtures/agreement agreement | grep -v "^Only in" | awk '{print $4}' \
  | xargs grep -l "def target" > agreement-changed-targets.txt) || true
for d in tests/fixes/golden/*/; do mkdir -p "gpu-run/golden/$(basename "$d")"; cp -r "$d"after* "gpu-run/golden/$(basename "$d")/" 2>/dev/null || true; done
cp tests/fixes/fix_all/after.py gpu-run/fix_all/after.py
cp tests/fixes/jax_lower.py gpu-run/
cat > gpu-run/run.sh <<'RUN'
#!/usr/bin/env bash
# Every fixed golden case, the fix-all result, every fixed corpus kernel and every fixed agreement
# fixture, compiled and run on the GPU (one process per file: two test folders share module names).
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/gpu-out}; export RES="$OUT/res"; mkdir -p "$RES"  # each file's result as it ends
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # several processes share the one GPU
python3 -c "import jax; print('jax', jax.__version__, jax.devices())" | tee "$OUT/env.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/env.txt"
{ ls golden/*/after.py golden/*/after/*.py 2>/dev/null | xargs grep -l "def target"; echo fix_all/after.py
  grep -rl "def target" corpus | sort; cat agreement-changed-targets.txt realistic-targets.txt apart_fixes*-targets.txt; } > "$OUT/files.txt"
wc -l < "$OUT/files.txt"
xargs -P "${JOBS:-14}" -I{} sh -c 'timeout 120 python3 jax_lower.py --execute --unchecked "{}" > "$RES/$(echo {} | tr / _).json" 2> "$RES/$(echo {} | tr / _).err"' < "$OUT/files.txt"
python3 - "$RES" "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, sys, pathlib
out = pathlib.Path(sys.argv[1]); ok = bad = 0; failures = {}; every = {}
for f in sorted(out.glob("*.json")):
    try:
        d = json.loads(f.read_text())
    except Exception as e:
        failures[f.stem] = f"no JSON: {(out/(f.stem+'.err')).read_text()[-400:]}"; bad += 1; continue
    every.update(d)
    for path, r in d.items():
        if r.get("ok"): ok += 1
        else: bad += 1; failures[path] = r.get("error")
print(f"{ok} ok of {ok + bad}")
print(json.dumps(failures, indent=1))
(pathlib.Path(sys.argv[2]) / "results.json").write_text(json.dumps(every, indent=1, sort_keys=True))
PY
RUN
echo "gpu-run/ ready: $(wc -l < gpu-run/agreement-changed-targets.txt) fixed agreement fixtures"
