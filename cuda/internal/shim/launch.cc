//go:build cudashim

// The C entry points of the host shim, called from shim.go.
#include "../../../kernels/shim/cuda_shim.h"
#include "shim.h"

extern "C" int hg_shim_launch(const char* name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, size_t shared, uint64_t* slots, int nargs) {
	std::vector<void*> args(nargs);
	for (int i = 0; i < nargs; i++) args[i] = &slots[i];
	dim3 grid, block;
	grid.x = gx, grid.y = gy, grid.z = gz;
	block.x = bx, block.y = by, block.z = bz;
	return hg_shim::launch(name, grid, block, shared, args.data());
}

extern "C" int hg_shim_kernel_count(void) { return (int)hg_shim::registry().size(); }

extern "C" const char* hg_shim_kernel_name(int i) {
	auto it = hg_shim::registry().begin();
	std::advance(it, i);
	return it->first.c_str();
}
