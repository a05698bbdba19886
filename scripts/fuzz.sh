#!/usr/bin/env bash
# fuzz.sh — builds the libFuzzer targets of fuzz/ with clang (AddressSanitizer +
# UndefinedBehaviorSanitizer) and runs each for a bounded time over its seed corpus:
#   fuzz_load_checkpoint    io::decode (binary and JSON checkpoints)
#   fuzz_load_safetensors   io::decode_safetensors (and the JSON parser of io/json.hpp)
#   fuzz_load_hf_config     io::HfConfig and the GPT-2/LLaMA config.json readers (io/hf_*.hpp)
#   fuzz_load_gpt2_vocab    GPT-2's vocab.json (data::Gpt2Tokenizer::from_strings)
#   fuzz_load_gpt2_merges   GPT-2's merges.txt, with tests/reference/gpt2_bpe/vocab.json
#   fuzz_load_tokenizer     the tokenizer files of data/ (load_tokenizer: char, bpe, gpt2)
#
#   bash scripts/fuzz.sh                 30 s per target, as many targets at a time as cores
#   FUZZ_SECONDS=600 bash scripts/fuzz.sh
#   bash scripts/fuzz.sh --build-only
#
# Seeds: tests/io/corpus/seeds/<kind>/ plus the regression inputs of tests/io/corpus/<kind>/.
# The growing corpus stays in $build/corpus/<target>/ between runs. A crash, a sanitizer
# report, a timeout (-timeout) or an allocation over -malloc_limit_mb writes the input to
# $build/crashes/<target>/ and makes this script exit 1: copy the file into
# tests/io/corpus/<kind>/ (the test "bad files: the corpus of fuzzer findings" then loads it
# and expects a FormatError) and fix the loader. Needs clang 16+ with libFuzzer (Debian 12:
# clang-16 libclang-rt-16-dev) and GCC's libgomp. Everything is built in $build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh

seconds=${FUZZ_SECONDS:-30}
build=${TAPEGRAD_FUZZ_BUILD_DIR:-build-fuzz}
build_only=0
for arg in "$@"; do
  case $arg in
    --build-only) build_only=1 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
# The newest clang found, or $FUZZ_CXX. The library needs clang 16 or later (clang 14 and 15
# cannot capture structured bindings in lambdas, a C++20 feature GCC has).
cxx=${FUZZ_CXX:-}
if [[ -z $cxx ]]; then
  for candidate in clang++-19 clang++-18 clang++-17 clang++-16 clang++; do
    if command -v "$candidate" > /dev/null; then cxx=$candidate; break; fi
  done
fi
if [[ -z $cxx ]]; then
  echo "fuzz.sh: clang++ not found; on Debian 12 install it with:" >&2
  echo "  apt-get install -y clang-16 libclang-rt-16-dev" >&2
  exit 2
fi

rm -rf "$build/obj"  # no stale objects of deleted sources
mkdir -p "$build/include" "$build/obj"
# Debian's rapidjson 1.1.0 (under cereal's JSON archives) computes nullptr + n in its stack
# before the first allocation: harmless, fixed upstream after 1.1.0, not flagged by GCC's
# UBSan, but clang's UBSan reports it on every JSON file. Ignore it there only.
printf '[undefined]\nsrc:*/rapidjson/*\n' > "$build/ubsan_ignorelist.txt"
flags=(-std=c++20 -gline-tables-only -O1 -Wno-unknown-pragmas -fno-omit-frame-pointer
       -fsanitize=address -fsanitize=undefined -fno-sanitize-recover=undefined
       "-fsanitize-ignorelist=$(cd "$build" && pwd)/ubsan_ignorelist.txt")

# The library's sources, compiled directly rather than through CMake: instrumented for
# coverage (fuzzer-no-link) and, on purpose, without -fopenmp (clang cannot yet compile
# OpenMP regions that capture structured bindings, and a fuzzer runs one thread anyway).
# The omp_* calls still need omp.h and a runtime: GCC's libgomp, which build-essential
# brings, so that no clang OpenMP package is needed (Debian's libomp-16-dev conflicts with
# the libomp-dev of clang 14 that many machines have). GCC's own omp.h uses attributes clang
# refuses, so the seven functions the library calls are declared here, as libgomp exports them.
ln -sfn "$PWD" "$build/include/tapegrad"  # <tapegrad/...> as in the CMake build
mkdir -p "$build/omp"
cat > "$build/omp/omp.h" << 'OMP'
#pragma once
extern "C" {
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
int omp_in_parallel(void);
int omp_get_active_level(void);
int omp_get_max_active_levels(void);
void omp_set_num_threads(int);
}
OMP
# autograd/build_info.cpp includes the header that CMake generates at build time.
cmake -DSOURCE_DIR="$PWD" -DOUTPUT="$build/generated/tapegrad_build_id.h" -DVERSION=fuzz "-DCOMPILER=$cxx" \
  -DBUILD_TYPE=fuzz "-DOPTIONS=ASan UBSan libFuzzer" -P cmake/build_id.cmake
