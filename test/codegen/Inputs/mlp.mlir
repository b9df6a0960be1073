// The model the codegen pass tests start from: a two-layer MLP, as
// data-parallel.mlir's. make-inputs.sh lowers it pass by pass.
func.func @forward(%x: tensor<?x3x2x2xf32> {nn.input = "x"},
                   %w1: tensor<16x12xf32> {nn.param = "fc1.weight"},
                   %b1: tensor<16xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<3x16xf32> {nn.param = "fc2.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.flatten %x : (tensor<?x3x2x2xf32>) -> tensor<?x12xf32>
  %1 = nn.linear %0, %w1, %b1 : (tensor<?x12xf32>, tensor<16x12xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = nn.relu %1 : tensor<?x16xf32>
  %3 = nn.linear %2, %w2 : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}
