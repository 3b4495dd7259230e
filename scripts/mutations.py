#!/usr/bin/env python3
"""Replays the mutations that prove holdgo's sensitive tests (issue 17, item 6).

Each mutation changes one term of production code slightly (a backward rule by 0.1 %, a likelihood
term by 2 %, the EMA warm-up by one update, a generic vec/gemm kernel, a literal of the paper's
mixture), runs the test that must catch it, and restores the file. The run fails (exit 1) if any
mutation survives, or if a pattern no longer matches exactly once (the code moved: update the list).

    python3 scripts/mutations.py            # all (a few minutes: one go test per mutation)
    python3 scripts/mutations.py Conv2d     # only mutations whose label contains "Conv2d"

Run from a clean checkout (it refuses to start when tracked files are modified). Standard library only.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MUTATIONS = json.loads(r"""
[
 {
  "label": "restore: toC 0.1 % too large (the split of u into c)",
  "file": "restore/gauge.go",
  "old": "s += g.toC[k] * res[k]",
  "new": "s += 1.001 * g.toC[k] * res[k]",
  "pkg": "./restore",
  "run": "TestHOLDIsVP|TestDenoiseStart",
  "tags": ""
 },
 {
  "label": "restore: DDNM+'s λ_j 0.1 % too large",
  "file": "restore/restore.go",
  "old": "lam := sv[j] * sn * tail / pr.SigmaY",
  "new": "lam := 1.001 * sv[j] * sn * tail / pr.SigmaY",
  "pkg": "./restore",
  "run": "TestHOLDIsVP",
  "tags": ""
 },
 {
  "label": "restore: DPS weight 0.1 % too large",
  "file": "restore/restore.go",
  "old": "f := -m.DPSScale * math.Sqrt(1+s*s) * math.Sqrt(1+sn*sn)",
  "new": "f := -1.001 * m.DPSScale * math.Sqrt(1+s*s) * math.Sqrt(1+sn*sn)",
  "pkg": "./restore",
  "run": "TestHOLDIsVP",
  "tags": ""
 },
 {
  "label": "restore baselines: the prior mean 0.1 % too large",
  "file": "restore/baseline.go",
  "old": "mean[j] /= float64(n)\n",
  "new": "mean[j] /= float64(n) / 1.001\n",
  "pkg": "./restore",
  "run": "TestBaselinesMatchNumpy",
  "tags": ""
 },
 {
  "label": "σ-matched times: t(σ) 0.1 % too late",
  "file": "hold/noiselevel.go",
  "old": "return min(max(math.Exp(lt), m.TLo), m.THi)",
  "new": "return min(max(1.001*math.Exp(lt), m.TLo), m.THi)",
  "pkg": "./train",
  "run": "TestSigmaTimesEDM",
  "tags": ""
 },
 {
  "label": "σ-map: t(σ) 0.1 % too late (hold's own check)",
  "file": "hold/noiselevel.go",
  "old": "return min(max(math.Exp(lt), m.TLo), m.THi)",
  "new": "return min(max(1.001*math.Exp(lt), m.TLo), m.THi)",
  "pkg": "./hold",
  "run": "TestSigmaMap",
  "tags": ""
 },
 {
  "label": "EDM preconditioning: c_skip 0.1 % high",
  "file": "hold/precond.go",
  "old": "\tp.CSkip = sd2 / (sigma2 + sd2)",
  "new": "\tp.CSkip = 1.001 * sd2 / (sigma2 + sd2)",
  "pkg": "./hold",
  "run": "TestEDMPrecondOracle",
  "tags": ""
 },
 {
  "label": "EDM preconditioning: c_out 0.1 % high",
  "file": "hold/precond.go",
  "old": "\tp.COut = p.Sigma * sigmaData * p.CIn",
  "new": "\tp.COut = 1.001 * p.Sigma * sigmaData * p.CIn",
  "pkg": "./hold",
  "run": "TestEDMPrecondOracle",
  "tags": ""
 },
 {
  "label": "EDM-preconditioned VJP: the input map pulled back transposed",
  "file": "train/objective.go",
  "old": "v += p.In[k][j] * float64(gv[base+k*d+i])",
  "new": "v += p.In[j][k] * float64(gv[base+k*d+i])",
  "pkg": "./train",
  "run": "TestNetworkScorerVJP",
  "tags": ""
 },
 {
  "label": "parallel governor: every loop's gain counts again, short ones included",
  "file": "internal/parallel/governor.go",
  "old": "if serialEst >= minGainLoop {",
  "new": "if serialEst >= 0 {",
  "pkg": "./internal/parallel",
  "run": "TestGovernorIgnoresShortLoopsGain",
  "tags": ""
 },
 {
  "label": "AVX2 prefetching microkernel (rows-first in-place A): the B row's second vector read one float on",
  "file": "internal/gemm/kernel_amd64.s",
  "old": "kernAVX2PF_loop:\n\tPREFETCHT0 512(DX)\n\tPREFETCHT1 0(R14)\n\tADDQ $64, R14\n\tVMOVUPS 0(DX), Y12\n\tVMOVUPS 32(DX), Y13",
  "new": "kernAVX2PF_loop:\n\tPREFETCHT0 512(DX)\n\tPREFETCHT1 0(R14)\n\tADDQ $64, R14\n\tVMOVUPS 0(DX), Y12\n\tVMOVUPS 36(DX), Y13",
  "pkg": "./internal/gemm",
  "run": "TestTinyBlocks",
  "tags": ""
 },
 {
  "label": "AVX-512 prefetching microkernel (rows-first in-place A): the B row's first vector read one float on",
  "file": "internal/gemm/kernel_amd64.s",
  "old": "kernAVX512PF_loop:\n\tPREFETCHT0 1024(DX)\n\tPREFETCHT0 1088(DX)\n\tPREFETCHT1 0(R14)\n\tADDQ $64, R14\n\tVMOVUPS 0(DX), Z24",
  "new": "kernAVX512PF_loop:\n\tPREFETCHT0 1024(DX)\n\tPREFETCHT0 1088(DX)\n\tPREFETCHT1 0(R14)\n\tADDQ $64, R14\n\tVMOVUPS 4(DX), Z24",
  "pkg": "./internal/gemm",
  "run": "TestTinyBlocks",
  "tags": ""
 },
 {
  "label": "bench ncsnpp --rounds: the speed-up taken as the ratio of the medians, not the median of the rounds' ratios",
  "file": "bench/ncsnpp.go",
  "old": "\tif len(pr) >= 2 && len(pr) == len(hr) {",
  "new": "\tif len(pr) >= 2 && len(pr) == len(hr)+1 {",
  "pkg": "./bench",
  "run": "TestMergeRoundsMedianRatio",
  "tags": ""
 },
 {
  "label": "GEMM rows-first sweep of an in-place A: the last column panel skipped",
  "file": "internal/gemm/gemm.go",
  "old": "\t\t\tfor jr := 0; jr < nc; jr += nr {\n\t\t\t\ttile(jr, ir)",
  "new": "\t\t\tfor jr := 0; jr < nc-nr; jr += nr {\n\t\t\t\ttile(jr, ir)",
  "pkg": "./internal/gemm",
  "run": "TestTinyBlocks",
  "tags": ""
 },
 {
  "label": "AVX2 packB, blocked order (rows ≥ 2 KiB apart): each block written one row down its panel",
  "file": "internal/gemm/kernel_amd64.go",
  "old": "panel := dst[r*kc+k0*16 : r*kc+(k0+rows)*16]",
  "new": "panel := dst[r*kc+k0*16+16 : r*kc+(k0+rows)*16+16]",
  "pkg": "./internal/gemm",
  "run": "TestPackers",
  "tags": ""
 },
 {
  "label": "vplambda grid: VP's share of the step density 0.1 % off",
  "file": "sample/grid.go",
  "old": "if 0.5*mid+0.5*(lam(mid)-l0)/(l1-l0) < target {",
  "new": "if 0.5005*mid+0.5*(lam(mid)-l0)/(l1-l0) < target {",
  "pkg": "./sample",
  "run": "TestSDEGrids",
  "tags": ""
 },
 {
  "label": "aligned-gauge likelihood: the Jacobian's log σ term 0.1 % off",
  "file": "sample/likelihood_aligned.go",
  "old": "s := -math.Log(g.sigma)",
  "new": "s := -1.001 * math.Log(g.sigma)",
  "pkg": "./sample",
  "run": "TestAlignedNLLMatchesKernel",
  "tags": ""
 },
 {
  "label": "aligned-gauge likelihood: the divergence of the c-flow 0.1 % off",
  "file": "sample/likelihood_aligned.go",
  "old": "div[b] *= -1 / rm",
  "new": "div[b] *= -1.001 / rm",
  "pkg": "./sample",
  "run": "TestAlignedNLLMatchesKernel",
  "tags": ""
 },
 {
  "label": "a panic on a pool worker bypasses the panic handler (Go's exit 2, not holdctl's 3)",
  "file": "internal/parallel/parallel.go",
  "old": "func worker() {\n\tdefer guard()",
  "new": "func worker() {",
  "pkg": "./internal/parallel",
  "run": "TestWorkerPanicReachesHandler",
  "tags": ""
 },
 {
  "label": "tape recycling frees a storage after its first reader in the sweep, not its last",
  "file": "autograd/recycle.go",
  "old": "e.last = min(e.last, i)",
  "new": "e.last = max(e.last, i)",
  "pkg": "./autograd",
  "run": "TestRecycle",
  "tags": ""
 },
 {
  "label": "tape recycling frees the sweep's output",
  "file": "autograd/recycle.go",
  "old": "kept := map[any]bool{out.T.Storage(): true}",
  "new": "kept := map[any]bool{}",
  "pkg": "./autograd",
  "run": "TestRecycle",
  "tags": ""
 },
 {
  "label": "bench ncsnpp leaves PyTorch's malloc untuned",
  "file": "bench/ncsnpp.go",
  "old": "cmd.Env = append(cmd.Env, kv)",
  "new": "_ = kv",
  "pkg": "./cmd/holdctl",
  "run": "TestCLIBenchNCSNppTorchBestOf",
  "tags": ""
 },
 {
  "label": "bench ncsnpp keeps PyTorch's slowest oneDNN ISA",
  "file": "bench/ncsnpp.go",
  "old": "case r.MsPerImage < best[i].MsPerImage:",
  "new": "case r.MsPerImage > best[i].MsPerImage:",
  "pkg": "./cmd/holdctl",
  "run": "TestCLIBenchNCSNppTorchBestOf",
  "tags": ""
 },
 {
  "label": "sampler workers share one network scorer (no forks)",
  "file": "sample/sampler.go",
  "old": "if f, ok := s.Score.(Forker); ok && k > 0 {",
  "new": "if f, ok := s.Score.(Forker); ok && k > 99 {",
  "pkg": "./train",
  "run": "TestNetworkScorerForkSamples",
  "tags": ""
 },
 {
  "label": "radix sort skips a byte most (not all) keys share",
  "file": "metrics/radix.go",
  "old": "if int(c[byte(keys[0]>>shift)]) == n {",
  "new": "if int(c[byte(keys[0]>>shift)]) >= n-1 {",
  "pkg": "./metrics",
  "run": "TestSortFloats",
  "tags": ""
 },
 {
  "label": "local all-reduce: each rank skips the last element of its part",
  "file": "dist/local.go",
  "old": "lo, hi := l.rank*n/g.size, (l.rank+1)*n/g.size",
  "new": "lo, hi := l.rank*n/g.size, max(l.rank*n/g.size, (l.rank+1)*n/g.size-1)",
  "pkg": "./dist",
  "run": "TestLocalAllreduce",
  "tags": ""
 },
 {
  "label": "local broadcast: root's buffer copied from the last rank",
  "file": "dist/local.go",
  "old": "copy(buf, l.g.bufs[root].([]T))",
  "new": "copy(buf, l.g.bufs[l.g.size-1].([]T))",
  "pkg": "./dist",
  "run": "TestLocalBcast",
  "tags": ""
 },
 {
  "label": "CPU sine: the odd quadrants' mask off (sin where cos is due)",
  "file": "internal/vec/sin.go",
  "old": "odd := -(q & 1) // all ones for odd q",
  "new": "odd := -(q & 1) & 0 // all ones for odd q",
  "pkg": "./internal/vec",
  "run": "TestSin$",
  "tags": ""
 },
 {
  "label": "parallel governor contended below 60 % instead of 80 %",
  "file": "internal/parallel/governor.go",
  "old": "contended := c >= 0 && c*5 < w*4",
  "new": "contended := c >= 0 && c*5 < w*3",
  "pkg": "./internal/parallel",
  "run": "TestGovernorContendedCaller",
  "tags": ""
 },
 {
  "label": "parallel governor keeps splitting loops that lose time",
  "file": "internal/parallel/governor.go",
  "old": "if gain >= 0 && !contended {",
  "new": "if gain <= 0 && !contended {",
  "pkg": "./internal/parallel",
  "run": "TestGovernorBacksOffAndRecovers|TestForStopsSplittingWhenWorkersStall",
  "tags": ""
 },
 {
  "label": "Exp dx=dy·y ×1.001",
  "file": "autograd/ops.go",
  "old": "func(d, _, y, dy *tensor.Tensor) { tensor.Mul(d, dy, y) }, y)",
  "new": "func(d, _, y, dy *tensor.Tensor) { tensor.MulScalar(d, tensor.Mul(d, dy, y), 1.001) }, y)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Log dx=dy/x ×1.001",
  "file": "autograd/ops.go",
  "old": "tensor.Div(d, dy, x) }, x.T)",
  "new": "tensor.MulScalar(d, tensor.Div(d, dy, x), 1.001) }, x.T)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Sqrt 0.5→0.5005",
  "file": "autograd/ops.go",
  "old": "tensor.Div(d, dy, y), 0.5)",
  "new": "tensor.Div(d, dy, y), 0.5005)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Square 2→2.002",
  "file": "autograd/ops.go",
  "old": "tensor.Mul(d, dy, x), 2)",
  "new": "tensor.Mul(d, dy, x), 2.002)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "MulScalar s→1.001s",
  "file": "autograd/ops.go",
  "old": "tensor.MulScalar(d, dy, s)",
  "new": "tensor.MulScalar(d, dy, s*1.001)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Mul da ×1.001",
  "file": "autograd/ops.go",
  "old": "g.accum(a, tensor.Mul(g.tmp(dy.Shape()...), dy, b.T))",
  "new": "g.accum(a, tensor.MulScalar(nil, tensor.Mul(g.tmp(dy.Shape()...), dy, b.T), 1.001))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Div da ×1.001",
  "file": "autograd/ops.go",
  "old": "g.accum(a, tensor.Div(g.tmp(dy.Shape()...), dy, b.T))",
  "new": "g.accum(a, tensor.MulScalar(nil, tensor.Div(g.tmp(dy.Shape()...), dy, b.T), 1.001))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Div db ×1.001",
  "file": "autograd/ops.go",
  "old": "g.accum(b, tensor.Neg(d, d))",
  "new": "g.accum(b, tensor.MulScalar(d, d, -1.001))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Sub db ×1.001",
  "file": "autograd/ops.go",
  "old": "g.accum(b, tensor.Neg(g.tmp(dy.Shape()...), dy))",
  "new": "g.accum(b, tensor.MulScalar(g.tmp(dy.Shape()...), dy, -1.001))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Sigmoid ref dy·y(1−y) ×1.001",
  "file": "tensor/optable.go",
  "old": "return b * a * (1 - a)",
  "new": "return 1.001 * b * a * (1 - a)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Sigmoid cpu dy·y(1−y) ×1.001",
  "file": "tensor/cpu.go",
  "old": "o[i] = dy[i] * v * (1 - v)",
  "new": "o[i] = 1.001 * dy[i] * v * (1 - v)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Tanh ref term y² ×1.001",
  "file": "tensor/optable.go",
  "old": "return b * (1 - a*a)",
  "new": "return b * (1 - 1.001*a*a)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Tanh cpu term y² ×1.001",
  "file": "tensor/cpu.go",
  "old": "o[i] = dy[i] * (1 - v*v)",
  "new": "o[i] = dy[i] * (1 - 1.001*v*v)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "SiLU ref term x(1−σ) ×1.001",
  "file": "tensor/optable.go",
  "old": "return b * sg * (1 + a*(1-sg))",
  "new": "return b * sg * (1 + 1.001*a*(1-sg))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Sum scale 1→1.001",
  "file": "autograd/ops.go",
  "old": "g.broadcastAccum(x, dy, 1)",
  "new": "g.broadcastAccum(x, dy, 1.001)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Mean scale ×1.001",
  "file": "autograd/ops.go",
  "old": "g.broadcastAccum(x, dy, scale)",
  "new": "g.broadcastAccum(x, dy, scale*1.001)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Max mask·dy ×1.001",
  "file": "autograd/ops.go",
  "old": "g.accum(x, tensor.Mul(mask, mask, dy))",
  "new": "g.accum(x, tensor.MulScalar(mask, tensor.Mul(mask, mask, dy), 1.001))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "MatMul dA (no trans) ×1.001",
  "file": "autograd/ops.go",
  "old": "g.matAcc(a, dy, b.T, false, !transB)",
  "new": "g.matAcc(a, dy, tensor.MulScalar(nil, b.T, 1.001), false, !transB)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "MatMul dB (transB) ×1.001",
  "file": "autograd/ops.go",
  "old": "g.matAcc(b, dy, a.T, true, transA)",
  "new": "g.matAcc(b, dy, tensor.MulScalar(nil, a.T, 1.001), true, transA)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Linear db ×1.001",
  "file": "autograd/ops.go",
  "old": "g.accum(b, tensor.Sum(g.tmp(1, outDim), dy2, 0).Reshape(outDim))",
  "new": "g.accum(b, tensor.MulScalar(nil, tensor.Sum(g.tmp(1, outDim), dy2, 0), 1.001).Reshape(outDim))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Conv2d ref dx ×1.001",
  "file": "tensor/ref_image.go",
  "old": "acc[xi] += float64(g[yi]) * float64(wd[wi])",
  "new": "acc[xi] += 1.001 * float64(g[yi]) * float64(wd[wi])",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Conv2d ref dw ×1.001",
  "file": "tensor/ref_image.go",
  "old": "acc[wi] += float64(g[yi]) * float64(xd[xi])",
  "new": "acc[wi] += 1.001 * float64(g[yi]) * float64(xd[xi])",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Conv2d db ×1.001 (the CPU's fused bias gradient)",
  "file": "tensor/cpu_conv.go",
  "old": "\t\tdb.data[i] += v\n",
  "new": "\t\tdb.data[i] += 1.001 * v\n",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Conv2d ref db ×1.001 (Conv2dGradWeightBias)",
  "file": "tensor/ref_image.go",
  "old": "sum[i/p%len(db)] += float64(v)",
  "new": "sum[i/p%len(db)] += 1.001 * float64(v)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Conv2dTwoBias: the per-sample bias's gradient ×1.001",
  "file": "autograd/conv.go",
  "old": "tensor.Sum(gs.Reshape(shape[0], shape[1], 1, 1), dy, 2, 3)\n",
  "new": "tensor.MulScalar(gs, tensor.Sum(gs.Reshape(shape[0], shape[1], 1, 1), dy, 2, 3).Reshape(shape[0], shape[1]), 1.001)\n",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Conv2dTwoBias: the CPU's sum of the two biases 0.1 % off",
  "file": "tensor/cpu_conv.go",
  "old": "bias.data[i] = v + b[i%len(b)]",
  "new": "bias.data[i] = v + 1.001*b[i%len(b)]",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "AddScaled: the CPU's scale 0.1 % off",
  "file": "tensor/cpu_fused.go",
  "old": "vec.Scale(o[lo:hi], o[lo:hi], s)",
  "new": "vec.Scale(o[lo:hi], o[lo:hi], 1.001*s)",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "hg_add_scaled: the scale 0.1 % off",
  "file": "kernels/elementwise.cu",
  "old": "y[i] = t * s;",
  "new": "y[i] = t * (1.001f * s);",
  "pkg": "./cuda",
  "run": "TestShimBackendTable",
  "tags": "cudashim"
 },
 {
  "label": "hg_conv: the forward epilogue's bias 0.1 % too large",
  "file": "kernels/conv.cu",
  "old": "if (biasMode == 1) v += bias[m];",
  "new": "if (biasMode == 1) v += 1.001f * bias[m];",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "hg_conv: the residual join's skip scale 0.1 % too large (Conv_1's epilogue)",
  "file": "kernels/conv.cu",
  "old": "v = t * scale;",
  "new": "v = t * (1.001f * scale);",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "Conv2dResidual: the CPU's skip scale 0.1 % too large",
  "file": "tensor/cpu_conv.go",
  "old": "\t\t\tvec.Scale(o[lo:hi], o[lo:hi], s)\n\t\t})\n\tcase OpConv2dGradInput:",
  "new": "\t\t\tvec.Scale(o[lo:hi], o[lo:hi], 1.001*s)\n\t\t})\n\tcase OpConv2dGradInput:",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Conv2dResidual: the tape's backward scale ×1.001",
  "file": "autograd/conv.go",
  "old": "d := tensor.MulScalar(gr, dy, s)",
  "new": "d := tensor.MulScalar(gr, dy, 1.001*s)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "hg_conv: Conv_0's two biases, the per-channel one 0.1 % too large",
  "file": "kernels/conv.cu",
  "old": "else if (biasMode == 3) v += bias2[n * s.O + m] + bias[m];",
  "new": "else if (biasMode == 3) v += bias2[n * s.O + m] + 1.001f * bias[m];",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "hg_conv f32: the weight gradient's bias sum 0.1 % too large",
  "file": "kernels/conv.cu",
  "old": "if (biasSum) bsum[i] += (double)ra[i];",
  "new": "if (biasSum) bsum[i] += 1.001 * (double)ra[i];",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "hg_conv_splitk: the bias sums' splits 0.1 % too large",
  "file": "kernels/conv.cu",
  "old": "for (int z = 0; z < splits; z++) t += (double)p[(long long)z * nb];",
  "new": "for (int z = 0; z < splits; z++) t += 1.001 * (double)p[(long long)z * nb];",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "hg_conv tf32: fragment a1 loaded from a2's place",
  "file": "kernels/conv.cu",
  "old": "a[mt][1] = hg_tf32(As[st][k8 + q][r + 8]);",
  "new": "a[mt][1] = hg_tf32(As[st][k8 + q + 4][r]);",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "warp.cuh: the emulation reads A's registers in the wrong order",
  "file": "kernels/warp.cuh",
  "old": "[(row >> 3) + 2 * (k >> 2)]",
  "new": "[2 * (row >> 3) + (k >> 2)]",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "warp.cuh: TF32 truncates instead of rounding to nearest",
  "file": "kernels/warp.cuh",
  "old": "u += 0x1000u;",
  "new": "u += 0u;",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "warp.cuh: the BF16 emulation reads A's registers in the wrong order",
  "file": "kernels/warp.cuh",
  "old": "[(row >> 3) + 2 * (k >> 3)], k & 1)",
  "new": "[2 * (row >> 3) + (k >> 3)], k & 1)",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "warp.cuh: the BF16 emulation reads A's register halves swapped (B's right; both swapped is the same sum)",
  "file": "kernels/warp.cuh",
  "old": "[(row >> 3) + 2 * (k >> 3)], k & 1)",
  "new": "[(row >> 3) + 2 * (k >> 3)], (k & 1) ^ 1)",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "warp.cuh: BF16 breaks ties away from zero instead of to even",
  "file": "kernels/warp.cuh",
  "old": "u += 0x7fffu + ((u >> 16) & 1u);",
  "new": "u += 0x8000u;",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "hg_conv bf16: A fragment registers 1 and 2 swapped",
  "file": "kernels/conv.cu",
  "old": "a[mt][1] = hg_bf16x2(As[st][2 * q][r + 8], As[st][2 * q + 1][r + 8]);",
  "new": "a[mt][1] = hg_bf16x2(As[st][2 * q + 8][r], As[st][2 * q + 9][r]);",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "hg_conv bf16: B fragment's second register from the first's k rows",
  "file": "kernels/conv.cu",
  "old": "b[nt][1] = hg_bf16x2(Bs[st][2 * q + 8][c], Bs[st][2 * q + 9][c]);",
  "new": "b[nt][1] = hg_bf16x2(Bs[st][2 * q][c], Bs[st][2 * q + 1][c]);",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "hg_conv bf16: A's k pair packed high-low (B's right)",
  "file": "kernels/conv.cu",
  "old": "a[mt][0] = hg_bf16x2(As[st][2 * q][r], As[st][2 * q + 1][r]);",
  "new": "a[mt][0] = hg_bf16x2(As[st][2 * q + 1][r], As[st][2 * q][r]);",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "hg_conv pipeline: waits for one group too few (reads a stage before its copies land)",
  "file": "kernels/conv.cu",
  "old": "hg_cp_async_wait<STAGES - 2>();",
  "new": "hg_cp_async_wait<STAGES - 1>();",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "hg_conv pipeline: no barrier between the copies landing and the fragment reads",
  "file": "kernels/conv.cu",
  "old": "__syncthreads();                // everyone's have, and step it − 1's stage is free",
  "new": "                                // everyone's have, and step it − 1's stage is free",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "hg_conv pipeline: the next step issued into the stage being read",
  "file": "kernels/conv.cu",
  "old": "issue(next % STAGES, kb + next * BK);",
  "new": "issue(it % STAGES, kb + next * BK);",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "hg_conv mma: the weight gradient's bias sum 0.1 % too large",
  "file": "kernels/conv.cu",
  "old": "for (int i = 0; i < NA; i++) bsum[i] += (double)As[st][ld.kA][ld.aRow(i)];",
  "new": "for (int i = 0; i < NA; i++) bsum[i] += 1.001 * (double)As[st][ld.kA][ld.aRow(i)];",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "hg_conv tf32: a B fragment value read without rounding to TF32 (the tensor core truncates)",
  "file": "kernels/conv.cu",
  "old": "b[nt][0] = hg_tf32(Bs[st][k8 + q][c]);",
  "new": "b[nt][0] = Bs[st][k8 + q][c];",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "conv opt-in: the device records one byte less than it opted in to",
  "file": "cuda/launch.go",
  "old": "\td.optIn[name] = bytes\n",
  "new": "\td.optIn[name] = bytes - 1\n",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
{
  "label": "conv opt-in: no fall-back to the 64 tile where the backend refuses",
  "file": "cuda/conv.go",
  "old": "if p.tile == 128 && !d.optInShared(",
  "new": "if p.tile == 128 && false && !d.optInShared(",
  "pkg": "./cuda",
  "run": "TestConvPlanSharedOptIn",
  "tags": ""
 },
{
  "label": "fast division: the magic multiplier rounded down instead of up",
  "file": "cuda/ops.go",
  "old": "m := (uint64(1)<<(31+l) + uint64(d) - 1) / uint64(d)",
  "new": "m := (uint64(1) << (31 + l)) / uint64(d)",
  "pkg": "./cuda",
  "run": "TestFastDivisor",
  "tags": ""
 },
{
  "label": "hg_strided_copy: an index digit off by one where the quotient is used",
  "file": "kernels/layout.cu",
  "old": "const unsigned c = rest - q * (unsigned)d[k];\n\t\t\trest = q;\n\t\t\tos +=",
  "new": "const unsigned c = rest - q * (unsigned)d[k];\n\t\t\trest = q + (q > 2);\n\t\t\tos +=",
  "pkg": "./cuda",
  "run": "TestShimKernels/op_table",
  "tags": "cudashim"
 },
 {
  "label": "cuda: the bf16 precision runs the TF32 convolution kernels",
  "file": "cuda/conv.go",
  "old": "case d.BF16:\n\t\treturn convBF16",
  "new": "case d.BF16:\n\t\treturn convTF32",
  "pkg": "./cuda",
  "run": "TestShimKernels/conv",
  "tags": "cudashim"
 },
 {
  "label": "cublas: BF16 GEMMs with compute type 74 (FAST_16F) instead of 75 (FAST_16BF)",
  "file": "cuda/internal/cublas/cublas.go",
  "old": "&beta, (void*)c, 0, ldc, sc, batch, 75, -1);",
  "new": "&beta, (void*)c, 0, ldc, sc, batch, 74, -1);",
  "pkg": "./cuda/internal/cublas",
  "run": "TestHandleSgemm",
  "tags": "dynlib"
 },
 {
  "label": "train: --precision bf16 leaves the device in tf32",
  "file": "cuda/device.go",
  "old": "d.StrictFP32, d.BF16 = p == \"strict\", p == \"bf16\"",
  "new": "d.StrictFP32, d.BF16 = p == \"strict\", false",
  "pkg": "./train",
  "run": "TestShimRunPrecision",
  "tags": "cudashim"
 },
 {
  "label": "Conv2d dx (autograd: dy ×1.001)",
  "file": "autograd/conv.go",
  "old": "tensor.Conv2dGradInput(gx, dy, w.T, stride, pad, beta)",
  "new": "tensor.Conv2dGradInput(gx, tensor.MulScalar(nil, dy, 1.001), w.T, stride, pad, beta)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNorm ref dx term mean(g) ×1.001",
  "file": "tensor/ref_image.go",
  "old": "v := rstd[ng] * (gv - mg - h*mgx)",
  "new": "v := rstd[ng] * (gv - 1.001*mg - h*mgx)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNorm ref dx term x̂·mean(g·x̂) ×1.001",
  "file": "tensor/ref_image.go",
  "old": "v := rstd[ng] * (gv - mg - h*mgx)",
  "new": "v := rstd[ng] * (gv - mg - 1.001*h*mgx)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNorm cpu dx term x̂·mean(g·x̂) ×1.001",
  "file": "tensor/cpu_norm.go",
  "old": "coef[0], coef[1], coef[2] = r64*float64(gamma[ch]), -r64*r64*mgx, r64*(m64*r64*mgx-mg)",
  "new": "coef[0], coef[1], coef[2] = r64*float64(gamma[ch]), -1.001*r64*r64*mgx, r64*(m64*r64*1.001*mgx-mg)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNorm ref dγ ×1.001",
  "file": "tensor/ref_image.go",
  "old": "acc[ch] += dz[i] * h",
  "new": "acc[ch] += 1.001 * dz[i] * h",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNorm ref dβ ×1.001",
  "file": "tensor/ref_image.go",
  "old": "acc[c+ch] += dz[i]",
  "new": "acc[c+ch] += 1.001 * dz[i]",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNorm cpu forward scale rstd·γ ×1.001",
  "file": "tensor/cpu_norm.go",
  "old": "a := float64(rstd[ng] * gamma[ch])",
  "new": "a := 1.001 * float64(rstd[ng]*gamma[ch])",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "GroupNorm cpu forward: the offset β − μ·a rounded to float32",
  "file": "tensor/cpu_norm.go",
  "old": "vec.Affine64(dst, src, a, float64(beta[ch])-mean64[ng]*a)",
  "new": "vec.Affine64(dst, src, a, float64(beta[ch]-float32(mean64[ng]*a)))",
  "pkg": "./tensor",
  "run": "TestGroupNormLargeMean",
  "tags": ""
 },
 {
  "label": "vec.Affine64 reference (generic level): a ×1.001",
  "file": "internal/vec/ref.go",
  "old": "dst[i] = float32(math.FMA(a, float64(v), c))",
  "new": "dst[i] = float32(math.FMA(1.001*a, float64(v), c))",
  "pkg": "./internal/vec",
  "run": "TestIndependentAffine64",
  "tags": ""
 },
 {
  "label": "vec.Affine64 (AVX2): the loop's first vector gets a for c",
  "file": "internal/vec/kernel_amd64.s",
  "old": "affine64AVX2_loop:\n\tVCVTPS2PD 0(SI)(BX*4), Y0\n\tVFMADD213PD Y9, Y8, Y0",
  "new": "affine64AVX2_loop:\n\tVCVTPS2PD 0(SI)(BX*4), Y0\n\tVFMADD213PD Y8, Y8, Y0",
  "pkg": "./internal/vec",
  "run": "TestIndependentAffine64",
  "tags": ""
 },
 {
  "label": "vec.Affine64 (AVX-512): the loop's first vector gets a for c",
  "file": "internal/vec/kernel_amd64.s",
  "old": "affine64AVX512_loop:\n\tVCVTPS2PD 0(SI)(BX*4), Z0\n\tVFMADD213PD Z9, Z8, Z0",
  "new": "affine64AVX512_loop:\n\tVCVTPS2PD 0(SI)(BX*4), Z0\n\tVFMADD213PD Z8, Z8, Z0",
  "pkg": "./internal/vec",
  "run": "TestIndependentAffine64",
  "tags": ""
 },
 {
  "label": "GroupNorm cpu gradient sums (vec.SumDotDev, AVX2): the fourth partial product drops its centring",
  "file": "internal/vec/kernel_amd64.s",
  "old": "VFMADD231PD Y11, Y9, Y7",
  "new": "VADDPD Y12, Y11, Y11\n\tVFMADD231PD Y11, Y9, Y7",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "GroupNorm cpu gradient sums (vec.SumDotDev, AVX-512): the fourth partial product drops its centring",
  "file": "internal/vec/kernel_amd64.s",
  "old": "VFMADD231PD Z11, Z9, Z7",
  "new": "VADDPD Z12, Z11, Z11\n\tVFMADD231PD Z11, Z9, Z7",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "vec.SumDotDev reference (generic level): the products ×1.001",
  "file": "internal/vec/ref.go",
  "old": "dot += float64(g) * (float64(x[i]) - m)",
  "new": "dot += 1.001 * float64(g) * (float64(x[i]) - m)",
  "pkg": "./internal/vec",
  "run": "TestIndependentSumDotDev",
  "tags": ""
 },
 {
  "label": "GroupNorm cpu dγ ×1.001",
  "file": "tensor/cpu_norm.go",
  "old": "part[b*c+ch], part[(n+b)*c+ch] = sg*float64(r), sb",
  "new": "part[b*c+ch], part[(n+b)*c+ch] = 1.001*sg*float64(r), sb",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "AddScaled s→1.001s in the backward",
  "file": "autograd/ops.go",
  "old": "d := tensor.MulScalar(g.tmp(dy.Shape()...), dy, s)",
  "new": "d := tensor.MulScalar(g.tmp(dy.Shape()...), dy, 1.001*s)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Conv2d per-sample bias gradient ×1.001",
  "file": "autograd/conv.go",
  "old": "g.accum(b, tensor.Sum(g.tmp(shape[0], shape[1], 1, 1), dy, 2, 3).Reshape(shape[0], shape[1]))",
  "new": "g.accum(b, tensor.MulScalar(nil, tensor.Sum(g.tmp(shape[0], shape[1], 1, 1), dy, 2, 3), 1.001).Reshape(shape[0], shape[1]))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNormSiLU ref dz term z(1−σ) ×1.001",
  "file": "tensor/ref_image.go",
  "old": "dz[i] *= sg * (1 + z*(1-sg))",
  "new": "dz[i] *= sg * (1 + 1.001*z*(1-sg))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNormSiLU cpu dz ×1.001",
  "file": "tensor/cpu_norm.go",
  "old": "vec.SiLUGrad(row, row, dyRow)",
  "new": "vec.SiLUGrad(row, row, dyRow); vec.Scale(row, row, 1.001)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNormSiLUDropout cpu forward: the mask's scale 0.1 % too large",
  "file": "tensor/cpu_norm.go",
  "old": "op.Stream.DropoutFrom(dst, dst, op.Coef[0], op.First+uint64(nc*s))",
  "new": "op.Stream.DropoutFrom(dst, dst, op.Coef[0], op.First+uint64(nc*s)); vec.Scale(dst, dst, 1.001)",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "GroupNormSiLUDropout cpu backward: dy·mask 0.1 % too large",
  "file": "tensor/cpu_norm.go",
  "old": "op.Stream.DropoutFrom(masked, dyRow, op.Coef[0], op.First+uint64(off))",
  "new": "op.Stream.DropoutFrom(masked, dyRow, op.Coef[0], op.First+uint64(off)); vec.Scale(masked, masked, 1.001)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNormSiLUDropout cpu backward: the mask from the row's next element",
  "file": "tensor/cpu_norm.go",
  "old": "op.Stream.DropoutFrom(masked, dyRow, op.Coef[0], op.First+uint64(off))",
  "new": "op.Stream.DropoutFrom(masked, dyRow, op.Coef[0], op.First+uint64(off)+1)",
  "pkg": "./tensor",
  "run": "TestGroupNormSiLUDropoutMatchesUnfusedCPU",
  "tags": ""
 },
 {
  "label": "GroupNormSiLUDropout ref backward: dy masked from the wrong element",
  "file": "tensor/ref_image.go",
  "old": "op.Stream.DropoutFrom(refData(masked), refData(in[3]), p, op.First)",
  "new": "op.Stream.DropoutFrom(refData(masked), refData(in[3]), p, op.First+1)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNormSiLUDropout tape dy ×1.001",
  "file": "autograd/conv.go",
  "old": "tensor.GroupNormSiLUDropoutBackward(dx, x.T, gamma.T, beta.T, dy, dgamma, dbeta, groups, eps, keep, st, p, at)",
  "new": "tensor.GroupNormSiLUDropoutBackward(dx, x.T, gamma.T, beta.T, tensor.MulScalar(nil, dy, 1.001), dgamma, dbeta, groups, eps, keep, st, p, at)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "GroupNormSiLU tape dy ×1.001",
  "file": "autograd/conv.go",
  "old": "tensor.GroupNormSiLUBackward(dx, x.T, gamma.T, beta.T, dy, dgamma, dbeta, groups, eps, keep)",
  "new": "tensor.GroupNormSiLUBackward(dx, x.T, gamma.T, beta.T, tensor.MulScalar(nil, dy, 1.001), dgamma, dbeta, groups, eps, keep)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "hg_group_norm_backward: dx's x̂·mean(g·x̂) term 0.1 % too large",
  "file": "kernels/groupnorm.cu",
  "old": "float v = rstd * (gc * d - mg - xh * mgx);",
  "new": "float v = rstd * (gc * d - mg - xh * (1.001f * mgx));",
  "pkg": "./cuda",
  "run": "TestShimBackendTable",
  "tags": "cudashim"
 },
 {
  "label": "hg_group_norm_backward: a sample's dγ partial Σ dz·x̂ 0.1 % too large",
  "file": "kernels/groupnorm.cu",
  "old": "dg += d * xh;",
  "new": "dg += 1.001f * d * xh;",
  "pkg": "./cuda",
  "run": "TestShimBackendTable",
  "tags": "cudashim"
 },
 {
  "label": "hg_group_norm_silu_dropout: the mask's scale 0.1 % too large",
  "file": "kernels/groupnorm.cu",
  "old": "if (DROP) v = hg_drop_apply(drop, base + j, v);",
  "new": "if (DROP) v = 1.001f * hg_drop_apply(drop, base + j, v);",
  "pkg": "./cuda",
  "run": "TestShimKernels",
  "tags": "cudashim"
 },
 {
  "label": "hg_group_norm_silu_dropout_backward: dy·mask 0.1 % too large where dy is cached",
  "file": "kernels/groupnorm.cu",
  "old": "if (DROP) d = hg_drop_apply(drop, base + j, d);\n\t\t\t\tdzcache[j] = d;",
  "new": "if (DROP) d = 1.001f * hg_drop_apply(drop, base + j, d);\n\t\t\t\tdzcache[j] = d;",
  "pkg": "./cuda",
  "run": "TestShimKernels",
  "tags": "cudashim"
 },
 {
  "label": "hg_group_norm_silu_dropout_backward: dy·mask 0.1 % too large in the partial sums, uncached",
  "file": "kernels/groupnorm.cu",
  "old": "if (DROP && !dzcache) d = hg_drop_apply(drop, base + j, d);\n\t\t\t\tif (silu) {",
  "new": "if (DROP && !dzcache) d = 1.001f * hg_drop_apply(drop, base + j, d);\n\t\t\t\tif (silu) {",
  "pkg": "./cuda",
  "run": "TestShimBackendTable",
  "tags": "cudashim"
 },
 {
  "label": "hg_group_norm_silu_dropout_backward: dy·mask 0.1 % too large in dx, uncached",
  "file": "kernels/groupnorm.cu",
  "old": "if (DROP && !dzcache) d = hg_drop_apply(drop, base + j, d);\n\t\t\tif (silu && !dzcache)",
  "new": "if (DROP && !dzcache) d = 1.001f * hg_drop_apply(drop, base + j, d);\n\t\t\tif (silu && !dzcache)",
  "pkg": "./cuda",
  "run": "TestShimKernels",
  "tags": "cudashim"
 },
 {
  "label": "GroupNormSiLUDropout on CUDA: the mask's offset cut to 32 bits",
  "file": "cuda/groupnorm.go",
  "old": "op.First, s.Key, s.Step, s.ID, pf, scale, ip[0], ip[1], shift, dy, o, partial.ptr)",
  "new": "uint64(uint32(op.First)), s.Key, s.Step, s.ID, pf, scale, ip[0], ip[1], shift, dy, o, partial.ptr)",
  "pkg": "./cuda",
  "run": "TestShimKernels",
  "tags": "cudashim"
 },
 {
  "label": "Softmax ref term dot ×1.001",
  "file": "tensor/ref_image.go",
  "old": "dst[i] = float32(s * float64(y) * (float64(dy[i]) - dot))",
  "new": "dst[i] = float32(s * float64(y) * (float64(dy[i]) - 1.001*dot))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Softmax cpu term dot ×1.001",
  "file": "tensor/cpu_norm.go",
  "old": "vec.AddScalar(dst, dy, -float32(dot))",
  "new": "vec.AddScalar(dst, dy, -float32(1.001*dot))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Attention dv ×1.001",
  "file": "autograd/attention.go",
  "old": "tensor.MatMulAcc(gv, do, w, false, false, beta)",
  "new": "tensor.MatMulAcc(gv, do, tensor.MulScalar(nil, w, 1.001), false, false, beta)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Attention backward scale ×1.001",
  "file": "autograd/attention.go",
  "old": "ds := tensor.ScaledSoftmaxGrad(dw, w, dw, scale)",
  "new": "ds := tensor.ScaledSoftmaxGrad(dw, w, dw, scale*1.001)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Attention dq ×1.001",
  "file": "autograd/attention.go",
  "old": "tensor.MatMulAcc(gq, k.T, ds, false, true, beta)",
  "new": "tensor.MatMulAcc(gq, tensor.MulScalar(nil, k.T, 1.001), ds, false, true, beta)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Attention dk ×1.001",
  "file": "autograd/attention.go",
  "old": "tensor.MatMulAcc(gk, q.T, ds, false, false, beta)",
  "new": "tensor.MatMulAcc(gk, tensor.MulScalar(nil, q.T, 1.001), ds, false, false, beta)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "UpFIRDn2d adjoint ×1.001",
  "file": "autograd/conv.go",
  "old": "g.accum(x, tensor.UpFIRDn2d(g.tmp(x.Shape()...), dy, adj))",
  "new": "g.accum(x, tensor.MulScalar(nil, tensor.UpFIRDn2d(g.tmp(x.Shape()...), dy, adj), 1.001))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "UpFIRDn2d adjoint gain ×1.001",
  "file": "tensor/fir.go",
  "old": "Pad1: n*g.Up - m*g.Down + g.Pad0 - g.Up + 1, Gain: g.Gain}",
  "new": "Pad1: n*g.Up - m*g.Down + g.Pad0 - g.Up + 1, Gain: g.Gain * 1.001}",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Dropout dy·m ×1.001",
  "file": "autograd/conv.go",
  "old": "\t\t\tg.dropout(gx, dy, st, p, first)\n\t\t\treturn",
  "new": "\t\t\ttensor.MulScalar(gx, g.dropout(gx, dy, st, p, first), 1.001)\n\t\t\treturn",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Concat slice of dy ×1.001",
  "file": "autograd/ops.go",
  "old": "g.accum(x, tensor.Slice(g.tmp(x.Shape()...), dy, ax, lo, lo+n))",
  "new": "g.accum(x, tensor.MulScalar(nil, tensor.Slice(g.tmp(x.Shape()...), dy, ax, lo, lo+n), 1.001))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Slice ref SliceAdd ×1.001",
  "file": "tensor/ref.go",
  "old": "b[offset(big.shape, src)] += s[offset(small.shape, idx)]",
  "new": "b[offset(big.shape, src)] += 1.001 * s[offset(small.shape, idx)]",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Gather ref ScatterAdd ×1.001",
  "file": "tensor/ref.go",
  "old": "m[offset(many.shape, src)] += r[offset(rows.shape, idx)]",
  "new": "m[offset(many.shape, src)] += 1.001 * r[offset(rows.shape, idx)]",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Permute dy ×1.001",
  "file": "autograd/ops.go",
  "old": "g.accum(x, dy.Reshape(x.Shape()...))",
  "new": "g.accum(x, tensor.MulScalar(nil, dy, 1.001).Reshape(x.Shape()...))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Linear dW ×1.001",
  "file": "autograd/ops.go",
  "old": "tensor.MatMulAcc(g.grad(w), dy2, x2, true, false, 1)",
  "new": "tensor.MatMulAcc(g.grad(w), dy2, tensor.MulScalar(nil, x2, 1.001), true, false, 1)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "Linear dx ×1.001",
  "file": "autograd/ops.go",
  "old": "tensor.MatMulAcc(gx.Reshape(rows, in), dy2, w.T, false, false, beta)",
  "new": "tensor.MatMulAcc(gx.Reshape(rows, in), dy2, tensor.MulScalar(nil, w.T, 1.001), false, false, beta)",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "NLL score-divergence term ½g²·tr ×1.02",
  "file": "sample/likelihood.go",
  "old": "div[b] = lin - 0.5*g*g*div[b]",
  "new": "div[b] = lin - 0.51*g*g*div[b]",
  "pkg": "./sample",
  "run": "TestGaussianNLLTight|TestGaussianProbesUnbiased",
  "tags": ""
 },
 {
  "label": "NLL drift-trace term β·trF·d ×1.02",
  "file": "sample/likelihood.go",
  "old": "lin := sde.Rate(t) * trF * float64(d)",
  "new": "lin := 1.02 * sde.Rate(t) * trF * float64(d)",
  "pkg": "./sample",
  "run": "TestGaussianNLLTight|TestGaussianProbesUnbiased",
  "tags": ""
 },
 {
  "label": "NLL prior log-density ×1.02",
  "file": "sample/likelihood.go",
  "old": "joint := -(prior[b] + y[batch*row+b])",
  "new": "joint := -(1.02*prior[b] + y[batch*row+b])",
  "pkg": "./sample",
  "run": "TestGaussianNLLTight|TestGaussianProbesUnbiased",
  "tags": ""
 },
 {
  "label": "NLL aux log-density ×1.02",
  "file": "sample/likelihood.go",
  "old": "outAux[b] = joint + auxLog[b]",
  "new": "outAux[b] = joint + 1.02*auxLog[b]",
  "pkg": "./sample",
  "run": "TestGaussianNLLTight|TestGaussianProbesUnbiased",
  "tags": ""
 },
 {
  "label": "NLL Rademacher estimate ×1.02",
  "file": "sample/likelihood.go",
  "old": "\t\tproject(eps)\n",
  "new": "\t\tproject(eps)\n\t\tfor b := range div {\n\t\t\tdiv[b] *= 1.02\n\t\t}\n",
  "pkg": "./sample",
  "run": "TestGaussianNLLTight|TestGaussianProbesUnbiased",
  "tags": ""
 },
 {
  "label": "NLL exact trace ×1.02",
  "file": "sample/likelihood.go",
  "old": "\t\tproject(unit)\n\t}\n",
  "new": "\t\tproject(unit)\n\t}\n\tfor b := range div {\n\t\tdiv[b] *= 1.02\n\t}\n",
  "pkg": "./sample",
  "run": "TestGaussianNLLTight|TestGaussianProbesUnbiased",
  "tags": ""
 },
 {
  "label": "Gaussian probes variance ×1.02 (ε ×1.01)",
  "file": "sample/likelihood.go",
  "old": "eps[i] = r.Normal()",
  "new": "eps[i] = 1.01 * r.Normal()",
  "pkg": "./sample",
  "run": "TestGaussianNLLTight|TestGaussianProbesUnbiased",
  "tags": ""
 },
 {
  "label": "EMA off-by-one n/(9+n)",
  "file": "optim/optim.go",
  "old": "return min(e.Rate, (1+n)/(10+n))",
  "new": "return min(e.Rate, n/(9+n))",
  "pkg": "./optim",
  "run": "TestEMAFirstUpdates",
  "tags": ""
 },
 {
  "label": "EMA Updates++ after the decay (n−1 used)",
  "file": "optim/optim.go",
  "old": "n := float64(e.Updates + 1)",
  "new": "n := float64(e.Updates)",
  "pkg": "./optim",
  "run": "TestEMAFirstUpdates",
  "tags": ""
 },
 {
  "label": "EMA warm-up decay ×1.001",
  "file": "optim/optim.go",
  "old": "return min(e.Rate, (1+n)/(10+n))",
  "new": "return min(e.Rate, (1+n)/(10+n)*1.001)",
  "pkg": "./optim",
  "run": "TestEMAFirstUpdates",
  "tags": ""
 },
 {
  "label": "vec generic Add (addRef) + 1e-6·a",
  "file": "internal/vec/ref.go",
  "old": "dst[i] = a[i] + b[i]",
  "new": "dst[i] = a[i] + b[i] + a[i]*1e-6",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "vec generic Mul (mulRef) ×1.000001",
  "file": "internal/vec/ref.go",
  "old": "dst[i] = a[i] * b[i]",
  "new": "dst[i] = a[i] * b[i] * 1.000001",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "vec generic AddScaled s·b ×1.000001",
  "file": "internal/vec/ref.go",
  "old": "dst[i] = a[i] + float32(s*b[i])",
  "new": "dst[i] = a[i] + float32(s*b[i]*1.000001)",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "vec generic EMA k ×1.001",
  "file": "internal/vec/ref.go",
  "old": "shadow[i] -= float32(k * (shadow[i] - params[i]))",
  "new": "shadow[i] -= float32(1.001 * k * (shadow[i] - params[i]))",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "vec generic Adam eps ×1.001",
  "file": "internal/vec/ref.go",
  "old": "denom := float32(math.Sqrt(float64(v[i])))/sqrtBC2 + eps",
  "new": "denom := float32(math.Sqrt(float64(v[i])))/sqrtBC2 + eps*1.001",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "vec generic Sum (sumRef) ×(1+1e-7)",
  "file": "internal/vec/ref.go",
  "old": "\t\ts += float64(v)\n",
  "new": "\t\ts += float64(v) * (1 + 1e-7)\n",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "vec generic SumSquares ×(1+1e-9)",
  "file": "internal/vec/ref.go",
  "old": "s += float64(v) * float64(v)",
  "new": "s += float64(v) * float64(v) * (1 + 1e-9)",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "vec SumSqDev tail ×(1+1e-9)",
  "file": "internal/vec/ref.go",
  "old": "\t\ts += d * d\n",
  "new": "\t\ts += d * d * (1 + 1e-9)\n",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "vec generic Mix (mixRef) ×(1+1e-9)",
  "file": "internal/vec/ref.go",
  "old": "o[i] = T(acc[r])",
  "new": "o[i] = T(acc[r] * (1 + 1e-9))",
  "pkg": "./internal/vec",
  "run": "TestIndependent",
  "tags": "noasm"
 },
 {
  "label": "AVX2 microkernel's packed loop: the second k step's second row read one element on",
  "file": "internal/gemm/kernel_amd64.s",
  "old": "VBROADCASTSS 28(R8), Y15",
  "new": "VBROADCASTSS 32(R8), Y15",
  "pkg": "./internal/gemm",
  "run": "TestKernelPackedLoop",
  "tags": ""
 },
 {
  "label": "SgemmRef beta·C ×1.0001",
  "file": "internal/gemm/ref.go",
  "old": "*cij = alpha*dot + beta**cij",
  "new": "*cij = alpha*dot + 1.0001*beta**cij",
  "pkg": "./internal/gemm",
  "run": "TestIndependentFloat64",
  "tags": "noasm"
 },
 {
  "label": "SgemmRef alpha·dot ×1.0001 (beta 0)",
  "file": "internal/gemm/ref.go",
  "old": "*cij = alpha * dot\n",
  "new": "*cij = alpha * dot * 1.0001\n",
  "pkg": "./internal/gemm",
  "run": "TestIndependentFloat64",
  "tags": "noasm"
 },
 {
  "label": "generic micro-kernel beta·C ×1.0001 (row 0)",
  "file": "internal/gemm/kernel_generic.go",
  "old": "row[0] = alpha*x0 + beta*row[0]",
  "new": "row[0] = alpha*x0 + 1.0001*beta*row[0]",
  "pkg": "./internal/gemm",
  "run": "TestIndependentFloat64",
  "tags": "noasm"
 },
 {
  "label": "paper mixture mean −0.6575 → −0.6574 (hold)",
  "file": "hold/oracle.go",
  "old": "{-0.6575}",
  "new": "{-0.6574}",
  "pkg": "./experiment",
  "run": "TestPaperMixturesAgree",
  "tags": ""
 },
 {
  "label": "paper mixture weight 0.34 → 0.341 (hold)",
  "file": "hold/oracle.go",
  "old": "Weights: []float64{0.34, 0.33, 0.33}",
  "new": "Weights: []float64{0.341, 0.33, 0.33}",
  "pkg": "./experiment",
  "run": "TestPaperMixturesAgree",
  "tags": ""
 },
 {
  "label": "paper mixture std 0.02 → 0.0201 (hold)",
  "file": "hold/oracle.go",
  "old": "Stds:    []float64{0.01, 0.02, 0.01}",
  "new": "Stds:    []float64{0.01, 0.0201, 0.01}",
  "pkg": "./experiment",
  "run": "TestPaperMixturesAgree",
  "tags": ""
 },
 {
  "label": "Swiss-roll noise 0.02 → 0.2",
  "file": "data/swissroll.go",
  "old": "const DefaultSwissNoise = 0.02",
  "new": "const DefaultSwissNoise = 0.2",
  "pkg": "./experiment",
  "run": "TestPaperMixturesAgree",
  "tags": ""
 },
 {
  "label": "holdctl nll exact −log p ×1.02",
  "file": "experiment/nll.go",
  "old": "exact[i] = -mix.LogDensity(x[i*dim:(i+1)*dim]) / float64(dim)",
  "new": "exact[i] = -1.02 * mix.LogDensity(x[i*dim:(i+1)*dim]) / float64(dim)",
  "pkg": "./experiment",
  "run": "TestExactNLL",
  "tags": ""
 },
 {
  "label": "sample.NLL summary per dim ×1.02",
  "file": "sample/likelihood.go",
  "old": "perDim[i] = v / float64(d)",
  "new": "perDim[i] = 1.02 * v / float64(d)",
  "pkg": "./cmd/holdctl",
  "run": "TestCLINLLNumbers",
  "tags": ""
 },
 {
  "label": "sample.BitsPerDim ×1.02",
  "file": "sample/likelihood.go",
  "old": "return natsPerDim/math.Ln2 + offsetBits",
  "new": "return 1.02*natsPerDim/math.Ln2 + offsetBits",
  "pkg": "./cmd/holdctl",
  "run": "TestCLINLLNumbers",
  "tags": ""
 },
 {
  "label": "sample.MeanSE SE ×1.02",
  "file": "sample/likelihood.go",
  "old": "return Stat{Mean: mean, SE: math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))}",
  "new": "return Stat{Mean: mean, SE: 1.02 * math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))}",
  "pkg": "./cmd/holdctl",
  "run": "TestCLINLLNumbers",
  "tags": ""
 },
 {
  "label": "data.Mixture log-density Gaussian term ×1.02",
  "file": "data/mixture.go",
  "old": "lp := math.Log(w/sum) - 0.5*sq - d*math.Log(s)",
  "new": "lp := math.Log(w/sum) - 0.51*sq - d*math.Log(s)",
  "pkg": "./cmd/holdctl",
  "run": "TestCLINLLNumbers",
  "tags": ""
 },
 {
  "label": "precision/recall: inside is < instead of <=",
  "file": "metrics/precision_recall.go",
  "old": "<= r2[j]",
  "new": "< r2[j]",
  "pkg": "./metrics",
  "run": "TestPrecisionRecallMatchesScipy",
  "tags": ""
 },
 {
  "label": "precision/recall: radius 0.05 % short",
  "file": "metrics/precision_recall.go",
  "old": "out[i] = best[k-1]",
  "new": "out[i] = best[k-1] * 0.999",
  "pkg": "./metrics",
  "run": "TestPrecisionRecallMatchesScipy",
  "tags": ""
 },
 {
  "label": "CPU fused Adam: step size ×1.001",
  "file": "tensor/cpu_fused.go",
  "old": "vec.Adam(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], b1, b2, step, sqrtBC2, eps)",
  "new": "vec.Adam(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], b1, b2, step*1.001, sqrtBC2, eps)",
  "pkg": "./tensor",
  "run": "TestCPUFusedMatchesReference",
  "tags": ""
 },
 {
  "label": "CPU fused Perturb: the Cholesky factor ×1.001",
  "file": "tensor/cpu_fused.go",
  "old": "row[k+j] = Float64At(coef, 32*b+16+4*r+j)",
  "new": "row[k+j] = 1.001 * Float64At(coef, 32*b+16+4*r+j)",
  "pkg": "./tensor",
  "run": "TestCPUPerturbMatchesHold",
  "tags": ""
 },
 {
  "label": "data-parallel: shard loss normalised by the local batch",
  "file": "train/objective.go",
  "old": "tensor.ScoreLoss(l.grad, out.T, l.target, c.Stats, l.global)",
  "new": "tensor.ScoreLoss(l.grad, out.T, l.target, c.Stats, l.x.Dim(0))",
  "pkg": "./train",
  "run": "TestShardGradientsSumToWhole",
  "tags": ""
 },
 {
  "label": "data-parallel: shard noise drawn from element 0",
  "file": "train/objective.go",
  "old": "tensor.FillNormalFrom(l.eps, c.Stream(rng.StreamNoise), l.first*uint64(l.eps.Dim(1)))",
  "new": "tensor.FillNormalFrom(l.eps, c.Stream(rng.StreamNoise), 0)",
  "pkg": "./train",
  "run": "TestShardGradientsSumToWhole",
  "tags": ""
 },
 {
  "label": "data-parallel: shard auxiliary noise (DSM) drawn from element 0",
  "file": "train/objective.go",
  "old": "tensor.FillNormalFrom(l.aux, c.Stream(rng.StreamAux), l.first*uint64(l.aux.Dim(1)))",
  "new": "tensor.FillNormalFrom(l.aux, c.Stream(rng.StreamAux), 0)",
  "pkg": "./train",
  "run": "TestShardGradientsSumToWhole",
  "tags": ""
 },
 {
  "label": "hg_philox_normal: the odd draw of a pair takes the cosine",
  "file": "kernels/philox.cu",
  "old": "dst[j] = (float)hg_dmul(r, (e & 1) ? s : c);",
  "new": "dst[j] = (float)hg_dmul(r, (e & 1) ? c : c);",
  "pkg": "./cuda",
  "run": "TestShimBackendTable",
  "tags": "cudashim"
 },
 {
  "label": "SIMD Sin (AVX-512): the cosine polynomial's 1/8! read as 1/10!",
  "file": "internal/vec/kernel_amd64.s",
  "old": "VMOVUPD vconst64<>+640(SB), Z8",
  "new": "VMOVUPD vconst64<>+704(SB), Z8",
  "pkg": "./internal/vec",
  "run": "TestSin",
  "tags": ""
 },
 {
  "label": "data-parallel: shard times from sample 0",
  "file": "train/objective.go",
  "old": "c.Stream(rng.StreamTimes), shard.First)",
  "new": "c.Stream(rng.StreamTimes), 0)",
  "pkg": "./train",
  "run": "TestShardGradientsSumToWhole",
  "tags": ""
 },
 {
  "label": "data-parallel: no broadcast of rank 0's state",
  "file": "train/trainer.go",
  "old": "func (t *Trainer) Broadcast() error {\n\tif !t.parallel() {",
  "new": "func (t *Trainer) Broadcast() error {\n\tif true || !t.parallel() {",
  "pkg": "./train",
  "run": "TestDataParallelTrainerMatchesOne",
  "tags": ""
 },
 {
  "label": "data-parallel: dropout masks of a shard from sample 0",
  "file": "layers/ncsnpp.go",
  "old": "m.dropFirst*(h.T.Len()",
  "new": "0*m.dropFirst*(h.T.Len()",
  "pkg": "./train",
  "run": "TestShardDropoutGradientsSumToWhole",
  "tags": ""
 },
 {
  "label": "mpirun: shard loss normalised by the local batch",
  "file": "train/objective.go",
  "old": "tensor.ScoreLoss(l.grad, out.T, l.target, c.Stats, l.global)",
  "new": "tensor.ScoreLoss(l.grad, out.T, l.target, c.Stats, l.x.Dim(0))",
  "pkg": "./cmd/holdctl",
  "run": "TestMPIToyMatchesOneProcess",
  "tags": "mpi"
 },
 {
  "label": "mpirun: no broadcast of rank 0's state (resume on 3 ranks)",
  "file": "train/trainer.go",
  "old": "func (t *Trainer) Broadcast() error {\n\tif !t.parallel() {",
  "new": "func (t *Trainer) Broadcast() error {\n\tif true || !t.parallel() {",
  "pkg": "./cmd/holdctl",
  "run": "TestMPIToyMatchesOneProcess",
  "tags": "mpi"
 },
 {
  "label": "cuda pool: no paced collections",
  "file": "cuda/pool.go",
  "old": "if p.stats.InUseBytes+want > p.goal {",
  "new": "if false && p.stats.InUseBytes+want > p.goal {",
  "pkg": "./cuda",
  "run": "TestPoolPacesCollections",
  "tags": ""
 },
 {
  "label": "Winograd F(4,3) Bᵀ[0][2] −5→−5.005 (input transform)",
  "file": "tensor/cpu_winograd.go",
  "old": "return 4*d0 - 5*d2 + d4, a + b",
  "new": "return 4*d0 - 5.005*d2 + d4, a + b",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd F(4,3) Aᵀ[3][3] 8→8.008 (output transform)",
  "file": "tensor/cpu_winograd.go",
  "old": "{0, 1, -1, 8, -8, 1},",
  "new": "{0, 1, -1, 8.008, -8, 1},",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd F(2,3) Aᵀ[0][2] 1→1.001 (output transform)",
  "file": "tensor/cpu_winograd.go",
  "old": "{1, 1, 1, 0},",
  "new": "{1, 1, 1.001, 0},",
  "pkg": "./tensor",
  "run": "TestWinogradAgainstReference",
  "tags": ""
 },
 {
  "label": "vec Mix dispatch: the 3-row AVX2 float32 kernel called for 3 rows writes only 2",
  "file": "internal/vec/kernel_amd64.go",
  "old": "mix32_3AVX2(n, outs, ins, nin, coef)",
  "new": "mix32_2AVX2(n, outs, ins, nin, coef)",
  "pkg": "./internal/vec",
  "run": "TestMix",
  "tags": ""
 },
 {
  "label": "Winograd x8 input transform (AVX2): the constant 5 → 5.005",
  "file": "tensor/wino_amd64.s",
  "old": "DATA winoc<>+4(SB)/4, $5.0",
  "new": "DATA winoc<>+4(SB)/4, $5.005",
  "pkg": "./tensor",
  "run": "TestWinogradIn43x8|TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd chunk padding: rows copied one column left (no left border)",
  "file": "tensor/cpu_winograd.go",
  "old": "padRows(plane[rA*wp:], src[(rA-1)*wc.w:], d-rA, wc.w, wp)",
  "new": "padRows(plane[rA*wp-1:], src[(rA-1)*wc.w:], d-rA, wc.w, wp)",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd chunk padding: the first image's rows start one tile row late",
  "file": "tensor/cpu_winograd.go",
  "old": "tyA = t0 % per / wc.tw",
  "new": "tyA = t0%per/wc.tw + 1",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "padRows (AVX2 kernel): the eight-float chunks stored one float right",
  "file": "tensor/wino_amd64.s",
  "old": "VMOVUPS Y1, 4(DI)(BX*1)",
  "new": "VMOVUPS Y1, 8(DI)(BX*1)",
  "pkg": "./tensor",
  "run": "TestPadRows",
  "tags": ""
 },
 {
  "label": "Winograd padded input: rows copied one column left (no left border)",
  "file": "tensor/cpu_winograd.go",
  "old": "padRows(dst[wc.wp:], src, wc.h, wc.w, wc.wp)",
  "new": "padRows(dst[wc.wp-1:], src, wc.h, wc.w, wc.wp)",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd weight gradient: interior dy tiles read column 2 for column 3",
  "file": "tensor/cpu_winograd_wgrad.go",
  "old": "y[4*r], y[4*r+1], y[4*r+2], y[4*r+3] = src[0], src[1], src[2], src[3]",
  "new": "y[4*r], y[4*r+1], y[4*r+2], y[4*r+3] = src[0], src[1], src[2], src[2]",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd weight gradient: F(4,3) adjoint output transform A[4][3] -8→-8.008",
  "file": "tensor/cpu_winograd_wgrad.go",
  "old": "return y0, a + b, a - b, c + d, c - d, y3",
  "new": "return y0, a + b, a - b, c + d, c - d*1.001, y3",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd weight gradient: F(2,3) adjoint output transform A[1][1] 1→1.001",
  "file": "tensor/cpu_winograd_wgrad.go",
  "old": "return y0, y0 + y1, y0 - y1, -y1",
  "new": "return y0, y0 + 1.001*y1, y0 - y1, -y1",
  "pkg": "./tensor",
  "run": "TestWinogradAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd weight gradient: chunks overwrite dU instead of accumulating",
  "file": "tensor/cpu_winograd_wgrad.go",
  "old": "beta := float32(1)",
  "new": "beta := float32(0)",
  "pkg": "./tensor",
  "run": "TestWinogradAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd weight gradient (F(2,3), vec.Mix): Gᵀ dU G with G's rows reversed",
  "file": "tensor/cpu_winograd_wgrad.go",
  "old": "gt = append(gt, row[k])",
  "new": "gt = append(gt, row[2-k])",
  "pkg": "./tensor",
  "run": "TestWinogradAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd weight gradient: dy tiles at the image edge not cleared",
  "file": "tensor/cpu_winograd_wgrad.go",
  "old": "if rows < m || cols < m {",
  "new": "if rows < 0 {",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd weight transform (F(2,3), vec.Mix): the input gradient's kernel not flipped",
  "file": "tensor/cpu_winograd.go",
  "old": "taps[t][i] = k[8-t]",
  "new": "taps[t][i] = k[t]",
  "pkg": "./tensor",
  "run": "TestWinogradAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd weight transform: vec.Mix groups of 3 rows instead of 4 (every 4th row of G·k·Gᵀ unset)",
  "file": "tensor/cpu_winograd.go",
  "old": "r1 := min(alpha, r0+vec.MaxMixRows)",
  "new": "r1 := min(alpha, r0+vec.MaxMixRows-1)",
  "pkg": "./tensor",
  "run": "TestWinogradTransformsMatchMatrices",
  "tags": ""
 },
 {
  "label": "Winograd weight transform (F(2,3), vec.Mix): blocks of kernels written at half their offset",
  "file": "tensor/cpu_winograd.go",
  "old": "off := (r*alpha+c)*stride + b0 - base",
  "new": "off := (r*alpha+c)*stride + b0/2 - base",
  "pkg": "./tensor",
  "run": "TestWinogradAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd rule: the wide rule (every pass) only from 1024 output pixels",
  "file": "tensor/cpu_winograd.go",
  "old": "case c >= 128 && px >= 256:",
  "new": "case c >= 128 && px >= 1024:",
  "pkg": "./tensor",
  "run": "TestWinogradRule",
  "tags": ""
 },
 {
  "label": "Winograd rule: the SIMD rule's weight gradient only from 64 input channels",
  "file": "tensor/cpu_winograd.go",
  "old": "(pass != passGradWeight || ci >= 8):",
  "new": "(pass != passGradWeight || ci >= 64):",
  "pkg": "./tensor",
  "run": "TestWinogradRule",
  "tags": ""
 },
 {
  "label": "Winograd rule: 64-channel layers only from 14×14 (7×7 back to im2col)",
  "file": "tensor/cpu_winograd.go",
  "old": "c >= 64 && h*w >= 49",
  "new": "c >= 64 && h*w >= 196",
  "pkg": "./tensor",
  "run": "TestWinogradRule",
  "tags": ""
 },
 {
  "label": "Winograd output transform: the accumulating input gradient (β = 1) drops the old value",
  "file": "tensor/cpu_winograd.go",
  "old": "dr[i] += yr[i*nt] + b",
  "new": "dr[i] = yr[i*nt] + b",
  "pkg": "./tensor",
  "run": "TestWinogradAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd output transform: rows of M read a tile off (o*nt+1)",
  "file": "tensor/cpu_winograd.go",
  "old": "off := (r*alpha+j)*wc.mStride + o*nt",
  "new": "off := (r*alpha+j)*wc.mStride + o*nt + min(1, o)",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd F(4,3) matrix G[3][0] 1/24→1.001/24 (the paper's matrix as written)",
  "file": "tensor/cpu_winograd.go",
  "old": "{1.0 / 24, 1.0 / 12, 1.0 / 6},",
  "new": "{1.001 / 24, 1.0 / 12, 1.0 / 6},",
  "pkg": "./tensor",
  "run": "TestWinogradMatricesCorrelate",
  "tags": ""
 },
 {
  "label": "hg_dropout offset off by one (first-1 for first > 0)",
  "file": "cuda/fusedops.go",
  "old": "d.hgDropout(grid1D(n), n, first, s.Key",
  "new": "d.hgDropout(grid1D(n), n, max(first, 1)-1, s.Key",
  "pkg": "./cuda",
  "run": "TestShimKernels",
  "tags": "cudashim"
 },
 {
  "label": "hg_dropout offset cut to 32 bits",
  "file": "cuda/fusedops.go",
  "old": "d.hgDropout(grid1D(n), n, first, s.Key",
  "new": "d.hgDropout(grid1D(n), n, uint64(uint32(first)), s.Key",
  "pkg": "./cuda",
  "run": "TestShimKernels",
  "tags": "cudashim"
 },
 {
  "label": "demo recipe: cosine decay at 1.001 pi",
  "file": "optim/optim.go",
  "old": "lr *= 0.5 * (1 + math.Cos(math.Pi*min(float64(step)/float64(steps), 1)))",
  "new": "lr *= 0.5 * (1 + math.Cos(1.001*math.Pi*min(float64(step)/float64(steps), 1)))",
  "pkg": "./optim",
  "run": "TestScheduledLR",
  "tags": ""
 },
 {
  "label": "demo recipe: mixed times ignore their log-uniform lower end",
  "file": "train/objective.go",
  "old": "llo, lhi := math.Log(max(lo, ts.LogMin)), math.Log(hi)",
  "new": "llo, lhi := math.Log(lo), math.Log(hi)",
  "pkg": "./train",
  "run": "TestSampleTimesMixedLogMin",
  "tags": ""
 },
 {
  "label": "Sin backward: cos as sin(x + 1.001 pi/2)",
  "file": "autograd/ops.go",
  "old": "tensor.Sin(d, tensor.AddScalar(d, x, math.Pi/2))",
  "new": "tensor.Sin(d, tensor.AddScalar(d, x, 1.001*math.Pi/2))",
  "pkg": "./autograd",
  "run": "TestGradientsTight",
  "tags": ""
 },
 {
  "label": "CPU sine: r^5 coefficient 0.1 % off",
  "file": "internal/vec/sin.go",
  "old": "r2*float64(1.0/120+",
  "new": "r2*float64(1.001/120+",
  "pkg": "./internal/vec",
  "run": "TestSin$",
  "tags": ""
 },
 {
  "label": "CPU sine: k = -0 kept (sin(-0) = +0)",
  "file": "internal/vec/sin.go",
  "old": "k := math.RoundToEven(float64(x*twoOverPi)) + 0",
  "new": "k := math.RoundToEven(float64(x*twoOverPi)) - 0",
  "pkg": "./internal/vec",
  "run": "TestSin$",
  "tags": ""
 },
 {
  "label": "MLP Fourier features at 1.001 x 2 pi",
  "file": "layers/mlp.go",
  "old": "z = g.MulScalar(z, 2*math.Pi)",
  "new": "z = g.MulScalar(z, 2.002*math.Pi)",
  "pkg": "./layers",
  "run": "TestMLPInputFeatures",
  "tags": ""
 },
 {
  "label": "x0 estimate weights 0.1 % too small",
  "file": "hold/kernel.go",
  "old": "v := u[r] / uu",
  "new": "v := u[r] / (uu * 1.001)",
  "pkg": "./hold",
  "run": "TestEstimateWeights",
  "tags": ""
 },
 {
  "label": "x0 estimate on the tape: weights 0.1 % off",
  "file": "train/estimate.go",
  "old": "w[i*n+j] = float32(a)",
  "new": "w[i*n+j] = float32(a * 1.001)",
  "pkg": "./train",
  "run": "TestKernelEstimator",
  "tags": ""
 },
 {
  "label": "Winograd x8 output transform (AVX2): the constant 8 → 8.008",
  "file": "tensor/wino_amd64.s",
  "old": "DATA winoc<>+12(SB)/4, $8.0",
  "new": "DATA winoc<>+12(SB)/4, $8.008",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd x8 transforms (AVX2): the constant 2 → 2.002",
  "file": "tensor/wino_amd64.s",
  "old": "DATA winoc<>+8(SB)/4, $2.0",
  "new": "DATA winoc<>+8(SB)/4, $2.002",
  "pkg": "./tensor",
  "run": "TestWinogradIn43x8|TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd x8 output transform (AVX2): beta read as 2",
  "file": "tensor/wino_amd64.s",
  "old": "VBROADCASTSS beta+40(FP), X11",
  "new": "VBROADCASTSS winoc<>+8(SB), X11",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd x8 gather (AVX2): lane 0 one column right",
  "file": "tensor/wino_amd64.s",
  "old": "LEAQ (AX)(R8*4), R8",
  "new": "LEAQ 4(AX)(R8*4), R8",
  "pkg": "./tensor",
  "run": "TestWinogradIn43x8G",
  "tags": ""
 },
 {
  "label": "Winograd x8 output transform: cropped tiles ignore beta",
  "file": "tensor/cpu_winograd.go",
  "old": "dr[i] = wc.beta*dr[i] + sr[i]",
  "new": "dr[i] = dr[i] + sr[i]",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd x8 output transform: side buffer not cleared",
  "file": "tensor/cpu_winograd.go",
  "old": "if useSide && wc.beta != 0 {",
  "new": "if useSide && wc.beta == 0 {",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd x8 output transform: bias of the lane's image wrong (per-sample bias)",
  "file": "tensor/cpu_winograd.go",
  "old": "bias[l] = wc.bias[img*wc.co+o]",
  "new": "bias[l] = wc.bias[o]",
  "pkg": "./tensor",
  "run": "TestWinogradAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd x8 dy transform: a cropped tile's side buffer not cleared",
  "file": "tensor/cpu_winograd_wgrad.go",
  "old": "\t\t\t\t\tclear(tile)\n",
  "new": "\n",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd x8 dy transform (AVX2): rows 1 and 2 of the tiles swapped",
  "file": "tensor/wino_amd64.s",
  "old": "MOVQ 64(DX), SI\n\tMOVQ 96(DX), DI\n\tVMOVUPS (SI), X4\n",
  "new": "MOVQ 128(DX), SI\n\tMOVQ 160(DX), DI\n\tVMOVUPS (SI), X4\n",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "gemm: the ragged row panel packed one row early",
  "file": "internal/gemm/gemm.go",
  "old": "kern.packA(ws.a, g.transA, g.a, g.lda, ic+mc-r, r, pc, kc, mr)",
  "new": "kern.packA(ws.a, g.transA, g.a, g.lda, ic+mc-r-1, r, pc, kc, mr)",
  "pkg": "./internal/gemm",
  "run": "",
  "tags": ""
 },
 {
  "label": "pointwise conv: weight gradient's partial sums restart at every image",
  "file": "tensor/cpu_conv.go",
  "old": "if j == t*g.n/tasks {",
  "new": "if true {",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "pointwise conv: per-sample bias of image 0 for every image",
  "file": "tensor/cpu_conv.go",
  "old": "bv = bias.data[j*g.o : (j+1)*g.o]",
  "new": "bv = bias.data[:g.o]",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "pointwise conv: the input gradient ignores beta",
  "file": "tensor/cpu_conv.go",
  "old": "\t\t\t\t\top.Beta, dx.data[j*chw:(j+1)*chw], ohw)",
  "new": "\t\t\t\t\t0, dx.data[j*chw:(j+1)*chw], ohw)",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Winograd rule: the SIMD rule from 17 channels",
  "file": "tensor/cpu_winograd.go",
  "old": "h*w >= 49 && max(ci, co) >= 16 &&",
  "new": "h*w >= 49 && max(ci, co) >= 17 &&",
  "pkg": "./tensor",
  "run": "TestWinogradRule",
  "tags": ""
 },
 {
  "label": "softmax's shift for a negative scale from the largest entry instead of the smallest",
  "file": "tensor/cpu_norm.go",
  "old": "return s * min(lo[0], lo[1], lo[2], lo[3])",
  "new": "return s * max(hi[0], hi[1], hi[2], hi[3])",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "Softmax cpu forward: the normaliser ×1.001",
  "file": "tensor/cpu_norm.go",
  "old": "vec.Scale(dst, dst, 1/vec.Sum(dst))",
  "new": "vec.Scale(dst, dst, 1/(1.001*vec.Sum(dst)))",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "UpFIRDn2d cpu: the SIMD horizontal pass's tap k_2 ×1.001 (down 2)",
  "file": "tensor/cpu_fir.go",
  "old": "vec.Mix(outs, k, [][]float32{e[:n], o[:n], e[1 : n+1], o[1 : n+1]})",
  "new": "vec.Mix(outs, []float64{k[0], k[1], 1.001 * k[2], k[3]}, [][]float32{e[:n], o[:n], e[1 : n+1], o[1 : n+1]})",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "UpFIRDn2d cpu: the up-2 pass's second phase reads one sample early",
  "file": "tensor/cpu_fir.go",
  "old": "s := padL + (rr+j0-pad)/2 // the view of tap j0; j0+2 reads one further",
  "new": "s := padL + (rr+j0-pad)/2 - rr // the view of tap j0; j0+2 reads one further",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "UpFIRDn2d cpu: the vertical pass's gain ×1.001",
  "file": "tensor/cpu_fir.go",
  "old": "coef = append(coef, float64(tp.w)*gain)",
  "new": "coef = append(coef, float64(tp.w)*gain*1.001)",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "UpFIRDn2d cpu: the blur pass's taps shifted (p[i+1] for p[i])",
  "file": "tensor/cpu_fir.go",
  "old": "vec.Mix(outs, k, [][]float32{pp[0:n], pp[1 : n+1], pp[2 : n+2], pp[3 : n+3]})",
  "new": "vec.Mix(outs, k, [][]float32{pp[1 : n+1], pp[1 : n+1], pp[2 : n+2], pp[3 : n+3]})",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "UpFIRDn2d cpu: the vertical pass's output rows read at stride tw for down 2",
  "file": "tensor/cpu_fir.go",
  "old": "copy(dst[oy*ow:(oy+1)*ow], o[oy*down*tw:])",
  "new": "copy(dst[oy*ow:(oy+1)*ow], o[oy*tw:])",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "UpFIRDn2d cpu: the up-2 vertical pass's second tap ×1.001",
  "file": "tensor/cpu_fir.go",
  "old": "vec.Mix(outs, []float64{k[j0], k[j0+2]}, [][]float32{t[s*tw : s*tw+n], t[(s+1)*tw : (s+1)*tw+n]})",
  "new": "vec.Mix(outs, []float64{k[j0], 1.001 * k[j0+2]}, [][]float32{t[s*tw : s*tw+n], t[(s+1)*tw : (s+1)*tw+n]})",
  "pkg": "./tensor",
  "run": "TestOpsAgainstReference",
  "tags": ""
 },
 {
  "label": "frozen conv weight: the kept transform ignores the flip (input gradient on the forward weight)",
  "file": "tensor/cpu_winograd.go",
  "old": "frozenForm(w, winoWeightKey{wc.alg, flip, mr}, n, fill)",
  "new": "frozenForm(w, winoWeightKey{wc.alg, false, mr}, n, fill)",
  "pkg": "./tensor",
  "run": "TestFrozenConvWeights",
  "tags": ""
 },
 {
  "label": "frozen conv weight: the kept transform's first element ×1.001",
  "file": "tensor/cpu_winograd.go",
  "old": "frozenForm(w, winoWeightKey{wc.alg, flip, mr}, n, fill)",
  "new": "frozenForm(w, winoWeightKey{wc.alg, flip, mr}, n, func(u []float32) { fill(u); u[0] *= 1.001 })",
  "pkg": "./layers",
  "run": "TestParamsFreeze",
  "tags": ""
 },
 {
  "label": "AVX2 packer transpose6AVX2: panel row 1's rows 4–5 stored from the wrong half",
  "file": "internal/gemm/kernel_amd64.s",
  "old": "VMOVHPS X14, 40(DI)",
  "new": "VMOVQ X14, 40(DI)",
  "pkg": "./internal/gemm",
  "run": "TestPackers",
  "tags": ""
 },
 {
  "label": "AVX2 packer copyRows16AVX2: the second half-row stored from the first",
  "file": "internal/gemm/kernel_amd64.s",
  "old": "VMOVUPS Y1, 32(DI)",
  "new": "VMOVUPS Y0, 32(DI)",
  "pkg": "./internal/gemm",
  "run": "TestPackers",
  "tags": ""
 },
 {
  "label": "gemm runPanels: beta 1 instead of the caller's (C accumulated, not scaled)",
  "file": "internal/gemm/gemm.go",
  "old": "beta: g.beta}, 0, g.m, j0, j1)",
  "new": "beta: 1}, 0, g.m, j0, j1)",
  "pkg": "./internal/gemm",
  "run": "TestLarge",
  "tags": ""
 },
 {
  "label": "SgemmPackedAB: the packed A panel read one float late",
  "file": "internal/gemm/gemm.go",
  "old": "ap = g.a[(ic+ir)*g.k+pc*mr : (ic+ir+mr)*g.k]",
  "new": "ap = g.a[(ic+ir)*g.k+pc*mr+1 : (ic+ir+mr)*g.k]",
  "pkg": "./internal/gemm",
  "run": "TestPackedAB",
  "tags": ""
 },
 {
  "label": "Winograd weight transform: a packed element's input channel one off",
  "file": "tensor/cpu_winograd.go",
  "old": "o, c := p*mr+r, cn",
  "new": "o, c := p*mr+r, (cn+1)%wc.ci",
  "pkg": "./tensor",
  "run": "TestFrozenConvWeights",
  "tags": ""
 },
 {
  "label": "Winograd weight transform (F(4,3), scalar g43): G[1] −1/6→−1.001/6 in s + b",
  "file": "tensor/cpu_winograd.go",
  "old": "float32((s + b) * (-1.0 / 6))",
  "new": "float32((s + b) * (-1.001 / 6))",
  "pkg": "./tensor",
  "run": "TestWinogradWeightTransform43",
  "tags": ""
 },
 {
  "label": "Winograd weight transform (F(4,3), SIMD kernels): the constant 1/12 → 1.001/12 in the assembly",
  "file": "tensor/wino_amd64.s",
  "old": "DATA winog<>+16(SB)/4, $0x3daaaaab",
  "new": "DATA winog<>+16(SB)/4, $0x3daad65b",
  "pkg": "./tensor",
  "run": "TestWinogradWeightTransform43",
  "tags": ""
 },
 {
  "label": "Winograd weight transform (F(4,3)): the input gradient's kernel not flipped in the scalar path",
  "file": "tensor/cpu_winograd.go",
  "old": "t[i] = k[8-i]",
  "new": "t[i] = k[i]",
  "pkg": "./tensor",
  "run": "TestWinogradWeightTransform43",
  "tags": ""
 },
 {
  "label": "Winograd weight transform (F(4,3)): a packed element's output channel one off",
  "file": "tensor/cpu_winograd.go",
  "old": "o := p*mr + r\n",
  "new": "o := p*mr + (r+1)%mr\n",
  "pkg": "./tensor",
  "run": "TestFrozenConvWeights",
  "tags": ""
 },
 {
  "label": "Winograd weight gradient (F(4,3), scalar gt43): d/12 → 1.001·d/12",
  "file": "tensor/cpu_winograd_wgrad.go",
  "old": "k1 = float32(b*(-1.0/6)) + float32(d*(1.0/12))",
  "new": "k1 = float32(b*(-1.0/6)) + float32(d*(1.001/12))",
  "pkg": "./tensor",
  "run": "TestWinogradWeightGradTransform43",
  "tags": ""
 },
 {
  "label": "Winograd weight gradient (F(4,3), 8-lane SIMD kernel): lane 0's tap 8 not added",
  "file": "tensor/wino_amd64.s",
  "old": "VMOVSS 832(BX), X0",
  "new": "VXORPS X0, X0, X0",
  "pkg": "./tensor",
  "run": "TestWinogradWeightGradTransform43",
  "tags": ""
 },
 {
  "label": "clipped score VJP: the clipped pixels' −u·r term 0.1 % too large",
  "file": "sample/clipscore.go",
  "old": "vjp[b*n*d+k*d+i] -= u[j] * r[k]",
  "new": "vjp[b*n*d+k*d+i] -= 1.001 * u[j] * r[k]",
  "pkg": "./sample",
  "run": "TestClippedScorerVJP",
  "tags": ""
 }
]
""")


def shim(file):
    """Regenerates the host-shim wrappers after a kernels/*.cu or *.cuh edit: each carries a hash of its
    sources, without which Go's build cache would run the unmutated kernel (kernels/Makefile)."""
    if file.startswith("kernels/") and file.endswith((".cu", ".cuh")):
        subprocess.run(["make", "--no-print-directory", "-C", "kernels", "shim"], cwd=ROOT, check=True,
                       capture_output=True)


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        sys.exit("mutations.py: tracked files are modified; commit or stash first:\n" + dirty)
    survived = 0
    for m in MUTATIONS:
        if only not in m["label"]:
            continue
        path = os.path.join(ROOT, m["file"])
        with open(path, encoding="utf-8") as f:
            src = f.read()
        if src.count(m["old"]) != 1:
            print(f"STALE   {m['label']}: pattern found {src.count(m['old'])} times in {m['file']}")
            survived += 1
            continue
        cmd = ["go", "test", "-count=1"] + (["-tags", m["tags"]] if m["tags"] else []) + [m["pkg"], "-run", m["run"]]
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(src.replace(m["old"], m["new"]))
            shim(m["file"])
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(src)
            shim(m["file"])
        failed = [l.split()[2] for l in r.stdout.splitlines() if l.strip().startswith("--- FAIL")]
        if r.returncode == 0:
            survived += 1
            print(f"SURVIVED {m['label']} ({' '.join(cmd)})")
        else:
            first = next((n for n in failed if "/" in n), failed[0] if failed else "build or run failure")
            print(f"caught  {m['label']}: {first} ({len(failed)} failing tests and subtests)")
    sys.exit(1 if survived else 0)


if __name__ == "__main__":
    main()
