// RUN: dpc-opt %s -split-input-file -verify-diagnostics -nn-build-train-step

// expected-error @+1 {{@forward has no nn.param argument: nothing to train}}
func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"}) -> tensor<?x4xf32> {
  %0 = nn.relu %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{argument 1 of @forward is not marked nn.input, nn.param or nn.buffer}}
func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32>) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func private @helper(tensor<?x3xf32>) -> tensor<?x3xf32>

func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32> {nn.param = "w"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  // expected-error @+1 {{'func.call' op is not differentiable, so no training step can be built through it}}
  %1 = func.call @helper(%0) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}

// -----

// expected-error @+1 {{no func.func @forward to build a training step from}}
module {
  func.func @model(%x: tensor<?x4xf32> {nn.input = "x"}) -> tensor<?x4xf32> {
    return %x : tensor<?x4xf32>
  }
}

// -----

// A weight given as a data input (batched): the next layer's gradient has
// the batch in its shape. One diagnostic, not an abort in the update op's
// type inference.
// expected-error @+1 {{the gradient of parameter 'w2' is 'tensor<10x?xf32>', not the parameter's 'tensor<10x6xf32>' (does the batch reach its shape?)}}
func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"}, %w1: tensor<?x4xf32> {nn.input = "w1"}, %b1: tensor<6xf32> {nn.param = "b1"}, %w2: tensor<10x6xf32> {nn.param = "w2"}) -> tensor<?x10xf32> {
  %0 = nn.linear %x, %w1, %b1 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<6xf32>) -> tensor<?x?xf32>
  %1 = nn.linear %0, %w2 : (tensor<?x?xf32>, tensor<10x6xf32>) -> tensor<?x10xf32>
  return %1 : tensor<?x10xf32>
}
