#!/usr/bin/env bash
# gpubundle/check.sh: 'make gpu-bundle-check', the GPU bundle checked on a machine without a GPU.
#   1. the host-shim bundle (make gpu-bundle SHIM=1) runs 'run.sh --quick --snapshot 1 --pack DIR' end
#      to end within 5 minutes, exit 0, report.md and report.json list all four steps with their
#      status, every model has its snapshot, PNG and cells, the speed step ran its two interleaved
#      rounds (one log per run) and reports each row's median, holdgo/PyTorch against 1.0× and both
#      profiled steps, the tile table (bench conv --tiles), and --pack wrote seven
#      .tgz files (and a --pack inside OUTDIR is refused with exit 2); then
#      a second 'run.sh OUT' on its output exits 2 and changes nothing; bad --skip, --rounds and
#      --skip images with --minutes exit 2; 'run.sh OUT --skip correctness,images --rounds 1' on that
#      output exits 0, records images as skipped, leaves models/ as it was and appends to the speed
#      logs;
#      'run.sh --quick --skip correctness,speed' exits 0 with those two steps recorded as skipped,
#      'run.sh --fresh' on its output trains anew and keeps a user's file in models/, and
#      'run.sh --continue' on that resumes the three runs to step 4;
#   2. where nvcc is installed and nvidia-smi is not: the real bundle (make gpu-bundle) is at most
#      24 MiB, has no link-time libcublas, and its 'run.sh OUT' exits 2 within 10 s, saying why in
#      OUT/report.md.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
fail() { echo "gpu-bundle-check: $*" >&2; exit 1; }

GO=$GO gpubundle/build.sh bin/gpu-bundle-shim 1
out=bin/gpu-bundle-check/quick
rm -rf "$out"
t0=$(date +%s)
rc=0
pack=bin/gpu-bundle-check/pack
rm -rf "$pack"
timeout 300 bin/gpu-bundle-shim/run.sh "$out" --quick --snapshot 1 --pack "$pack" || rc=$?
dt=$(($(date +%s) - t0))
echo "gpu-bundle-check: shim run.sh --quick --snapshot 1: exit $rc in $dt s"
[ $rc = 0 ] || fail "shim run.sh --quick --snapshot 1 exited $rc (report: $out/report.md)"
for step in preflight correctness speed images; do
	grep -q "^| $step | pass |" "$out/report.md" || fail "report.md has no passing $step step"
	grep -q "\"name\": \"$step\", \"status\": \"pass\"" "$out/report.json" || fail "report.json has no passing $step step"
done
for m in hold cld vp; do
	native=lt
	[ $m = vp ] && native=em
	for f in $m.png $m-asde2-nfe4.npy $m-$native-nfe4.npy $m-axdpm3-nfe4.npy $m-step1-asde2-nfe4.npy $m-ema/config.yaml $m-step1-ema/config.yaml; do
		[ -s "$out/models/$f" ] || fail "$out/models/$f missing"
	done
	grep -q '^2,' "$out/models/$m/log.csv" || fail "$m did not resume to step 2 after its snapshot ($out/models/$m/log.csv)"
done
if command -v python3 >/dev/null; then python3 -m json.tool "$out/report.json" >/dev/null || fail "report.json is not JSON"; fi
# the speed step: two interleaved rounds, one log per run, medians, ratios and the profiled steps
for r in 1 2; do
	for f in holdgo-tf32 holdgo-bf16 holdgo-strict pytorch; do
		[ -s "$out/logs/speed-ncsnpp-tiny-round$r-$f.log" ] || fail "no log of round $r's $f run"
	done
