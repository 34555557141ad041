// Why a C interposer: Swift has no hook for every allocation the runtime and stdlib make; glibc
// has removed __malloc_hook. Defining malloc in the test executable catches all of them.
// The counters are thread-local (initial-exec TLS of the executable, which never allocates),
// so tests running in parallel on other threads do not disturb each other.
#include "CAllocationCounter.h"
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int counting;
static __thread uint64_t count;

void facekit_alloc_counter_start(void) { count = 0; counting = 1; }
uint64_t facekit_alloc_counter_stop(void) { counting = 0; return count; }

static inline void note(void) { if (counting) count++; }

void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t a, size_t n) { note(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { note(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    note();
    void *p = __libc_memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
