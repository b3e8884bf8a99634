/* OpenClKernelRunner.c - one GPU kernel call, out of the test's process.
 *
 * The kernel tests run GPU schedules on an OpenCL device (POCL on the CPU
 * machines). POCL compiles kernels with its own LLVM, which must not share
 * a process with Halide's LLVM 14 (their symbols interpose, and POCL
 * crashes inside clang), so OpenClKernelRun.cpp compiles the kernel ahead
 * of time, as tfmc does, links it with this file and runs it here.
 *
 * Usage: runner CALL OUT. CALL holds the buffer count, then per buffer (the
 * kernel's arguments in order, inputs then outputs): type code, bits and
 * whether it is an output (one byte each), the dimension count (int32),
 * per dimension min, extent and stride (int32), the backing array's size
 * and the buffer's offset into it (int64), and the backing bytes. OUT gets
 * every output's backing bytes, in order, after the call. */
#include "HalideRuntime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int kernel_argv(void **args);

enum { kMaxBuffers = 64, kMaxDims = 4 };

static halide_buffer_t buffers[kMaxBuffers];
static halide_dimension_t dims[kMaxBuffers][kMaxDims];
static uint8_t *backing[kMaxBuffers];
static int64_t backing_size[kMaxBuffers];
static int is_output[kMaxBuffers];

static int read_exact(FILE *f, void *to, size_t n) { return fread(to, 1, n, f) == n; }

static int fail(const char *what) {
  fprintf(stderr, "OpenClKernelRunner: %s\n", what);
  return 2;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return fail("usage: runner CALL OUT");
  FILE *call = fopen(argv[1], "rb");
  if (!call)
    return fail("cannot open the call file");
  int32_t count = 0;
  if (!read_exact(call, &count, 4) || count < 1 || count > kMaxBuffers)
    return fail("bad buffer count");
  void *args[kMaxBuffers];
  for (int i = 0; i < count; ++i) {
    uint8_t head[3];
    int32_t rank = 0;
    int64_t size = 0, offset = 0;
    if (!read_exact(call, head, 3) || !read_exact(call, &rank, 4) || rank < 1 || rank > kMaxDims)
      return fail("bad buffer header");
    for (int d = 0; d < rank; ++d) {
      int32_t v[3];
      if (!read_exact(call, v, sizeof v))
        return fail("bad dimension");
      dims[i][d].min = v[0];
      dims[i][d].extent = v[1];
      dims[i][d].stride = v[2];
    }
    if (!read_exact(call, &size, 8) || !read_exact(call, &offset, 8) || size < 0 || offset < 0 ||
        offset > size)
      return fail("bad backing size");
    backing[i] = malloc(size ? size : 1);
    backing_size[i] = size;
    if (!backing[i] || !read_exact(call, backing[i], size))
      return fail("short backing bytes");
    is_output[i] = head[2];
    buffers[i].host = backing[i] + offset;
    buffers[i].type.code = head[0];
    buffers[i].type.bits = head[1];
    buffers[i].type.lanes = 1;
    buffers[i].dimensions = rank;
    buffers[i].dim = dims[i];
    if (!is_output[i])
      buffers[i].flags = halide_buffer_flag_host_dirty;
    args[i] = &buffers[i];
  }
  fclose(call);
  int rc = kernel_argv(args);
  if (rc != 0) {
    fprintf(stderr, "OpenClKernelRunner: the kernel returned %d\n", rc);
    return 1;
  }
  FILE *out = fopen(argv[2], "wb");
  if (!out)
    return fail("cannot open the output file");
  for (int i = 0; i < count; ++i) {
    if (!is_output[i])
      continue;
    if (halide_copy_to_host(NULL, &buffers[i]) != 0)
      return fail("copy to host failed");
    if (fwrite(backing[i], 1, backing_size[i], out) != (size_t)backing_size[i])
      return fail("short write");
  }
  for (int i = 0; i < count; ++i)
    halide_device_free(NULL, &buffers[i]);
  return fclose(out) == 0 ? 0 : fail("cannot close the output file");
}