done
speed_report() { # speed_report DIR ROUNDS: the speed figures report.md must have after ROUNDS rounds
	local want
	for want in "^- rounds: $2 of $2, " "^- ncsnpp-tiny batch 1 holdgo tf32: median [0-9.]* images/s, min-max .* over $2 of $2 rounds" \
		"^- ncsnpp-tiny batch 1 pytorch tf32-cl: median [0-9.]* images/s" \
		"^- ncsnpp-tiny batch 1 medians (images/s): holdgo tf32 [0-9.]*, bf16 [0-9.]*, strict [0-9.]*; pytorch tf32 [0-9.]*, tf32-cl [0-9.]*, bf16-cl [0-9.]*, fp32 [0-9.]*$" \
		"^- ncsnpp-tiny batch 1 tf32 holdgo/pytorch: [0-9.]*× from the medians, .*: \(pass\|fail\)" \
		"^- ncsnpp-tiny batch 1 bf16 holdgo/pytorch: [0-9.]*× from the medians, holdgo bf16 against pytorch bf16-cl" \
		"^- ncsnpp-tiny batch 1 strict holdgo/pytorch: [0-9.]*× from the medians, holdgo strict against pytorch fp32" \
		"^- ncsnpp-tiny batch 1 tf32 profiled step, holdgo: [0-9.]* ms of device time" \
		"^- ncsnpp-tiny batch 1 tf32 profiled step, pytorch: mode tf32\(-cl\)\?, [0-9.]* ms of CPU time"; do
		grep -q "$want" "$1/report.md" || fail "$1/report.md has no line matching '$want'"
	done
}
speed_report "$out" 2
# bench conv --tiles wrote the tile table of this device and build (the shim's here)
grep -q '"gpu": "shim"' "$out/logs/convtiles.json" || fail "no tile table in $out/logs/convtiles.json"
grep -q "^- bench conv --tiles (logs/convtiles.json): .*with the shape rule" "$out/report.md" || fail "report.md has no tile table line"
grep -q '^torch.profiler: the top 25 operators' "$out/logs/speed-profile-pytorch.log" || fail "no torch.profiler table in logs/speed-profile-pytorch.log"
[ "$(ls "$pack" | wc -l)" = 7 ] || fail "--pack wrote $(ls "$pack" | tr '\n' ' '), want report.tgz and models-, cells-SDE.tgz"
rc=0
bin/gpu-bundle-shim/run.sh "$out" --quick --pack "$out/logs/p" 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "run.sh --pack inside OUTDIR exited $rc, want 2"
[ ! -e "$out/logs/p" ] || fail "run.sh --pack inside OUTDIR created $out/logs/p before refusing"
# A second run on the same OUTDIR without --continue or --fresh is refused before anything changes.
before=$(cd "$out" && find models -type f | sort | xargs sha256sum)
rc=0
bin/gpu-bundle-shim/run.sh "$out" --quick 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "a second run.sh on $out without --continue or --fresh exited $rc, want 2"
[ "$(cd "$out" && find models -type f | sort | xargs sha256sum)" = "$before" ] || fail "the refused second run changed $out/models"
has() { # has ARCHIVE PATH: whether the .tgz lists PATH (the listing read whole: no SIGPIPE under pipefail)
	local list
	list=$(tar tzf "$1") && grep -qx "$2" <<<"$list"
}
has "$pack/report.tgz" report.md || fail "$pack/report.tgz has no report.md"
has "$pack/models-hold.tgz" models/hold-step1-ema/ckpt.safetensors || fail "$pack/models-hold.tgz has no snapshot export"
has "$pack/cells-vp.tgz" models/vp-em-nfe4.npy || fail "$pack/cells-vp.tgz has no native cell"
for bad in "--skip bogus" "--rounds 0" "--rounds 21" "--skip images --minutes 1" "--skip images --continue"; do
	rc=0
	# shellcheck disable=SC2086 # the options, one word each
	bin/gpu-bundle-shim/run.sh bin/gpu-bundle-check/bad --quick $bad 2>/dev/null || rc=$?
	[ $rc = 2 ] || fail "run.sh $bad exited $rc, want 2"
