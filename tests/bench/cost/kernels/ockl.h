/*
 * The ROCm device-library (ockl) functions the cost report compares with, declared with
 * the prototypes ockl.bc defines them with (llvm-dis ockl.bc). Nothing of them is copied:
 * the kernels are linked against the installed ockl.bc.
 */
#ifndef COST_OCKL_H
#define COST_OCKL_H

#include <stdint.h>

uint32_t __ockl_lane_u32(void);
uint32_t __ockl_activelane_u32(void);

uint64_t __ockl_get_local_id(uint32_t dim);
uint64_t __ockl_get_group_id(uint32_t dim);
uint64_t __ockl_get_local_size(uint32_t dim);
uint64_t __ockl_get_num_groups(uint32_t dim);
uint64_t __ockl_get_global_size(uint32_t dim);
uint64_t __ockl_get_global_id(uint32_t dim);

__attribute__((address_space(1))) void *__ockl_dm_alloc(uint64_t size);
void __ockl_dm_dealloc(uint64_t address);

/* printf as clang lowers it for hostcall printf: begin, the format, the arguments. */
uint64_t __ockl_printf_begin(uint64_t version);
uint64_t __ockl_printf_append_args(uint64_t desc, uint32_t count, uint64_t a0, uint64_t a1,
                                   uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                                   uint32_t is_last);
uint64_t __ockl_printf_append_string_n(uint64_t desc, const char *s, uint64_t length,
                                       uint32_t is_last);

#endif
