// Entry points of the host shim (launch.cc).
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
int hg_shim_launch(const char* name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   size_t shared, uint64_t* slots, int nargs);
int hg_shim_kernel_count(void);
const char* hg_shim_kernel_name(int i);
#ifdef __cplusplus
}
#endif
