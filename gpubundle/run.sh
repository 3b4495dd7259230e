#!/usr/bin/env bash
# run.sh OUTDIR [--deadline SECONDS] [--minutes M] [--speed-reserve SECONDS] [--rounds R] [--snapshot STEP]
#        [--skip STEPS] [--continue | --fresh] [--pack DIR] [--quick]
#
# The GPU bundle's one command (built by 'make gpu-bundle'; docs/gpu.md, "Running on a GPU machine
# without Go"). Needs bash, coreutils (timeout), the NVIDIA driver and a cuBLAS 11-13 (found by
# holdctl-cuda itself; $HOLDGO_CUBLAS names one), and python3 with PyTorch for the speed peer.
# Steps, in order, each capped, with one overall deadline (default 540 s):
#   preflight    nvidia-smi (and 'nvidia-smi -q' whole in logs/nvidia-smi-q.txt: the GPU's name, UUID,
#                driver, clocks and power cap go into the report), glibc, the cuBLAS found, the PTX JIT
#                (its log on failure)
#   correctness  the CUDA kernel suite and the backend op table against the Go reference; training
#                cuda vs cpu in strict FP32 (toy MLP: train.test; ncsnpp-tiny: two holdctl runs); tf32
#                and bf16 training against strict on the device (ncsnpp-tiny, 200 steps, 1 % per 20)
#   images       HOLD-3, CLD and VP ncsnpp-small on Fashion-MNIST for --minutes M each, the three
#                side by side on the one GPU (default: what is left, less 120 s and the speed step's
#                --speed-reserve, 240 s by default); then 64 samples of each as a PNG and three cells
#                of 1,000 as .npy files: a-sde2 at NFE 50, the native sampler at NFE 100, a-xdpm3 at
#                NFE 20 (docs/images.md's columns). --snapshot STEP: each training stops at STEP first,
#                its EMA weights are exported and its a-sde2 cell drawn there, and it resumes.
#   speed        bench kernels; bench conv (the per-layer convolution table) and peer_conv.py (cuDNN on
#                its shapes); then --rounds R interleaved rounds (default 3; --quick: 2) over
#                ncsnpp-cifar10 and ncsnpp-small at batch 128: each round runs holdgo's bench train in
#                tf32, bf16 and strict (one process each) and the PyTorch peer once with its rows tf32,
#                tf32-cl, bf16-cl and fp32, holdgo first in odd rounds and PyTorch first in even ones;
#                per row the median images/s and its min-max, and holdgo/PyTorch from the medians (tf32
#                against the better of tf32 and tf32-cl, bf16 against bf16-cl, strict against fp32)
#                with pass/fail against 1.0x; a round that would not leave time for the profiled steps
#                is skipped and recorded; then one profiled ncsnpp-cifar10 tf32 step of each framework
#                (bench train --profile; peer_train.py --profile: torch.profiler's top 25)
# OUTDIR/report.md and OUTDIR/report.json are rewritten as each step ends, so a machine that goes
# away midway still leaves what was done; OUTDIR/logs holds every command's output (one log per run
# in the speed step's rounds).
# --skip STEPS: a comma list of correctness, images and speed, steps not to run (recorded as skipped).
# With images skipped the speed step has the whole deadline after the correctness step (its reserve is
# the deadline), and --minutes, --snapshot, --continue and --fresh, which are the images step's, are
# refused; an OUTDIR with models/ is then accepted and its models/ left alone.
# --continue: the images step resumes the models already in OUTDIR/models (a second call on the same
# machine: each run goes on from its checkpoint for --minutes more; snapshots are kept, --snapshot unused).
# An OUTDIR whose models/ is not empty is refused (exit 2) unless --continue or --fresh is given:
# --fresh removes the bundle's own files there (its runs, exports, figures and cells — a directory
# only when it holds nothing but a run's or an export's files) and starts anew; nothing else there is
# ever removed.
# --deadline and --speed-reserve are whole seconds written in decimal (a leading zero is not octal),
# at most 86400; --rounds is 1 to 20.
# --pack DIR: at the end, gather the results into at most seven .tgz files in DIR (OUTDIR or a folder
# outside it; files of those names there are replaced), each under 16 MiB,
# for a machine that returns only a few files of limited size: report.tgz (report, logs, PNGs, training
# logs), models-SDE.tgz (the EMA exports) and cells-SDE.tgz (the .npy cells), one pair per model.
# --quick: tiny sizes (8×8 images, ncsnpp-tiny, 1-2 steps) — the plumbing check, which the host-shim
# bundle (make gpu-bundle SHIM=1) runs on a CPU in a few minutes.
# Exit status: 0 every step passed; 1 a step failed or timed out; 2 no GPU/driver (or bad usage).
# (holdgo below 1.0x of PyTorch on a row is reported as such, not a failed step: the step fails when a
# run fails.)
set -uo pipefail

usage() { echo "usage: run.sh OUTDIR [--deadline SECONDS] [--minutes M] [--speed-reserve SECONDS] [--rounds R] [--snapshot STEP] [--skip correctness,images,speed] [--continue | --fresh] [--pack DIR] [--quick]" >&2; exit 2; }
out=
deadline=540
minutes=
speed_reserve=240
rounds=
snapshot=
skip=
pack=
cont=0
fresh=0
quick=0
while [ $# -gt 0 ]; do
	case $1 in
	--deadline) deadline=${2:-}; shift 2 || usage ;;
	--minutes) minutes=${2:-}; shift 2 || usage ;;
	--speed-reserve) speed_reserve=${2:-}; shift 2 || usage ;;
	--rounds) rounds=${2:-}; shift 2 || usage ;;
	--snapshot) snapshot=${2:-}; shift 2 || usage ;;
	--skip) skip=${2:-}; shift 2 || usage ;;
	--pack) pack=${2:-}; shift 2 || usage ;;
	--continue) cont=1; shift ;;
	--fresh) fresh=1; shift ;;
	--quick) quick=1; shift ;;
	-h | --help) usage ;;
	-*) echo "run.sh: unknown option $1" >&2; usage ;;
	*) [ -z "$out" ] || usage; out=$1; shift ;;
	esac