done
[ ! -e bin/gpu-bundle-check/bad ] || fail "a refused run.sh created its OUTDIR"
# --skip images on the output above (models/ not empty is accepted then, and left alone); the speed logs
# are appended to (run.sh reads only the part each run wrote)
rc=0
timeout 300 bin/gpu-bundle-shim/run.sh "$out" --quick --skip correctness,images --rounds 1 || rc=$?
echo "gpu-bundle-check: shim run.sh --quick --skip correctness,images --rounds 1 on that output: exit $rc"
[ $rc = 0 ] || fail "shim run.sh --skip correctness,images exited $rc (report: $out/report.md)"
for step in correctness images; do grep -q "^| $step | skipped |" "$out/report.md" || fail "report.md does not show $step skipped"; done
grep -q "^| speed | pass |" "$out/report.md" || fail "report.md has no passing speed step with --skip images"
speed_report "$out" 1
[ "$(cd "$out" && find models -type f | sort | xargs sha256sum)" = "$before" ] || fail "run.sh --skip images changed $out/models"
[ "$(grep -c '^\$ ' "$out/logs/speed-ncsnpp-tiny-round1-holdgo-tf32.log")" = 2 ] || fail "the second call did not append to the round-1 log"
out=bin/gpu-bundle-check/skip
rm -rf "$out"
rc=0
timeout 300 bin/gpu-bundle-shim/run.sh "$out" --quick --skip correctness,speed || rc=$?
echo "gpu-bundle-check: shim run.sh --quick --skip correctness,speed: exit $rc"
[ $rc = 0 ] || fail "shim run.sh --quick --skip correctness,speed exited $rc (report: $out/report.md)"
for step in correctness speed; do grep -q "^| $step | skipped |" "$out/report.md" || fail "report.md does not show $step skipped"; done
grep -q "^| images | pass |" "$out/report.md" || fail "report.md has no passing images step with --skip"
# --fresh starts anew and removes only the bundle's own files: a user's file in models/ and in a run
# directory stays, and that run is left for the user (its model fails, the others train).
echo "the user's" >"$out/models/notes.txt"
rc=0
timeout 300 bin/gpu-bundle-shim/run.sh "$out" --quick --skip correctness,speed --fresh || rc=$?
echo "gpu-bundle-check: shim run.sh --fresh: exit $rc"
[ $rc = 0 ] || fail "shim run.sh --fresh exited $rc (report: $out/report.md)"
[ "$(cat "$out/models/notes.txt")" = "the user's" ] || fail "--fresh removed or changed a file it did not write"
for m in hold cld vp; do grep -q '^2,' "$out/models/$m/log.csv" || fail "--fresh did not train $m anew to step 2"; done
rc=0
timeout 300 bin/gpu-bundle-shim/run.sh "$out" --quick --skip correctness,speed --continue || rc=$?
echo "gpu-bundle-check: shim run.sh --quick --skip correctness,speed --continue: exit $rc"
[ $rc = 0 ] || fail "shim run.sh --continue exited $rc (report: $out/report.md)"
for m in hold cld vp; do
	grep -q '^4,' "$out/models/$m/log.csv" || fail "--continue did not resume $m to step 4 ($out/models/$m/log.csv)"
	[ -s "$out/models/$m-asde2-nfe4.npy" ] || fail "--continue drew no $m cell"
done

if command -v nvcc >/dev/null && ! command -v nvidia-smi >/dev/null; then
	GO=$GO gpubundle/build.sh bin/gpu-bundle
	out=bin/gpu-bundle-check/nogpu
	rm -rf "$out"
	t0=$(date +%s)
	rc=0
	bin/gpu-bundle/run.sh "$out" || rc=$?
	dt=$(($(date +%s) - t0))
	echo "gpu-bundle-check: run.sh without a GPU: exit $rc in $dt s"
	[ $rc = 2 ] || fail "run.sh without a GPU exited $rc, want 2"
	[ $dt -le 10 ] || fail "run.sh without a GPU took $dt s, want ≤ 10"
	grep -q 'no usable GPU' "$out/report.md" || fail "$out/report.md does not say why"
	cat "$out/report.md"
else
	echo "gpu-bundle-check: the no-GPU exit of the real bundle not checked here (needs nvcc and no nvidia-smi)"
fi
echo "gpu-bundle-check: ok"
