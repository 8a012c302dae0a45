#!/usr/bin/env bash
# Runs dlrt's fuzz harnesses (fuzz/*.cpp):
#   scripts/run_fuzz.sh BUILD_FUZZ SECONDS [HARNESS...]   (make fuzz)
#     the libFuzzer executables of a DLRT_FUZZ=ON folder (clang, ASan, UBSan),
#     each harness for SECONDS;
#   scripts/run_fuzz.sh BUILD smoke [HARNESS...]          (make test)
#     dlrt_fuzz_smoke of an ordinary build (cmake/fuzz.cmake: the harnesses on
#     that build's objects, no sanitizer, no coverage): the seeds once, then a
#     fixed number of seeded random mutations of them; the same inputs every
#     run, a few seconds per harness.
# Default harnesses: model npy tokenizer config request folder ops http image. First each harness runs its
# regression inputs (fuzz/regressions/<harness>/: inputs that once crashed
# it), then fuzzes, starting from seeds the script gathers from
# the test models, ONNX's conformance data, the tests' tokenizer files and
# fuzz/seeds/<harness>/ (hostile regexes, model-folder configs, JSON bodies),
# and, with SECONDS, from BUILD_FUZZ/corpus/<harness> (which it keeps and grows). A crash,
# leak (libFuzzer), timeout (10 s per input) or out-of-memory (2 GiB; 4 GiB of
# address space in the smoke run) is written to crashes/<harness>/ there (BUILD_FUZZ, BUILD/fuzz-smoke) and
# makes the exit status 1. Prints one line per harness: libFuzzer's last
# statistics line, or the smoke driver's counts.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_FUZZ SECONDS [HARNESS...] | $0 BUILD smoke [HARNESS...]" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
SECONDS_EACH=$2
shift 2
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(model npy tokenizer config request folder ops http image)
# Seeds, corpora, crashes and logs: in BUILD_FUZZ, or BUILD/fuzz-smoke for the smoke run.
WORK=$BUILD
[ "$SECONDS_EACH" = smoke ] && WORK=$BUILD/fuzz-smoke
mkdir -p "$WORK"
TESTDATA=${DLRT_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
TEST_MODELS=${DLRT_TEST_MODELS:-$ROOT/build/test_models}

seeds_for() {  # harness -> folder of seed inputs
  local h=$1 dir="$WORK/seeds/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  case "$h" in
    model)
      find "$TEST_MODELS" -name '*.onnx' -size -256k -exec cp -t "$dir" --backup=numbered {} + 2>/dev/null
      # One small model per ONNX conformance case (node/<case>/model.onnx), of
      # Debian's ONNX 1.12 data and, when scripts/conformance_onnx.sh made them,
      # of the release dlrt's model layer is built from (opsets up to 28).
      local n=0
      for f in "$TESTDATA"/node/*/model.onnx "$ROOT"/build/onnx-testdata-*/node/*/model.onnx; do
        [ -f "$f" ] || continue
        cp "$f" "$dir/$(basename "$(dirname "$(dirname "$(dirname "$f")")")")_$(basename "$(dirname "$f")").onnx"
        n=$((n + 1))
      done ;;
    npy)
      find "$TEST_MODELS" -name '*.npy' -size -64k -exec cp -t "$dir" --backup=numbered {} + 2>/dev/null ;;
    tokenizer)
      cp "$ROOT/tests/embed/data/bert_uncased_tokenizer.template.json" "$dir/" 2>/dev/null
      find "$ROOT/tests/embed/data" -name 'tokenizer.json' -exec cp -t "$dir" --backup=numbered {} + 2>/dev/null ;;
    config)
      printf 'device = "cpu"\nthreads = 2\n' > "$dir/basic.toml"
      printf 'device = "npu,cpu"\nstrict = true\ncpu_precision = "bf16x3"\ncache_dir = "/tmp/x"\n[serve]\nport = 8080\n' > "$dir/full.toml" ;;
    request)
      printf '{"input": "a cat", "encoding_format": "base64", "dimensions": 4}' > "$dir/openai.json"
      printf '{"input": [[101, 2023, 102], [7]], "model": "m", "user": "u"}' > "$dir/ids.json"
      printf '{"inputs": ["a", "b"], "normalize": false, "truncate": true, "prompt_name": "query"}' > "$dir/tei.json"
      printf '{"inputs": "x", "add_special_tokens": false, "truncation_direction": "right"}' > "$dir/tokenize.json" ;;
    image)
      # The test set's images and bad files (tests/image/make_image_set.py), the small ones.
      find "$ROOT/tests/image/data" -maxdepth 2 -type f ! -name '*.npy' ! -name '*.json' -size -64k \
        -exec cp -t "$dir" --backup=numbered {} + 2>/dev/null ;;
    http)
      printf 'POST /embed HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET /health HTTP/1.1\r\nHost: a\r\n\r\n' > "$dir/pipelined"
      printf 'POST /embed HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\nT: v\r\n\r\n' > "$dir/chunked"
      printf 'GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n' > "$dir/http10" ;;
  esac
  if [ -d "$ROOT/fuzz/seeds/$h" ]; then cp "$ROOT/fuzz/seeds/$h"/* "$dir/" 2>/dev/null; fi
  echo "$dir"
}

# One harness: its regression inputs, then the fuzzing; prints one line, exit 1 on a failure.
run_harness() {
  local h=$1 rc=0 bin
  if [ "$SECONDS_EACH" = smoke ]; then
    bin=("$BUILD/dlrt_fuzz_smoke" "$h")
    if [ ! -x "${bin[0]}" ]; then
      echo "run_fuzz: ${bin[0]} is missing (build dlrt_fuzz_smoke in $BUILD: make build)" >&2
      return 1
    fi
  else
    bin=("$BUILD/fuzz_$h")
    if [ ! -x "${bin[0]}" ]; then
      echo "run_fuzz: ${bin[0]} is missing (configure $BUILD with -DDLRT_FUZZ=ON and clang, build fuzz_$h)" >&2
      return 1
    fi
  fi
  corpus="$WORK/corpus/$h"
  crashes="$WORK/crashes/$h"
  mkdir -p "$corpus" "$crashes"
  regressions=("$ROOT"/fuzz/regressions/"$h"/*)
  if [ -e "${regressions[0]}" ]; then
    if [ "$SECONDS_EACH" = smoke ]; then limit=-memory_mb=4096; else limit=-rss_limit_mb=2048; fi
    if ! "${bin[@]}" "$limit" -timeout=10 "${regressions[@]}" > "$WORK/fuzz_$h.regressions.log" 2>&1; then
      echo "fuzz $h: a regression input fails again (see $WORK/fuzz_$h.regressions.log)"
      rc=1
    fi
  fi
  seeds=$(seeds_for "$h")
  log="$WORK/fuzz_$h.log"
  if [ "$SECONDS_EACH" = smoke ]; then
    # A fixed number of mutations from a fixed random seed: the same inputs every run,
    # about 1-8 s per harness. (ops builds, loads and runs a model per input, image decodes
    # and resizes one: fewer runs.)
    case "$h" in ops | image) runs=100000 ;; *) runs=300000 ;; esac
    "${bin[@]}" -seed=1 -runs=$runs -timeout=10 -memory_mb=4096 -max_len=262144 \
      -artifact_prefix="$crashes/" "$seeds" > "$log" 2>&1
  else
    "${bin[@]}" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
      -artifact_prefix="$crashes/" "$corpus" "$seeds" > "$log" 2>&1
  fi
  status=$?
  stats=$(grep -E '^#[0-9]+' "$log" | tail -1)
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  if [ $status -ne 0 ]; then
    echo "fuzz $h: FAILED ($(grep -m1 -E 'ERROR|SUMMARY|CRASH|TIMEOUT|usage' "$log")); input in $crashes, log $log"
    rc=1
  elif [ "$SECONDS_EACH" = smoke ]; then
    echo "fuzz $h: ok (smoke) $(grep -m1 '^dlrt_fuzz_smoke' "$log" | cut -d: -f2-)"
  else
    echo "fuzz $h: ok ($SECONDS_EACH), ${execs:-?} executions; last: $stats"
  fi
  return $rc
}

# Each harness is one process on one core: up to FUZZ_JOBS (default JOBS, else
# the number of cores) run at once, their lines printed in the harnesses' order.
PARALLEL=${FUZZ_JOBS:-${JOBS:-$(nproc)}}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pids=()
rc=0
for i in "${!HARNESSES[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n; done
  run_harness "${HARNESSES[$i]}" > "$out/$i" 2>&1 &
  pids[$i]=$!
done
for i in "${!HARNESSES[@]}"; do
  wait "${pids[$i]}" || rc=1
  cat "$out/$i"
done
exit $rc
