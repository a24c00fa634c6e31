// Counts the bytes a process allocates off the V8 heap: every malloc, calloc, realloc (growth),
// posix_memalign, aligned_alloc and memalign, whoever calls them (Node's ArrayBuffer allocator,
// so every Buffer's backing store; socket reads; libuv; V8's own zones). Preloaded by
// bench/allocation.mjs (LD_PRELOAD), which compiles it with `cc -shared -fPIC -O2`. The running
// totals live in a file MALLOC_COUNT_DIR/<pid> mapped shared: 8 bytes of bytes allocated, then 8
// of calls, native-endian, read from outside the process at any moment without disturbing it.
// Frees are not counted: a byte allocated, freed and allocated again counts twice, like the V8
// heap's allocated bytes (bench/gc-signal.cjs).
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static uint64_t before_mapped[2];
static uint64_t *counts = before_mapped;

static inline void count(size_t bytes) {
  __atomic_fetch_add(&counts[0], bytes, __ATOMIC_RELAXED);
  __atomic_fetch_add(&counts[1], 1, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void map_counts(void) {
  const char *dir = getenv("MALLOC_COUNT_DIR");
  if (!dir) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%d", dir, (int)getpid());
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, 16) != 0) return;
  void *shared = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (shared == MAP_FAILED) return;
  counts = shared;
}

void *malloc(size_t size) {
  count(size);
  return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
  count(n * size);
  return __libc_calloc(n, size);
}

void *realloc(void *ptr, size_t size) {
  size_t old = ptr ? malloc_usable_size(ptr) : 0;
  if (size > old) count(size - old);
  return __libc_realloc(ptr, size);
}

void *memalign(size_t alignment, size_t size) {
  count(size);
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  count(size);
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  count(size);
  void *p = __libc_memalign(alignment, size);
  if (!p) return 12; // ENOMEM
  *out = p;
  return 0;
}
