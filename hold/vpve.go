package hold

import "math"

// scalarKernel is the one-block chain dz = −ξz dτ + √(2ξ) dW started at z_0 (VP with ξ = ½):
// mean e^{−ξτ}, variance −expm1(−2ξτ), exact at every τ.
type scalarKernel struct{ xi float64 }

func (k scalarKernel) eval(tau float64, _ bool) nativeKernel {
	return oneBlock(math.Exp(-k.xi*tau), -math.Expm1(-2*k.xi*tau))
}

// brownianKernel is dz = dW (VE in time τ = σ(t)² − σ_min²). As in score_sde the data are taken to
// start with variance base = σ_min², so the marginal kernel has variance σ(t)²; the noise kernel
// (one reverse step of the A part) has variance τ.
type brownianKernel struct{ base float64 }

func (k brownianKernel) eval(tau float64, marginal bool) nativeKernel {
	v := tau
	if marginal {
		v += k.base
	}
	return oneBlock(1, v)
}

func oneBlock(mean, variance float64) nativeKernel {
	var k nativeKernel
	k.exp.N, k.sigma.N, k.chol.N = 1, 1, 1
	k.exp.a[0][0] = mean
	k.sigma.a[0][0] = variance
	k.chol.a[0][0] = math.Sqrt(variance)
	k.ell = 1 / math.Sqrt(variance)
	return k
}