done
[ -n "$out" ] || usage
# seconds NAME VALUE: VALUE as decimal whole seconds in [0, 86400] (no octal, no overflow), or exit 2.
seconds() {
	if [[ ! $2 =~ ^[0-9]{1,6}$ ]] || (( 10#$2 > 86400 )); then
		echo "run.sh: --$1 wants whole seconds from 0 to 86400, written in decimal, got '$2'" >&2
		exit 2
	fi
	echo $((10#$2))
}
deadline=$(seconds deadline "$deadline") || exit 2
speed_reserve=$(seconds speed-reserve "$speed_reserve") || exit 2
[ $cont = 0 ] || [ $fresh = 0 ] || { echo "run.sh: --continue and --fresh exclude each other" >&2; exit 2; }
for s in ${skip//,/ }; do
	case $s in correctness | images | speed) ;; *) echo "run.sh: --skip takes a comma list of correctness, images and speed, got '$s'" >&2; exit 2 ;; esac
done
# want STEP: whether STEP is to run (not named by --skip)
want() { [[ ",$skip," != *",$1,"* ]]; }
if ! want images; then
	if [ -n "$minutes$snapshot" ] || [ $cont = 1 ] || [ $fresh = 1 ]; then
		echo "run.sh: --minutes, --snapshot, --continue and --fresh are the images step's, which --skip images leaves out" >&2
		exit 2
	fi
	speed_reserve=$deadline # nothing is trained: the speed step may have all the time the correctness step leaves
fi
want speed || speed_reserve=0
if [ -z "$rounds" ]; then rounds=$([ $quick = 1 ] && echo 2 || echo 3); fi
[[ $rounds =~ ^[1-9][0-9]?$ ]] && [ "$rounds" -le 20 ] || { echo "run.sh: --rounds wants a whole number from 1 to 20, got '$rounds'" >&2; exit 2; }
if want images && [ -d "$out/models" ] && [ -n "$(ls -A "$out/models" 2>/dev/null)" ] && [ $cont = 0 ] && [ $fresh = 0 ]; then
	echo "run.sh: $out/models holds an earlier run's files: --continue trains its models on, --fresh replaces the bundle's own files there (nothing else), or give another OUTDIR" >&2
	exit 2
fi
[ -z "$snapshot" ] || [[ $snapshot =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --snapshot wants a step number ≥ 1, got '$snapshot'" >&2; exit 2; }
[ -z "$minutes" ] || { [[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v m="$minutes" 'BEGIN { exit !(m >= 0.1) }'; } || { echo "run.sh: --minutes wants a number of minutes ≥ 0.1 like 2 or 2.5, got '$minutes'" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
if [ -n "$pack" ]; then # checked before anything is written
	pack=$(realpath -m -- "$pack") && o=$(realpath -m -- "$out") || exit 2
	case $pack/ in "$o"/?*/) echo "run.sh: --pack $pack is inside OUTDIR $o, whose files it would archive: name OUTDIR itself or a folder outside it" >&2; exit 2 ;; esac
	mkdir -p "$pack" || { echo "run.sh: cannot create --pack directory $pack" >&2; exit 2; }
fi
mkdir -p "$out/logs" || exit 2
out=$(cd "$out" && pwd)
# the binaries travel gzipped (build.sh): unpack them next to the report
bin=$out/bin
mkdir -p "$bin" || exit 2
for f in holdctl-cuda cuda.test train.test; do
	if ! gzip -dc "$here/bin/$f.gz" >"$bin/$f.tmp" || ! chmod +x "$bin/$f.tmp" || ! mv "$bin/$f.tmp" "$bin/$f"; then
		echo "run.sh: cannot unpack $here/bin/$f.gz into $bin" >&2
		exit 2
	fi
done
start=$(date +%s)
shim=0
grep -q '^build tags: cudashim' "$here/MANIFEST" 2>/dev/null && shim=1
export CUDA_CACHE_PATH=${CUDA_CACHE_PATH:-$out/jit-cache} # one JIT cache for every process of the run
export CUDA_CACHE_MAXSIZE=${CUDA_CACHE_MAXSIZE:-1073741824}

# --- the record of the steps, rendered to report.md and report.json after each one ------------
names=() statuses=() seconds=() notes=() figures=()
machine=()

jstr() { # a JSON string
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/}
	printf '"%s"' "$s"
}

render() {
	local i kv k v sep
	{
		echo "# holdgo GPU bundle report"
		echo
		echo "- started: $(date -u -d @"$start" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo "$start"), elapsed $(($(date +%s) - start)) s of a $deadline s deadline$([ $quick = 1 ] && echo ', --quick')"
		for kv in "${machine[@]}"; do echo "- ${kv%%=*}: ${kv#*=}"; done
		echo
		echo "| step | status | seconds | note |"
		echo "|---|---|---|---|"
		for i in "${!names[@]}"; do
			echo "| ${names[$i]} | ${statuses[$i]} | ${seconds[$i]} | ${notes[$i]//|/\\|} |"
		done
		for i in "${!names[@]}"; do
			[ -n "${figures[$i]}" ] || continue
			echo
			echo "## ${names[$i]}"
			echo
			while IFS= read -r kv; do
				if [ -n "$kv" ]; then echo "- ${kv%%=*}: ${kv#*=}"; fi
			done <<<"${figures[$i]}"
		done
	} >"$out/report.md.tmp"
	mv "$out/report.md.tmp" "$out/report.md"
	{
		printf '{"bundle": %s, "quick": %s, "shim": %s, "deadline_s": %s, "elapsed_s": %s, "machine": {' \
			"$(jstr "$(sed -n 's/^version: //p' "$here/MANIFEST" 2>/dev/null)")" \
			"$([ $quick = 1 ] && echo true || echo false)" "$([ $shim = 1 ] && echo true || echo false)" "$deadline" "$(($(date +%s) - start))"
		sep=
		for kv in "${machine[@]}"; do printf '%s%s: %s' "$sep" "$(jstr "${kv%%=*}")" "$(jstr "${kv#*=}")"; sep=', '; done
		printf '}, "steps": ['
		for i in "${!names[@]}"; do
			[ "$i" = 0 ] || printf ', '
			printf '{"name": %s, "status": %s, "seconds": %s, "note": %s, "figures": {' \
				"$(jstr "${names[$i]}")" "$(jstr "${statuses[$i]}")" "${seconds[$i]}" "$(jstr "${notes[$i]}")"
			sep=
			while IFS= read -r kv; do
				[ -n "$kv" ] || continue
				k=${kv%%=*} v=${kv#*=}
				if [[ $v =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then
					printf '%s%s: %s' "$sep" "$(jstr "$k")" "$v"
				else
					printf '%s%s: %s' "$sep" "$(jstr "$k")" "$(jstr "$v")"
				fi
				sep=', '
			done <<<"${figures[$i]}"
			printf '}}'
		done
		printf ']}\n'
	} >"$out/report.json.tmp"
	mv "$out/report.json.tmp" "$out/report.json"
}

# step NAME STATUS SECONDS NOTE [FIGURES: key=value lines]
record() {
	names+=("$1") statuses+=("$2") seconds+=("$3") notes+=("$4") figures+=("${5:-}")
	render
	echo "run.sh: $1: $2 ($3 s) $4" >&2
}

left() { echo $((deadline - ($(date +%s) - start))); }

# cap WANT: the seconds a step may take: WANT, or what is left before the deadline less 5 s.
cap() {
	local l
	l=$(($(left) - 5))
	[ "$l" -lt "$1" ] && echo "$l" || echo "$1"
}

# run LOG SECONDS CMD…: run CMD with a time limit, output appended to logs/LOG; the status of CMD,
# 124 on timeout.
run() {
	local log=$out/logs/$1 limit=$2
	shift 2
	if [ "$limit" -lt 1 ]; then
		echo "skipped: no time left before the deadline" >>"$log"
		return 124
	fi
	echo "\$ $*" >>"$log"
	timeout -k 5 "$limit" "$@" >>"$log" 2>&1
}

status_of() { # status_of RC: pass / fail / timeout
	case $1 in 0) echo pass ;; 124 | 137) echo timeout ;; *) echo fail ;; esac
}

# smi_identity FILE: key=value lines for the report from 'nvidia-smi -q' in FILE, of its first GPU: the
# name, UUID, driver, clocks (SM and memory, now and at most) and power cap; nothing it does not list.
smi_identity() {
	awk '
	function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
	function q(v) { return v == "" ? "?" : v }
	/^GPU [0-9A-Fa-f]+:/ { gpus++; section = ""; next }
	gpus > 1 { next }
	{
		indent = match($0, /[^ ]/) - 1
		i = index($0, " : ")
		if (i == 0) { if (indent >= 0 && indent <= 4) section = trim($0); next }
		k = trim(substr($0, 1, i - 1)); v = trim(substr($0, i + 3))
		if (indent == 0) {
			if (k == "Driver Version") driver = v
			else if (k == "CUDA Version") cuda = v
			else if (k == "Attached GPUs") attached = v
		} else if (indent == 4) {
			if (k == "Product Name") name = v
			else if (k == "GPU UUID") uuid = v
		} else if (section == "Clocks") {
			if (k == "SM") sm = v; else if (k == "Memory") mem = v
		} else if (section == "Max Clocks") {
			if (k == "SM") smmax = v; else if (k == "Memory") memmax = v
		} else if (section == "GPU Power Readings" || section == "Power Readings") { # not "Module Power Readings"
			if ((k == "Current Power Limit" || k == "Power Limit") && cap == "") cap = v
			else if (k == "Enforced Power Limit") enforced = v
		}
	}
	END {
		if (name != "") print "gpu name=" name (attached > 1 ? " (the first of " attached " GPUs listed)" : "")
		if (uuid != "") print "gpu uuid=" uuid
		if (driver != "") print "driver=" driver (cuda != "" ? ", CUDA " cuda " (nvidia-smi)" : "")
		if (sm != "" || mem != "") print "clocks=SM " q(sm) " (max " q(smmax) "), memory " q(mem) " (max " q(memmax) "), at the preflight"
		if (cap != "") print "power cap=" cap (enforced != "" && enforced != cap ? " (enforced " enforced ")" : "")
	}' "$1"
}

# --- preflight -------------------------------------------------------------------------------
t0=$(date +%s)
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>/dev/null | head -1 || echo unknown)
machine+=("host=$(uname -n) ($(uname -sm))" "glibc=$glibc")
if [ $shim = 1 ]; then
	machine+=("gpu=none: host-shim bundle (the CUDA kernels run on the CPU)")
else
	reason=
	if ! command -v nvidia-smi >/dev/null 2>&1; then
		reason="nvidia-smi not found: no NVIDIA driver on this machine"
	elif ! smi=$(timeout 8 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1); then
		reason="nvidia-smi failed: $(echo "$smi" | head -3 | tr '\n' ' ')"
	elif [ -z "$smi" ]; then
		reason="nvidia-smi lists no GPU"
	fi
	if [ -z "$reason" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && [ -z "${LD_LIBRARY_PATH:-}" ]; then
		reason="libcuda.so.1 (the driver library) is not in the ld.so cache and LD_LIBRARY_PATH is unset"
	fi
	if [ -n "$reason" ]; then
		record preflight fail $(($(date +%s) - t0)) "no usable GPU: $reason; nothing else was run"
		echo "run.sh: $reason" >&2
		exit 2
	fi
	machine+=("gpu=$(echo "$smi" | head -1)")
	echo "$smi" >"$out/logs/nvidia-smi.txt"
	timeout 8 nvidia-smi >>"$out/logs/nvidia-smi.txt" 2>&1
	# the identity of the run (issue 44): nvidia-smi -q whole in the logs, its name, UUID, driver, clocks
	# and power cap in the report (of the first GPU listed: the one cuda:0 is, unless CUDA_VISIBLE_DEVICES says otherwise)
	timeout 15 nvidia-smi -q >"$out/logs/nvidia-smi-q.txt" 2>&1
	while IFS= read -r kv; do
		[ -z "$kv" ] || machine+=("$kv")
	done < <(smi_identity "$out/logs/nvidia-smi-q.txt")
fi
run preflight.log "$(cap 60)" "$bin/holdctl-cuda" device --device cuda
rc=$?
info=$(grep -E '^(backend|cublas|jit cache|opened): ' "$out/logs/preflight.log" | sed 's/: /=/')
cublas=$(sed -n 's/^cublas: //p' "$out/logs/preflight.log" | head -1)
[ -z "$cublas" ] || machine+=("cublas=$cublas")
if [ $rc != 0 ]; then
	record preflight "$(status_of $rc)" $(($(date +%s) - t0)) "holdctl-cuda device failed (exit $rc): $(grep -v '^\$' "$out/logs/preflight.log" | head -c 1500 | tr '\n' ' ')"
	exit 2
fi
record preflight pass $(($(date +%s) - t0)) "holdctl-cuda device --device cuda opened the device" "$info"

# --- correctness -------------------------------------------------------------------------------
if want correctness; then
	t0=$(date +%s)
	export HOLDGO_REQUIRE_GPU=1 # the GPU test binaries fail instead of skipping where no GPU opens
	figs=
	fails=
	if [ $shim = 1 ]; then
		kernel_run='ShimKernels|ShimBackendTable'
		train_run='ShimTrainingMatchesCPU'
	else
		kernel_run='GPU'
		train_run='ShimTrainingMatchesCPU|ShimResumeAcrossDevices'
	fi
	[ $quick = 1 ] && [ $shim = 1 ] && kernel_run='ShimBackendTable'
	run correctness-kernels.log "$(cap 240)" "$bin/cuda.test" -test.run "$kernel_run" -test.v -test.count 1
	rc=$?
	figs+="kernel suite ($kernel_run)=$(status_of $rc), $(grep -c -- '--- PASS' "$out/logs/correctness-kernels.log") passed, $(grep -c -- '--- FAIL' "$out/logs/correctness-kernels.log") failed"$'\n'
	[ $rc = 0 ] || fails+="kernels "
	shortflag=()
	[ $quick = 1 ] && shortflag=(-test.short)
	run correctness-train.log "$(cap 240)" "$bin/train.test" -test.run "$train_run" -test.v -test.count 1 "${shortflag[@]}"
	rc=$?
	figs+="toy MLP training cuda vs cpu ($train_run)=$(status_of $rc); $(grep -m3 -o 'worst loss relative difference [^;]*' "$out/logs/correctness-train.log" | tr '\n' ' ')"$'\n'
	[ $rc = 0 ] || fails+="train "
	# ncsnpp-tiny through the CLI, strict FP32 on both devices, same seed: the logged losses must agree.
	if [ $quick = 1 ]; then tsteps=2 tbatch=1; else tsteps=20 tbatch=4; fi
	for d in cpu cuda; do
		rm -rf "$out/tiny-$d"
		# --precision strict: FP32 FFMA in holdgo's own convolution kernels (NVIDIA_TF32_OVERRIDE reaches only cuBLAS)
		NVIDIA_TF32_OVERRIDE=0 run correctness-tiny.log "$(cap 180)" "$bin/holdctl-cuda" train --device "$d" --precision strict --data "images:$here/data/tiny8" \
			--model ncsnpp-tiny --steps $tsteps --batch $tbatch --seed 1 --log-every 1 --out "$out/tiny-$d"
		rc=$?
		[ $rc = 0 ] || break
	done
	if [ $rc = 0 ]; then
		worst=$(paste -d, "$out/tiny-cpu/log.csv" "$out/tiny-cuda/log.csv" | awk -F, 'NR > 1 && $1 ~ /^[0-9]+$/ {
			n = NF / 2; d = $2 - $(n + 2); if (d < 0) d = -d; r = d / ($2 < 0 ? -$2 : $2); if (r > w) w = r; c++ }
			END { if (c == 0) print "none"; else printf "%.3g", w }')
		if [ "$worst" = none ] || awk -v w="$worst" 'BEGIN { exit !(w > 1e-4) }'; then
			fails+="ncsnpp-tiny "
			figs+="ncsnpp-tiny cuda vs cpu=fail: worst loss relative difference $worst over $tsteps steps (want ≤ 1e-4)"$'\n'
		else
			figs+="ncsnpp-tiny cuda vs cpu=pass: worst loss relative difference $worst over $tsteps steps of batch $tbatch (strict FP32)"$'\n'
		fi
	else
		fails+="ncsnpp-tiny "
		figs+="ncsnpp-tiny cuda vs cpu=$(status_of $rc) (exit $rc, logs/correctness-tiny.log)"$'\n'
	fi
	# tf32 and bf16 against strict on the device (issue 44): the same ncsnpp-tiny run in each arithmetic,
	# same seed; every window of 20 steps must keep its mean loss within 1 % of strict's (the worst single
	# step is reported too: the runs' weights drift apart, so single steps may differ more).
	if [ $quick = 1 ]; then psteps=4 pbatch=1 win=2; else psteps=200 pbatch=16 win=20; fi
	for p in strict tf32 bf16; do
		rm -rf "$out/precision-$p"
		run correctness-precision-$p.log "$(cap 120)" "$bin/holdctl-cuda" train --device cuda --precision $p --data "images:$here/data/tiny8" \
			--model ncsnpp-tiny --steps $psteps --batch $pbatch --seed 1 --log-every 1 --out "$out/precision-$p"
		rc=$?
		[ $rc = 0 ] || break
	done
	if [ $rc = 0 ]; then
		for p in tf32 bf16; do
			read -r wstep wwin <<<"$(paste -d, "$out/precision-strict/log.csv" "$out/precision-$p/log.csv" | awk -F, -v win=$win 'NR > 1 && $1 ~ /^[0-9]+$/ {
				n = NF / 2; a = $2; b = $(n + 2); d = (b - a) / (a < 0 ? -a : a); if (d < 0) d = -d; if (d > ws) ws = d
				sa += a; sb += b; c++
				if (c % win == 0) { r = (sb - sa) / (sa < 0 ? -sa : sa); if (r < 0) r = -r; if (r > ww) ww = r; sa = 0; sb = 0 } }
				END { if (c < win) print "none none"; else printf "%.3g %.3g\n", ws, ww }')"
			if [ "$wwin" = none ] || awk -v w="$wwin" 'BEGIN { exit !(w > 0.01) }'; then
				fails+="precision-$p "
				figs+="ncsnpp-tiny $p vs strict=fail: worst $win-step mean loss relative difference $wwin over $psteps steps (want ≤ 1 %), worst step $wstep"$'\n'
			else
				figs+="ncsnpp-tiny $p vs strict=pass: worst $win-step mean loss relative difference $wwin over $psteps steps of batch $pbatch, worst step $wstep"$'\n'
			fi
		done
	else
		fails+="precision "
		figs+="ncsnpp-tiny tf32/bf16 vs strict=$(status_of $rc) (exit $rc, logs/correctness-precision-$p.log)"$'\n'
	fi
	if [ -z "$fails" ]; then st=pass; note="kernels, op table and training agree with the CPU"; else st=fail; note="failed: $fails(see logs/correctness-*.log)"; fi
	record correctness $st $(($(date +%s) - t0)) "$note" "$figs"
else
	record correctness skipped 0 "not run (--skip correctness)"
fi

# --- image models: HOLD-3, CLD, VP on Fashion-MNIST, trained side by side ------------------------------
# The three trainings run at once on the one GPU: an ncsnpp-small step at batch 128 keeps the device
# busy a small part of the time (the host launches ~1,000 small kernels per step), so three processes
# interleave their kernels and each trains at most of its lone rate. Then each model's EMA weights are
# exported and sampled: 64 samples as a PNG by the native sampler, and three cells of 1,000 as .npy files
# for 'holdctl fid' elsewhere (docs/images.md's columns for these models): the stochastic aligned sampler
# a-sde2 at NFE 50, the native sampler (lt; VP: em) at NFE 100 and a-xdpm3 at NFE 20.

# remove_own PATH…: remove what this script made — a file, or a directory that holds nothing but a
# run's or an export's files (ckpt.safetensors, config.yaml, log.csv, data.npy, .lock, temporaries);
# a directory with anything else in it is left as it is, and the call fails naming what it found.
remove_own() {
	local p f rc=0
	for p in "$@"; do
		[ -e "$p" ] || [ -L "$p" ] || continue
		if [ -d "$p" ] && [ ! -L "$p" ]; then
			for f in "$p"/* "$p"/.[!.]*; do
				[ -e "$f" ] || [ -L "$f" ] || continue
				case ${f##*/} in
				ckpt.safetensors | config.yaml | log.csv | data.npy | .lock | .*.tmp-*) ;;
				*) echo "run.sh: $p holds ${f##*/}, which this script did not write: left as it is" >&2; rc=1; continue 2 ;;
				esac
			done
			rm -rf -- "$p"
		else
			rm -f -- "$p"
		fi
	done
	return $rc
}

# image_model SDE: train one model (with --snapshot: to that step first, export and draw its a-sde2
# cell there, then resume), export its EMA weights, draw its PNG and cells. Writes one line of figures
# to models/SDE.figs and the names of the failed parts to models/SDE.fails.
image_model() {
	local sde=$1 dir=$out/models/$1 log=images-$1.log args=(--sde "$1") resume=() rc tl f=
	local fg=$dir.figs
	[ "$sde" = hold ] && args+=(--order 3)
	if [ $cont = 1 ]; then # keep the run and its snapshots; the final export and cells are made anew
		if [ ! -s "$dir/ckpt.safetensors" ]; then
			echo "train-$sde" >"$dir.fails"
			echo "$sde=--continue: no checkpoint in models/$sde to resume" >"$fg"
			return
		fi
		remove_own "$dir-ema" "$fg" "$dir.fails" "$dir".png "$out/models/$sde"-{asde2,lt,em,axdpm3}-nfe*.npy || { echo "train-$sde" >"$dir.fails"; return; }
		resume=(--resume)
	else
		if ! remove_own "$dir" "$dir-ema" "$dir"-step*-ema "$fg" "$dir.fails" "$dir".png "$out/models/$sde"-{asde2,lt,em,axdpm3}-nfe*.npy \
			"$out/models/$sde"-step*-asde2-nfe*.npy; then
			echo "train-$sde" >"$dir.fails"
			echo "$sde=models/ holds files this script did not write where it writes: move them" >"$fg"
			return
		fi
	fi
	local train=("$bin/holdctl-cuda" train --device cuda --data "$data" "${args[@]}" "${recipe[@]}" --seed 1 --out "$dir")
	# sample NAME.npy NFE ARGS…: one cell of cell_n samples into models/
	sample() {
		local name=$1 nfe=$2
		shift 2
		run "$log" "$(cap "$scap")" "$bin/holdctl-cuda" sample --device cuda -n "$cell_n" --nfe "$nfe" --seed 1 \
			--clip 1 --denoise "$@" --out "$out/models/$name" || { f+="cell-$name "; return 1; }
	}
	if [ -n "$snapshot" ] && [ $cont = 0 ]; then
		run "$log" "$tcap" "${train[@]}" --steps "$snapshot"
		rc=$?
		if [ $rc != 0 ]; then
			echo "train-$sde" >"$dir.fails"
			echo "$sde train to step $snapshot=$(status_of $rc) (logs/$log)" >"$fg"
			return
		fi
		run "$log" "$(cap 60)" "$bin/holdctl-cuda" export --ckpt "$dir" --out "$dir-step$snapshot-ema" || f+="export-step$snapshot "
		sample "$sde-step$snapshot-asde2-nfe$nfe_asde2.npy" "$nfe_asde2" --ckpt "$dir" --sampler a-sde2 --grid vpmatched
		echo -n "$sde at step $snapshot=$(tail -1 "$dir/log.csv") (models/$sde-step$snapshot-ema); " >"$fg"
		resume=(--resume)
	fi
	tl=()
	if [ "$train_s" -gt 0 ]; then
		local rest=$((train_s - ($(date +%s) - t0)))
		[ $rest -ge 1 ] || rest=1
		tl=(--time-limit "${rest}s")
	fi
	run "$log" "$(cap "$tcap")" "${train[@]}" --steps "$total_steps" "${tl[@]}" "${resume[@]}"
	rc=$?
	if [ $rc != 0 ]; then
		echo "train-$sde $f" >"$dir.fails"
		echo "$sde train=$(status_of $rc) (logs/$log)" >>"$fg"
		return
	fi
	local last ema png
	last=$(tail -1 "$dir/log.csv")
	run "$log" "$(cap 60)" "$bin/holdctl-cuda" export --ckpt "$dir" --out "$dir-ema" || f+="export "
	ema=$(du -sk "$dir-ema" 2>/dev/null | cut -f1)
	run "$log" "$(cap "$scap")" "$bin/holdctl-cuda" sample --ckpt "$dir" --device cuda "${sample_args[@]}" --seed 1 --out "$dir.png"
	png=$(status_of $?)
	[ "$png" = pass ] || f+="sample "
	local native=lt
	[ "$sde" = vp ] && native=em
	sample "$sde-asde2-nfe$nfe_asde2.npy" "$nfe_asde2" --ckpt "$dir" --sampler a-sde2 --grid vpmatched
	sample "$sde-$native-nfe$nfe_native.npy" "$nfe_native" --ckpt "$dir" --sampler "$native" --grid quadratic --eps 1e-3
	sample "$sde-axdpm3-nfe$nfe_axdpm3.npy" "$nfe_axdpm3" --ckpt "$dir" --sampler a-xdpm3 --grid vpmatched
	echo "$sde=last log row (step,loss,lr,grad norm,steps/s) $last; EMA export ${ema:-?} KiB; samples $png (models/$sde.png); cells: $(cd "$out/models" && ls "$sde"-*.npy 2>/dev/null | tr '\n' ' ')${f:+failed: $f}" >>"$fg"
	[ -z "$f" ] || echo "$f" >"$dir.fails"
}

if want images; then
	t0=$(date +%s)
	figs=
	fails=
	if [ $quick = 1 ]; then
		data="images:$here/data/tiny8"
		recipe=(--model ncsnpp-tiny --batch 1 --log-every 1)
		total_steps=$((cont == 1 ? 4 : 2)) # --continue: two steps more
		sample_args=(--n 1 --steps 2)
		cell_n=2 nfe_asde2=4 nfe_native=4 nfe_axdpm3=4
		train_s=0
		tcap=120
	else
		data="fashion-mnist:$here/data/fashion-mnist"
		# the Fashion-MNIST recipe of docs/fashion-mnist.md, cut by a time limit instead of a step count
		recipe=(--model ncsnpp-small --dropout 0 --flip --times mixed --batch 128 --lr 1e-3 --warmup 200
			--ema 0.995 --grad-clip 1 --ckpt-every 500 --log-every 50)
		total_steps=1000000
		sample_args=(--n 64 --steps 250 --denoise)
		cell_n=1000 nfe_asde2=50 nfe_native=100 nfe_axdpm3=20
		if [ -z "$minutes" ]; then # what is left, less 120 s for the samples and $speed_reserve s for the speed step
			minutes=$(awk -v l="$(left)" -v r="$speed_reserve" 'BEGIN { m = (l - r - 120) / 60; if (m < 0.5) m = 0.5; printf "%.1f", m }')
		fi
		train_s=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
		tcap=$((train_s + 60))
	fi
	scap=$([ $quick = 1 ] && echo 120 || echo 90) # seconds for one sampling command
	mkdir -p "$out/models"
	tcap=$(cap "$tcap")

	sdes=(hold cld vp)
	pids=()
	for sde in "${sdes[@]}"; do
		image_model "$sde" &
		pids+=($!)
	done
	for i in "${!sdes[@]}"; do
		sde=${sdes[$i]}
		wait "${pids[$i]}"
		figs+="$(cat "$out/models/$sde.figs" 2>/dev/null || echo "$sde=no record (logs/images-$sde.log)")"$'\n'
		[ ! -s "$out/models/$sde.fails" ] || fails+="$(cat "$out/models/$sde.fails") "
		[ -s "$out/models/$sde.figs" ] || fails+="$sde "
	done
	if [ -z "$fails" ]; then st=pass; note="trained HOLD-3, CLD and VP side by side and sampled them"; else st=fail; note="failed: $fails"; fi
	[ $quick = 1 ] || note+=" (${minutes} min each)"
	[ -z "$snapshot" ] || [ $cont = 1 ] || note+="; snapshots at step $snapshot"
	[ $cont = 0 ] || note+="; resumed the runs in $out/models"
	record images $st $(($(date +%s) - t0)) "$note" "$figs"
else
	record images skipped 0 "not run (--skip images)"
fi

# --- speed: holdgo and PyTorch on the same device, interleaved rounds -----------------------------------
# The tables first (bench kernels; the per-layer convolutions and cuDNN on their shapes), then --rounds
# interleaved rounds of whole training steps, which take what is left: a round starts only if the longest
# round so far and the profiled steps (about what round 1's ncsnpp-cifar10 tf32 runs took) still fit
# before the deadline; the rounds left out are recorded. Then one profiled tf32 step of each framework.

# lines LOG: how many lines logs/LOG has (0 if none): where the next run's output starts in it (a second
# call on the same OUTDIR appends to its logs, as run does, and reads only its own part)
lines() { if [ -f "$out/logs/$1" ]; then wc -l <"$out/logs/$1"; else echo 0; fi; }

# since LOG FROM: logs/LOG after its first FROM lines
since() { sed -n "$(($2 + 1)),\$p" "$out/logs/$1"; }

# peer_rows LOG FROM: "MODE IMAGES_PER_S" for each row of peer_train.py's JSON line in logs/LOG after its
# first FROM lines; nothing without one.
peer_rows() {
	since "$1" "$2" | "$py" -c '
import json, sys
res = [json.loads(l) for l in sys.stdin if l.startswith("{\"peer\"")]
for row in (res[-1]["rows"] if res else []):
    print(row["mode"], row["images_per_s"])' 2>/dev/null
}

# stats V…: "MEDIAN MIN MAX N" of the numbers V; nothing without any.
stats() {
	[ $# -gt 0 ] || return 0
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s %d\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR], NR }'
}

# fmt1 V…: the numbers V with one decimal, space-separated ("none" for an empty one)
fmt1() { awk 'BEGIN { for (i = 1; i < ARGC; i++) printf "%s%s", (i > 1 ? " " : ""), (ARGV[i] == "" ? "none" : sprintf("%.1f", ARGV[i])) }' "$@"; }

# holdgo_round MODEL BATCH CHANNELS STEPS ROUND: holdgo's bench train in tf32, bf16 and strict, one process
# and one log each; strict also with NVIDIA_TF32_OVERRIDE=0 (--precision strict is FP32 FFMA in holdgo's own
# kernels; the variable keeps cuBLAS off TF32).
holdgo_round() {
	local model=$1 batch=$2 ch=$3 steps=$4 r=$5 p log from rc v t envs
	for p in tf32 bf16 strict; do
		log=speed-$model-round$r-holdgo-$p.log
		envs=()
		[ $p = strict ] && envs=(NVIDIA_TF32_OVERRIDE=0)
		from=$(lines "$log")
		t=$(date +%s)
		run "$log" "$(cap 120)" env "${envs[@]}" "$bin/holdctl-cuda" bench train --device cuda --precision $p \
			--model "$model" --batch "$batch" --channels "$ch" --steps "$steps"
		rc=$?
		took["$model holdgo $p $r"]=$(($(date +%s) - t))
		v=$(since "$log" "$from" | grep -m1 -o '[0-9.]* samples/s' | cut -d' ' -f1)
		if [ $rc = 0 ] && [ -n "$v" ]; then
			rates["$model holdgo $p"]+="$v "
			[ -n "${per_step["$model $p"]:-}" ] ||
				per_step["$model $p"]=$(since "$log" "$from" | grep -m1 'per non-logging step' | sed 's/ *per non-logging step: //')
		else
			missed["$model holdgo $p"]+="${missed["$model holdgo $p"]:+, }round $r: $(status_of $rc)"
			fails+="holdgo-$model-$p-round$r "
		fi
	done
}

# pytorch_round MODEL BATCH STEPS ROUND: the peer once, all its rows in one process (one log).
pytorch_round() {
	local model=$1 batch=$2 steps=$3 r=$4 log=speed-$1-round$4-pytorch.log from rc t mode v st got=0
	from=$(lines "$log")
	t=$(date +%s)
	run "$log" "$(cap 240)" "$py" "$here/peer/peer_train.py" --model "$model" --batch "$batch" --steps "$steps" \
		--device $peer_dev --modes "$peer_modes" --rounds 1 --json
	rc=$?
	took["$model pytorch $r"]=$(($(date +%s) - t))
	if [ $rc = 0 ]; then
		while read -r mode v; do
			rates["$model pytorch $mode"]+="$v "
			got=1
		done < <(peer_rows "$log" "$from")
	fi
	if [ $got = 0 ]; then
		st=$(status_of $rc)
		[ $rc != 0 ] || st="no JSON line"
		for mode in ${peer_modes//,/ }; do missed["$model pytorch $mode"]+="${missed["$model pytorch $mode"]:+, }round $r: $st"; done
		fails+="pytorch-$model-round$r "
	fi
}

if want speed; then
	t0=$(date +%s)
	figs=
	fails=
	peer_dev=cuda
	[ $shim = 1 ] && peer_dev=cpu
	have_torch=0
	py=
	for p in ${HOLDGO_PYTHON:-} python3 /usr/bin/python3; do # $HOLDGO_PYTHON names the Python with PyTorch
		if command -v "$p" >/dev/null && "$p" -c 'import torch' >/dev/null 2>&1; then py=$p; break; fi
	done
	if [ -n "$py" ]; then
		have_torch=1
		machine+=("pytorch=$py: $("$py" -c 'import torch; c = torch.backends.cudnn
print("torch %s, CUDA %s, cuDNN %s" % (torch.__version__, torch.version.cuda, c.version() if c.is_available() else None))' 2>/dev/null)")
	else
		figs+="pytorch=not found (no python3 that imports torch; set HOLDGO_PYTHON): holdgo timed alone"$'\n'
	fi
	# model, batch, image channels, ≈GFLOP per image (0: not known), timed steps per run
	if [ $quick = 1 ]; then
		configs=("ncsnpp-tiny 1 1 0 1")
	else
		configs=("ncsnpp-cifar10 128 3 106 10" "ncsnpp-small 128 1 0 30")
	fi
	# the fair peer's rows (peer_train.py): TF32 NCHW and channels_last, AMP-BF16 channels_last, eager FP32
	peer_modes=tf32,tf32-cl,bf16-cl,fp32
	gpu_name=$(echo "${smi:-}" | head -1 | cut -d, -f1)
	peak_tf32=0 peak_fp32=0 peak_bf16=0 # dense TFLOP/s
	case $gpu_name in *H100* | *H200* | *GH200*) peak_tf32=494.7 peak_fp32=66.9 peak_bf16=989.4 ;; *A100*) peak_tf32=156 peak_fp32=19.5 peak_bf16=312 ;; esac

	# the tables: time per kernel family; the per-layer convolution table (issue 44): every distinct
	# convolution of the step, three passes, the im2col path and the implicit kernels in strict, TF32 and
	# BF16; then cuDNN on the same shapes (peer_conv.py)
	if [ $quick = 1 ]; then kargs=(--elements 4096 --gemm 64 --reps 1); else kargs=(); fi
	run speed-kernels.log "$(cap 120)" "$bin/holdctl-cuda" bench kernels --device cuda "${kargs[@]}"
	rc=$?
	figs+="bench kernels (time per kernel family, CUDA events)=$(status_of $rc): logs/speed-kernels.log"$'\n'
	[ $rc = 0 ] || fails+="bench-kernels "
	if [ $quick = 1 ]; then cargs=(--model ncsnpp-tiny --batch 1 --reps 1 --max-shapes 3); else cargs=(--model ncsnpp-cifar10 --batch 128 --reps 5); fi
	from=$(lines speed-conv.log)
	# --tiles: both tiles of every pass in TF32 and BF16, the faster kept: logs/convtiles.json is the tile
	# table of this GPU and build, to commit as cuda/convtiles.json (docs/gpu.md, "The tile table")
	run speed-conv.log "$(cap 120)" "$bin/holdctl-cuda" bench conv --device cuda "${cargs[@]}" --peak-tf32 $peak_tf32 --tiles "$out/logs/convtiles.json"
	rc=$?
	figs+="bench conv (per-layer convolutions, holdgo's paths)=$(status_of $rc): logs/speed-conv.log; $(since speed-conv.log "$from" | grep -m1 'per training step')"$'\n'
	figs+="bench conv --tiles (logs/convtiles.json)=$(since speed-conv.log "$from" | grep 'with the table\|differs from the shape rule' | tr '\n' ';')"$'\n'
	[ $rc = 0 ] || fails+="bench-conv "
	if [ $rc = 0 ] && [ $have_torch = 1 ]; then
		"$bin/holdctl-cuda" bench conv --device cuda "${cargs[@]}" --reps 1 --json >"$out/logs/speed-conv.json" 2>>"$out/logs/speed-conv.log"
		from=$(lines speed-conv-torch.log)
		run speed-conv-torch.log "$(cap 120)" "$py" "$here/peer/peer_conv.py" "$out/logs/speed-conv.json" --device $peer_dev --reps 5
		rc=$?
		figs+="peer_conv (cuDNN on the same shapes)=$(status_of $rc): logs/speed-conv-torch.log; $(since speed-conv-torch.log "$from" | grep -m1 'per training step')"$'\n'
		[ $rc = 0 ] || fails+="peer-conv "
	fi

	# the rounds: holdgo first in odd rounds, PyTorch first in even ones
	declare -A rates=() missed=() per_step=() took=() # "MODEL holdgo|pytorch ROW" → images/s of each round, …
	round_s=() skipped= prof_need=0
	for ((r = 1; r <= rounds; r++)); do
		if [ $r -gt 1 ]; then
			longest=0
			for s in "${round_s[@]}"; do [ "$s" -le $longest ] || longest=$s; done
			if [ $(($(left) - 5)) -lt $((longest + prof_need)) ]; then
				skipped="rounds $r-$rounds skipped for time: $(left) s left before the deadline, a round took up to $longest s, the profiled steps need about $prof_need s"
				break
			fi
		fi
		rt=$(date +%s)
		for cfg in "${configs[@]}"; do
			read -r model batch ch gflop steps <<<"$cfg"
			if [ $((r % 2)) = 1 ]; then order="holdgo pytorch"; else order="pytorch holdgo"; fi
			for fw in $order; do
				if [ $fw = holdgo ]; then
					holdgo_round "$model" "$batch" "$ch" "$steps" $r
				elif [ $have_torch = 1 ]; then
					pytorch_round "$model" "$batch" "$steps" $r
				fi
			done
		done
		round_s+=($(($(date +%s) - rt)))
		if [ $r = 1 ]; then # the profiled steps: about round 1's first-model tf32 holdgo run and PyTorch run, and 10 s
			read -r model _ <<<"${configs[0]}"
			prof_need=$((${took["$model holdgo tf32 1"]:-0} + ${took["$model pytorch 1"]:-0} + 10))
		fi
	done
	ran=${#round_s[@]}
	figs+="rounds=$ran of $rounds, holdgo first in odd rounds and PyTorch first in even ones; seconds per round: ${round_s[*]}${skipped:+; $skipped}"$'\n'
	spent=
	for cfg in "${configs[@]}"; do
		read -r model _ <<<"$cfg"
		spent+="${spent:+; }$model holdgo tf32 ${took["$model holdgo tf32 1"]:-?}, bf16 ${took["$model holdgo bf16 1"]:-?}, strict ${took["$model holdgo strict 1"]:-?}"
		[ $have_torch = 0 ] || spent+=", pytorch ${took["$model pytorch 1"]:-?}"
	done
	figs+="round 1 seconds per run=$spent (start-up included)"$'\n'
	if [ $shim = 0 ]; then # the clocks once warm: a throttled or capped GPU shows here
		timeout 15 nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE >"$out/logs/nvidia-smi-q-after-rounds.txt" 2>&1
		figs+="clocks after the rounds=$(smi_identity "$out/logs/nvidia-smi-q-after-rounds.txt" | sed -n 's/^clocks=//p' | sed 's/, at the preflight//') (logs/nvidia-smi-q-after-rounds.txt)"$'\n'
	fi

	# per model: each row's median, min-max and rounds; holdgo/PyTorch from the medians, against 1.0×
	declare -A med=()
	nbars=0 npass=0 below= prof_mode=tf32
	read -r first_model _ <<<"${configs[0]}"
	for cfg in "${configs[@]}"; do
		read -r model batch ch gflop steps <<<"$cfg"
		meds_hg= meds_pt=
		for row in "holdgo tf32" "holdgo bf16" "holdgo strict" "pytorch tf32" "pytorch tf32-cl" "pytorch bf16-cl" "pytorch fp32"; do
			fw=${row%% *} p=${row#* }
			[ $fw = holdgo ] || [ $have_torch = 1 ] || continue
			key="$model $row"
			# shellcheck disable=SC2086 # the rounds' values, one word each
			read -r m lo hi n <<<"$(stats ${rates[$key]:-})"
			if [ -z "${m:-}" ]; then
				med[$key]=
				line="no run passed (${missed[$key]:-not run})"
			else
				med[$key]=$m
				line=$(awk -v m="$m" -v lo="$lo" -v hi="$hi" -v n="$n" -v r="$ran" 'BEGIN {
					printf "median %.1f images/s, min-max %.1f-%.1f over %d of %d rounds (spread %.1f %%)", m, lo, hi, n, r, 100 * (hi - lo) / m }')
				# shellcheck disable=SC2086
				line+="; rounds: $(fmt1 ${rates[$key]})"
				[ -z "${missed[$key]:-}" ] || line+="; failed: ${missed[$key]}"
				if [ $fw = holdgo ] && [ "$gflop" != 0 ]; then
					case $p in tf32) pk=$peak_tf32 ;; bf16) pk=$peak_bf16 ;; *) pk=$peak_fp32 ;; esac
					line+=$(awk -v r="$m" -v g="$gflop" -v p="$pk" 'BEGIN { f = r * g; printf "; ≈%.0f GFLOP/s at ≈%d GFLOP per image", f, g
						if (p > 0) printf " (%.1f %% of the %s TFLOP/s peak)", 100 * f / (p * 1000), p }')
				fi
				[ $fw != holdgo ] || [ -z "${per_step["$model $p"]:-}" ] || line+="; per step: ${per_step["$model $p"]}"
			fi
			figs+="$model batch $batch $fw $p=$line"$'\n'
			if [ $fw = holdgo ]; then meds_hg+="${meds_hg:+, }$p $(fmt1 "${med[$key]}")"; else meds_pt+="${meds_pt:+, }$p $(fmt1 "${med[$key]}")"; fi
		done
		figs+="$model batch $batch medians (images/s)=holdgo $meds_hg${meds_pt:+; pytorch $meds_pt}"$'\n'
		[ $have_torch = 1 ] || continue
		# tf32 against the better (by median) of tf32 and tf32-cl; bf16 against bf16-cl; strict against fp32
		ptf=tf32
		if [ -n "${med["$model pytorch tf32-cl"]:-}" ] && { [ -z "${med["$model pytorch tf32"]:-}" ] ||
			awk -v a="${med["$model pytorch tf32-cl"]}" -v b="${med["$model pytorch tf32"]}" 'BEGIN { exit !(a > b) }'; }; then
			ptf=tf32-cl
		fi
		[ "$model" != "$first_model" ] || prof_mode=$ptf # the row the profiled PyTorch step runs
		for pair in "tf32 $ptf" "bf16 bf16-cl" "strict fp32"; do
			read -r p q <<<"$pair"
			a=${med["$model holdgo $p"]:-} b=${med["$model pytorch $q"]:-}
			what="holdgo $p against pytorch $q"
			[ $p != tf32 ] || what+=" (the better median of tf32 and tf32-cl)"
			if [ -z "$a" ] || [ -z "$b" ]; then
				figs+="$model batch $batch $p holdgo/pytorch=n/a: no median for $([ -z "$a" ] && echo "holdgo $p" || echo "pytorch $q")"$'\n'
				continue
			fi
			ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
			nbars=$((nbars + 1))
			if awk -v a="$a" -v b="$b" 'BEGIN { exit !(a >= b) }'; then
				bar="pass (≥ 1.0×)"
				npass=$((npass + 1))
			else
				bar="fail (< 1.0×)"
				below+="${below:+, }$model $p ${ratio}×"
			fi
			figs+="$model batch $batch $p holdgo/pytorch=${ratio}× from the medians, $what: $bar"$'\n'
		done
	done

	# one profiled step of each framework: ncsnpp-cifar10 (--quick: the tiny model) at tf32
	read -r model batch ch gflop steps <<<"${configs[0]}"
	log=speed-profile-holdgo.log
	from=$(lines "$log")
	run "$log" "$(cap 120)" "$bin/holdctl-cuda" bench train --device cuda --model "$model" --batch "$batch" --channels "$ch" \
		--steps "$([ $quick = 1 ] && echo 1 || echo 2)" --precision tf32 --profile
	rc=$?
	pline=$(since "$log" "$from" | grep -m1 '^ *profiled step:' | sed 's/^ *profiled step: *//')
	if [ $rc = 0 ] && [ -n "$pline" ]; then
		figs+="$model batch $batch tf32 profiled step, holdgo=$pline (by kernel family: logs/$log)"$'\n'
	elif [ $rc = 2 ] && since "$log" "$from" | grep -q 'not defined: -profile'; then # a holdctl-cuda from before --profile
		figs+="$model batch $batch tf32 profiled step, holdgo=not available: this holdctl-cuda has no bench train --profile (logs/$log)"$'\n'
	else
		fails+="holdgo-profile "
		figs+="$model batch $batch tf32 profiled step, holdgo=$(status_of $rc)$([ $rc = 0 ] && echo ': no "profiled step:" line') (logs/$log)"$'\n'
	fi
	if [ $have_torch = 1 ]; then
		log=speed-profile-pytorch.log
		from=$(lines "$log")
		run "$log" "$(cap 180)" "$py" "$here/peer/peer_train.py" --model "$model" --batch "$batch" --steps 1 \
			--device $peer_dev --modes "$prof_mode" --profile
		rc=$?
		pline=$(since "$log" "$from" | grep -m1 '^profiled step:' | sed 's/^profiled step: *//')
		if [ $rc = 0 ] && [ -n "$pline" ]; then
			figs+="$model batch $batch tf32 profiled step, pytorch=$pline (torch.profiler's top 25 operators: logs/$log)"$'\n'
		else
			fails+="pytorch-profile "
			figs+="$model batch $batch tf32 profiled step, pytorch=$(status_of $rc)$([ $rc = 0 ] && echo ': no "profiled step:" line') (logs/$log)"$'\n'
		fi
	fi

	if [ -z "$fails" ]; then st=pass; note="holdgo and PyTorch timed on the same device"; else st=fail; note="failed: $fails"; fi
	note+="; $ran of $rounds interleaved rounds"
	[ -z "$skipped" ] || note+=" (the rest skipped for time)"
	[ $nbars = 0 ] || note+="; holdgo ≥ 1.0× PyTorch on $npass of $nbars rows${below:+ (below: $below)}"
	[ $shim = 1 ] && note+=" (host shim: CPU times, plumbing only)"
	record speed $st $(($(date +%s) - t0)) "$note" "$figs"
else
	record speed skipped 0 "not run (--skip speed)"
fi

# --- pack: the results in a few files of at most 16 MiB each ------------------------------------------
if [ -n "$pack" ]; then
	(
		cd "$out" || exit 1
		shopt -s nullglob
		tar czf "$pack/report.tgz" report.md report.json logs models/*.figs models/*.fails models/*.png models/*/log.csv models/*/config.yaml
		for sde in hold cld vp; do
			ms=(models/"$sde"-ema models/"$sde"-step*-ema)
			[ ${#ms[@]} = 0 ] || tar czf "$pack/models-$sde.tgz" "${ms[@]}"
			cs=(models/"$sde"-*.npy)
			[ ${#cs[@]} = 0 ] || tar czf "$pack/cells-$sde.tgz" "${cs[@]}"
		done
	)
	for f in "$pack"/*.tgz; do
		[ "$(stat -c %s "$f")" -le $((16 << 20)) ] || echo "run.sh: $f is over 16 MiB" >&2
	done
	echo "run.sh: packed into $pack: $(cd "$pack" && ls -- *.tgz | tr '\n' ' ')" >&2
fi

for s in "${statuses[@]}"; do [ "$s" = pass ] || [ "$s" = skipped ] || exit 1; done
exit 0
