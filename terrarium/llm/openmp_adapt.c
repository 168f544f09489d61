/* TERRARIUM_OPENMP=adaptive: llama.cpp's threads spin while the cores are free and sleep
 * while other processes want them (docs/voice.md, "How the model's threads wait").
 *
 * LLVM's libomp keeps a parallel region's threads spinning for a "block time" after it
 * ends (fast tokens: the next region finds them awake), but reads KMP_BLOCKTIME once, and
 * kmp_set_blocktime() changes it only for the team of the thread that calls it: the
 * llama.cpp thread that opens a region for every token. This library sits in front of
 * libomp's GOMP_parallel (the entry point the binding, built against libgomp, calls),
 * and before each region applies the block time the server child's watcher asked for
 * (terrarium_blocktime), on that thread; a cheap atomic read when nothing changed.
 *
 * Built by `terrarium models` (or at the first adaptive start) with the system's C
 * compiler: cc -O2 -shared -fPIC openmp_adapt.c -l:libomp.so.5 -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>

extern void kmp_set_blocktime(int msec);

typedef void (*region_fn)(void (*)(void *), void *, unsigned, unsigned);

static atomic_int wanted = -1;  /* the block time asked for (ms); -1: leave it */
static atomic_long regions = 0; /* parallel regions opened: the tests' proof of passage */
static _Thread_local int applied = -2;

void terrarium_blocktime(int msec) { atomic_store(&wanted, msec); }

long terrarium_regions(void) { return atomic_load(&regions); }

void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads, unsigned flags) {
    static region_fn next;
    if (!next) next = (region_fn)dlsym(RTLD_NEXT, "GOMP_parallel");
    int want = atomic_load_explicit(&wanted, memory_order_relaxed);
    if (want >= 0 && want != applied) {
        kmp_set_blocktime(want);
        applied = want;
    }
    atomic_fetch_add_explicit(&regions, 1, memory_order_relaxed);
    next(fn, data, threads, flags);
}
