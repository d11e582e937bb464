// Counts malloc, realloc, posix_memalign and aligned_alloc calls for Benchmarks/compare.sh (LD_PRELOAD).
// The harness reads the count through malloc_count(), found with dlsym.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
static unsigned long long counter = 0;
static void *(*real_malloc)(size_t) = 0;
static void *(*real_calloc)(size_t, size_t) = 0;
static void *(*real_realloc)(void *, size_t) = 0;
static int (*real_posix_memalign)(void **, size_t, size_t) = 0;
static void *(*real_aligned_alloc)(size_t, size_t) = 0;
unsigned long long malloc_count(void) { return counter; }
void *malloc(size_t n) { if (!real_malloc) real_malloc = dlsym(RTLD_NEXT, "malloc"); __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED); return real_malloc(n); }
void *realloc(void *p, size_t n) { if (!real_realloc) real_realloc = dlsym(RTLD_NEXT, "realloc"); __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED); return real_realloc(p, n); }
int posix_memalign(void **p, size_t a, size_t n) { if (!real_posix_memalign) real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign"); __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED); return real_posix_memalign(p, a, n); }
void *aligned_alloc(size_t a, size_t n) { if (!real_aligned_alloc) real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc"); __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED); return real_aligned_alloc(a, n); }
