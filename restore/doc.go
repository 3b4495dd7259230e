// Package restore is image restoration with the diffusion models of package hold (HOLD-n, CLD, VP,
// VE): measurement operators, measurements, restoration methods in the aligned gauge, the oracle
// priors that test them, and PSNR/SSIM. The specification is the project's restoration study of
// 2026-11-29 (issue 46); its sections are cited as §.
//
// # Measurements
//
// y = A q0 + σ_y n on one image q0 of d = C·H·W values, n ~ N(0, I) from Philox stream
// StreamMeasurement keyed by sample.ChunkSeed(seed, image) (Measure). The operators (Operator) carry
// their SVD A = U diag(s) V_rᵀ: Mask (inpaint-box, inpaint-random; s = 1, A⁺ = Aᵀ), Pool (sr2, sr4:
// f×f average pooling, s = 1/f, A⁺ = replication), Blur (deblur-gauss: separable 7-tap Gaussian with
// zero padding, SVD from the eigendecomposition of one H×H matrix; only with σ_y > 0) and Identity
// (denoise). Task builds an image's operator (its random mask from stream StreamMask).
//
// # The aligned gauge (§2)
//
// Per pixel the state u (n blocks) has the kernel u_t | q0 ~ N(m_t q0, Σ_t). The sufficient statistic
// c = toC_tᵀu, toC_t = σ_t²Σ_t⁻¹m_t, has c | q0 ~ N(q0, σ_t²), σ_t⁻² = m_tᵀΣ_t⁻¹m_t; the ancillary
// w = N_tᵀL_t⁻¹u ~ N(0, I) carries no information on q0, and u = m_t c + L_tN_t w (sample/gauge.go; the
// quantities come from hold.SDE.EDMPrecond). The measurement is independent of u_t given q0, so
// p(y | u_t) = p(y | c_t) and the posterior's marginal is the forward diffusion of p(q0 | y): Tweedie
// holds for it, E[q0 | u, y] = x̂₀ + σ_t²∇_c log p(y | c), and its last-block score is
// S_y = (rᵀm)x̂₀ʸ − rᵀu, r = Σ_t⁻¹e_n. So every method is a rule for x̂₀ʸ(c, σ) or a correction δc of c,
// applied to the state as u ← u + m_t δc (which moves c by δc and leaves w, since toW·m = 0); on VP's
// σ-grid HOLD with a method is VP with it, number for number (TestHOLDIsVP).
//
// # Methods (Restorer, one σ-grid t_0 > … > t_N, σ → σ′ per step)
//
// Every step reads x̂₀ from the score (sample.PredictX0), clips it to [−Clip, Clip] when asked, applies
// the method, and moves c with the solver: anc c′ = x̂₀ + (σ′/σ)²(c − x̂₀) + σ′(1 − (σ′/σ)²)^{1/2}z,
// ddim c′ = (σ′/σ)c + (1 − σ′/σ)x̂₀, or sde2 (DPM-Solver++(2M) SDE, as sample.Aligned).
//
//   - exact (oracles only): x̂₀ʸ is the posterior's own denoiser, E[q0 | c, y] (a GaussianOracle of
//     GaussianPosterior's N(μ_y, Σ_y): V = ACAᵀ + σ_y²I, μ_y = μ + CAᵀV⁻¹(y − Aμ), Σ_y = C − CAᵀV⁻¹AC,
//     §2(c)). The same oracle passed as the score of any sampler of package sample conditions it
//     through insertion point (i) (aligned, x̂₀ samplers) or (ii) (lt, em, …: S_y).
//   - replace (masks, §2(a)): after each step, A c ← y + (σ′² − σ_y²)^{1/2}Aξ with fresh ξ, applied as the
//     shift δc = Aᵀ(y + (σ′² − σ_y²)^{1/2}Aξ − Ac); with σ_y > 0 the measured pixels are released once
//     σ′ < σ_y (§4). Replacing q alone is wrong: c would carry only m_q·toC_q of y.
//   - repaint: replace, with RePaint's resampling: blocks of Jump steps run Resample times, each pass but
//     the last undone step by step by the exact VE forward step c ← c + (σ² − σ′²)^{1/2}ξ with w fixed.
//   - ddnm (DDNM+, η, §2(a)): with x̄ = V_rᵀx, ȳ_j = (Uᵀy)_j/s_j and ε̂ = (c − x̂₀)/σ from the unmodified
//     x̂₀: range j with s_jσ′ ≥ σ_y: x̄′_j = ȳ_j + (σ′² − σ_y²/s_j²)^{1/2}z̄_j; range j with s_jσ′ < σ_y:
//     x̄′_j = x̄₀_j + λ_j(ȳ_j − x̄₀_j) + σ′ηz̄_j, λ_j = s_jσ′(1 − η²)^{1/2}/σ_y; null space:
//     x̂₀ + σ′(ηz + (1 − η²)^{1/2}ε̂); c′ = V_r x̄′ + P_null(…) — DDNM's ddnm_plus_diffusion divided by √ᾱ′.
//   - pigdm (ΠGDM, §2(b)): x̂₀ʸ = x̂₀ + σ²JᵀAᵀ(r²AAᵀ + σ_y²I)⁻¹(y − Ax̂₀), r² = vσ²/(v + σ²) (v = 1 in
//     ΠGDM; 0.35 is Fashion-MNIST's pixel variance in [−1, 1]), J = ∂x̂₀/∂c.
//   - dps (§2(b)): after the step c′ ← c′ − ζ(1 + σ²)^{1/2}(1 + σ′²)^{1/2}∇_c‖y − Ax̂₀(c)‖, the norm per
//     sample: VP's DPS x′ ← x′ − ζ∇_x‖·‖ written in c = x(1 + σ²)^{1/2}.
//
// ΠGDM and DPS need one vector–Jacobian product of the network per step (sample.DivScorer's ScoreVJP
// gives v = gᵀ∂S/∂u): since x̂₀ = (S + rᵀu)/(rᵀm) and c moves u along m, gᵀ∂x̂₀/∂c = Σ_k m_k v_k/(rᵀm) + g
// (§2(b)). A clipped pixel passes no gradient.
//
// The read-out at the grid's end is the method's x̂₀ʸ; for ddnm, replace and repaint with σ_y = 0 it is
// projected onto Ax = y (x̂₀ + A⁺(y − Ax̂₀)). Denoising (A = I) is exact (§2): y is c at σ = σ_y, so the
// states DenoiseStates builds at the time where the noise level is σ_y (sample.TimeAtNoiseLevel), with
// w ~ N(0, I), are the model's state given y, and any unconditioned sampler run from there samples the
// posterior.
//
// # Randomness
//
// Image i's prior states, mask, measurement noise and method noise come from Philox streams keyed by
// sample.ChunkSeed(seed, i) (rng.StreamPrior, StreamMask, StreamMeasurement, StreamMethod), so a run is
// the same whatever the batch or the number of images (PriorStates, PhiloxNoise).
package restore
