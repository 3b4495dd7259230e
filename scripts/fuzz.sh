#!/usr/bin/env bash
# make fuzz: every reader of outside bytes (func FuzzX in a _test.go file) fuzzed for FUZZTIME, one after
# another. A target fails on a crasher (a new file under testdata/fuzz/FuzzX, "Failing input") or any other
# error — except Go's coordinator race at the end of a -fuzztime window (golang/go#75804: a bare
# "context deadline exceeded", no input written, seen here on a loaded 2-core machine), which is reported
# as a flake once the target's corpus replays cleanly. GO, FUZZTIME (default 60s) and FUZZFLAGS may be set.
set -uo pipefail
go=${GO:-go}
fuzztime=${FUZZTIME:-60s}
read -r -a flags <<<"${FUZZFLAGS:--parallel 1 -fuzzminimizetime 2s}"
failed=() flaked=()
for f in $(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do
  dir=$(dirname "$f")
  for t in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
    echo "== $t ($dir, $fuzztime)"
    corpus=$dir/testdata/fuzz/$t
    before=$(ls "$corpus" 2>/dev/null | wc -l)
    out=$("$go" test -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" "${flags[@]}" "./$dir" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 0 ] && continue
    after=$(ls "$corpus" 2>/dev/null | wc -l)
    if [ "$after" = "$before" ] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input' <<<"$out" &&
      "$go" test -count=1 -run "^$t\$" "./$dir" >/dev/null 2>&1; then
      echo "-- $t: the fuzzing coordinator's deadline race (golang/go#75804), no input written, the corpus replays cleanly"
      flaked+=("$t")
      continue
    fi
    failed+=("$t")
  done
done
echo "fuzz: ${#failed[@]} failed${failed[*]:+ (${failed[*]})}, ${#flaked[@]} deadline flakes${flaked[*]:+ (${flaked[*]})}"
[ ${#failed[@]} -eq 0 ]
