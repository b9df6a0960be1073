// RUN: dpc-opt %s -split-input-file -verify-diagnostics -schedule-exec-streams

// An all-reduce with no compute kernel before it has nothing to wait for.
exec.step "train_step" device(0) batch(2) arena(64) {
  %0 = exec.arena[0] : memref<4xf32>
  // expected-error @below {{communicates a value no kernel computed}}
  exec.kernel "AllReduce" ins(%0 : memref<4xf32>) {op = "sum"}
}
