/*===- kill_in_write.c - SIGKILL in the middle of writing a file ---------===*
 *
 * An LD_PRELOAD library for fault tests: the process kills itself with
 * SIGKILL at a chosen point of the Nth atomic write of a file, as a power
 * cut or the OOM killer would, at a moment a random kill rarely hits.
 *
 *   DPC_KILL_IN_WRITE=SUFFIX:N:POINT
 *
 * A write of a file whose path ends with SUFFIX counts (the temporary file
 * FileWrite.cpp writes before renaming it: "checkpoint.dpcckpt.tmp"). At
 * the Nth such file, POINT is where the process dies:
 *   write   after half its bytes reached the file
 *   fsync   with all bytes written, before fsync
 *   rename  after fsync, before the rename that publishes it
 *   renamed after the rename, before the directory is synced
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char suffix[256];
static long target;
static char point[16];
static long count;
static int lastFd = -1;

static void configure(void) {
  static int done;
  if (done)
    return;
  done = 1;
  const char *spec = getenv("DPC_KILL_IN_WRITE");
  if (!spec || sscanf(spec, "%255[^:]:%ld:%15s", suffix, &target, point) != 3)
    target = 0;
}

static int endsWith(const char *text, const char *end) {
  size_t n = strlen(text), m = strlen(end);
  return n >= m && strcmp(text + n - m, end) == 0;
}

/* Whether `fd` is open on a file whose path ends with the suffix. */
static int isWatched(int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof(path) - 1);
  if (n <= 0)
    return 0;
  path[n] = '\0';
  return endsWith(path, suffix);
}

static void die(void) { raise(SIGKILL); }

ssize_t write(int fd, const void *data, size_t size) {
  static ssize_t (*next)(int, const void *, size_t);
  if (!next)
    next = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  configure();
  if (target > 0 && fd != lastFd && isWatched(fd)) {
    lastFd = fd; /* one count per file, however many writes it takes */
    if (++count == target && strcmp(point, "write") == 0) {
      next(fd, data, size / 2);
      die();
    }
  }
  return next(fd, data, size);
}

int fsync(int fd) {
  static int (*next)(int);
  if (!next)
    next = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  configure();
  if (target > 0 && count == target && strcmp(point, "fsync") == 0 &&
      isWatched(fd))
    die();
  return next(fd);
}

int close(int fd) {
  static int (*next)(int);
  if (!next)
    next = (int (*)(int))dlsym(RTLD_NEXT, "close");
  if (fd == lastFd)
    lastFd = -1;
  return next(fd);
}

int rename(const char *from, const char *to) {
  static int (*next)(const char *, const char *);
  if (!next)
    next = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
  configure();
  int watched = target > 0 && count == target && endsWith(from, suffix);
  if (watched && strcmp(point, "rename") == 0)
    die();
  int result = next(from, to);
  if (watched && strcmp(point, "renamed") == 0)
    die();
  return result;
}