# The loaders live in io/ and data/; they and the layers below them (nn/, autograd/) are all a
# target can call, since layers only look down. optim/ and training/ sit beside or above them:
# 20 sources a target would never link, left out.
mapfile -t sources < <(find autograd nn data io -name '*.cpp' 2> /dev/null | sort)
echo "=== fuzz.sh: compiling ${#sources[@]} library sources with $cxx"
export cxx build
# shellcheck disable=SC2016  # expanded by the inner shell
printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  'src=$1; shift; "$cxx" "$@" -c "$src" -o "$build/obj/$(echo "$src" | tr / _).o"' _ {} \
  "${flags[@]}" -fsanitize=fuzzer-no-link -I"$build/include" -I"$build/generated" -isystem "$build/omp" 2> "$build/compile.log" || {
  grep -E "error" -A3 "$build/compile.log" >&2
  exit 1
}
rm -f "$build/libtapegrad_fuzz.a"
ar rcs "$build/libtapegrad_fuzz.a" "$build"/obj/*.o

# kind of input each target reads (the corpus folders are named after it)
declare -A kinds=([fuzz_load_checkpoint]=checkpoint [fuzz_load_safetensors]=safetensors [fuzz_load_hf_config]=hf_config)
kinds+=([fuzz_load_gpt2_vocab]=gpt2_vocab [fuzz_load_gpt2_merges]=gpt2_merges [fuzz_load_tokenizer]=tokenizer)
kinds+=([fuzz_load_depth_study_record]=depth_study_record)
# The depth study's records reader lives with the study (examples/studies/depth_study): its
# target compiles those two files of it beside the library.
declare -A extra=([fuzz_load_depth_study_record]="examples/studies/depth_study/records.cpp examples/studies/depth_study/variants.cpp")
for target in "${!kinds[@]}"; do
  echo "=== fuzz.sh: linking $target"
  # shellcheck disable=SC2046,SC2086  # pkg-config prints several words on purpose; the extra sources are a list
  "$cxx" "${flags[@]}" -fsanitize=fuzzer -I"$build/include" -Iexamples -Iexamples/studies -isystem "$build/omp" \
    "fuzz/$target.cpp" ${extra[$target]:-} "$build/libtapegrad_fuzz.a" $(pkg-config --libs openblas libpcre2-8) -lgomp \
    -o "$build/$target"
done
[[ $build_only -eq 1 ]] && exit 0

# Readable stack traces in reports (clang-16 looks for its own symbolizer, which Debian's
# clang-16 package does not ship).
if [[ -z ${ASAN_SYMBOLIZER_PATH:-} ]] && command -v llvm-symbolizer > /dev/null; then
  export ASAN_SYMBOLIZER_PATH
  ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer)
fi
# The targets run side by side, as many at a time as there are cores (a fuzzer is one process
# on one thread), each for the full $seconds: on 2 cores the six take 3 x $seconds, not 6 x.
# Each writes its log to $build/logs/<target>.log; its last lines are printed when it ends,
# the whole log when it failed.
fuzz_one() {
  local target=$1 kind=${kinds[$1]}
  local corpus="$build/corpus/$target" crashes="$build/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  [[ $kind == safetensors ]] && cp tests/reference/torch_model.safetensors "$corpus/"
  [[ $kind == safetensors ]] && cp tests/reference/hf_gpt2_tiny/model.safetensors "$corpus/hf_gpt2.safetensors"
  # -malloc_limit_mb: any single allocation above it is a finding (inputs are at most
  # -max_len bytes, so a loader that allocates hundreds of MiB believed a size it should not).
  "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$crashes/" \
    "$corpus" "tests/io/corpus/seeds/$kind" "tests/io/corpus/$kind" > "$build/logs/$target.log" 2>&1
}
# report TARGET STATUS: what the fuzzer said, short when it passed.
report() {
  if [[ $2 -eq 0 ]]; then
    echo "=== fuzz.sh: $1 passed ($build/logs/$1.log):"
    grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" "$build/logs/$1.log" | sed 's/^/    /'
  else
    echo "=== fuzz.sh: $1 FAILED (exit status $2), its log:"
    cat "$build/logs/$1.log"
  fi
}
mkdir -p "$build/logs"
failed=()
targets=(fuzz_load_checkpoint fuzz_load_safetensors fuzz_load_hf_config
         fuzz_load_gpt2_vocab fuzz_load_gpt2_merges fuzz_load_tokenizer fuzz_load_depth_study_record)
jobs=$(nproc)
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}")
  echo "=== fuzz.sh: ${batch[*]} for $seconds s"
  pids=()
  for target in "${batch[@]}"; do
    fuzz_one "$target" &
    pids+=($!)
  done
  for j in "${!batch[@]}"; do
    status=0
    wait "${pids[j]}" || status=$?
    report "${batch[j]}" "$status"
    [[ $status -eq 0 ]] || failed+=("${batch[j]}")
  done
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "=== fuzz.sh: FAILED: ${failed[*]} (inputs in $build/crashes/)" >&2
  exit 1
fi
echo "=== fuzz.sh: passed, no findings"
