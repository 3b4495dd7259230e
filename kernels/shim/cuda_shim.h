// cuda_shim.h: run the CUDA C kernels of kernels/*.cu on the CPU, for tests without a GPU.
//
// Compile a kernel family as C++ with this header first (g++ -std=c++17; the cgo package
// cuda/internal/shim does it: one wrapper .cc per family that includes this header, then the .cu).
// What it provides:
//   - threadIdx, blockIdx, blockDim, gridDim; __global__/__device__/__shared__ and friends;
//   - blocks run one after another; the threads of a block run as ucontext fibers on one OS thread
//     and __syncthreads() switches to the next fiber, so a barrier is a real barrier: no thread of
//     the block passes it before all have reached it. A block whose threads disagree about a barrier
//     (some exit while others wait) is reported as an error, as it is undefined on a GPU;
//   - __shared__ variables are function statics: one copy, reused by every block in turn, which is
//     exactly per-block shared memory when blocks run sequentially; dynamic shared memory
//     (HG_DYNAMIC_SHARED) is a per-launch buffer filled with 0xff bytes (NaN as float) to expose
//     reads of never-written shared memory;
//   - HG_REGISTER(name) registers each kernel by name with an argument unpacker, so the Go side
//     launches it with the same argument slots it gives cuLaunchKernel.
// Not emulated: warps (no shuffles or warp-synchronous code), atomics, streams (launches are
// synchronous), and the float rounding of GPU intrinsics (the shim uses the C library's).
#pragma once
#define HG_SHIM 1

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

struct uint3 {
	unsigned int x, y, z;
};
struct dim3 {
	unsigned int x = 1, y = 1, z = 1;
};

namespace hg_shim {

using Thunk = std::function<void(void**)>;

inline uint3 thread_idx, block_idx;
inline dim3 block_dim, grid_dim;
inline void* dynamic_shared;

inline std::map<std::string, Thunk>& registry() {
	static std::map<std::string, Thunk> r;
	return r;
}

template <class... A, std::size_t... I>
void call(void (*f)(A...), void** args, std::index_sequence<I...>) {
	f(*static_cast<A*>(args[I])...);
}

struct Registrar {
	template <class... A>
	Registrar(const char* name, void (*f)(A...)) {
		registry()[name] = [f](void** args) { call(f, args, std::index_sequence_for<A...>{}); };
	}
};

// Fiber scheduler state of the running block.
inline ucontext_t scheduler;
inline std::vector<ucontext_t> fibers;
inline std::vector<char> stacks;
inline std::vector<char> state; // 0 runnable, 1 at a barrier, 2 finished
inline int current;
inline const Thunk* thunk;
inline void** thunk_args;
constexpr size_t stack_size = 128 << 10;

inline void trampoline() {
	(*thunk)(thunk_args);
	state[current] = 2; // returning resumes the scheduler through uc_link
}

inline void sync_threads() {
	state[current] = 1;
	swapcontext(&fibers[current], &scheduler);
}

// launch runs kernel `name` over grid × block with `shared` bytes of dynamic shared memory.
// It returns 0, 1 for an unknown kernel, 2 for a barrier not reached by every thread of a block.
inline int launch(const char* name, dim3 grid, dim3 block, size_t shared, void** args) {
	auto it = registry().find(name);
	if (it == registry().end()) return 1;
	thunk = &it->second;
	thunk_args = args;
	grid_dim = grid;
	block_dim = block;
	const int T = (int)(block.x * block.y * block.z);
	fibers.resize(T);
	state.assign(T, 0);
	if (stacks.size() < (size_t)T * stack_size) stacks.resize((size_t)T * stack_size);
	std::vector<unsigned char> dyn(shared + 16, 0xff);
	dynamic_shared = dyn.data();
	ucontext_t templ;
	getcontext(&templ);
	for (unsigned bz = 0; bz < grid.z; bz++)
		for (unsigned by = 0; by < grid.y; by++)
			for (unsigned bx = 0; bx < grid.x; bx++) {
				block_idx = uint3{bx, by, bz};
				for (int t = 0; t < T; t++) {
					fibers[t] = templ;
					fibers[t].uc_stack.ss_sp = &stacks[(size_t)t * stack_size];
					fibers[t].uc_stack.ss_size = stack_size;
					fibers[t].uc_link = &scheduler;
					makecontext(&fibers[t], trampoline, 0);
					state[t] = 0;
				}
				for (;;) { // one round: every thread runs to its next barrier or to its end
					int waiting = 0, finished = 0;
					for (int t = 0; t < T; t++) {
						current = t;
						thread_idx = uint3{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
						swapcontext(&scheduler, &fibers[t]);
						if (state[t] == 1) waiting++;
						else finished++;
					}
					if (finished == T) break;
					if (waiting != T) return 2;
					for (int t = 0; t < T; t++) state[t] = 0;
				}
			}
	return 0;
}

} // namespace hg_shim

#define threadIdx hg_shim::thread_idx
#define blockIdx hg_shim::block_idx
#define blockDim hg_shim::block_dim
#define gridDim hg_shim::grid_dim

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __syncthreads() hg_shim::sync_threads()

// The integer intrinsics the kernels use.
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }

#define HG_KERNEL(name) extern "C" void name
#define HG_REGISTER(name) static hg_shim::Registrar hg_registrar_##name(#name, name)
#define HG_DYNAMIC_SHARED(type, var) type* var = static_cast<type*>(hg_shim::dynamic_shared)
